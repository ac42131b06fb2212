-- Every matched player of every contestant and replicated model, with where the unit itself
-- landed among them (arena/scoring/matched.py): its book - positions, sides, sizes, timing,
-- holding periods, fees - with the assets relabelled by the player's random permutation. Player
-- d relabels the same way in every season of a league, so a league's verdict on skill reads
-- these returns season by season (arena/pipeline/league_marts.py). Fractions, not percent.
select
    b.unit,
    b.unit_kind,
    b.instances,
    p.player,
    p.final_return,
    b.own_return as unit_return,
    p.final_return < b.own_return as below_unit
from {{ ref('stg_analytics__matched_books') }} as b
inner join {{ ref('stg_analytics__matched_players') }} as p using (unit)
order by b.unit, p.player
