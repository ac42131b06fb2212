-- The arena zero-skill players' equity after each cycle: the band contestants are read against.
select
    b.cycle_at,
    cast(b.cycle_at as date) as day,
    b.q05,
    b.q25,
    b.q50,
    b.q75,
    b.q95,
    s.arena_players as players
from {{ ref('stg_analytics__arena_luck_band') }} as b
cross join {{ ref('stg_analytics__season') }} as s
