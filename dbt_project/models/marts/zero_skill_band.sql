-- The arena's zero-skill players' equity after each cycle, in USD: the band contestants are read
-- against (SPEC §5, portfolio-level luck: players of the arena's own rules, random actions within
-- the validator's limits, on every asset). Not the per-asset luck ceilings (asset_luck_ceilings:
-- returns of single-asset players, fractions). zero_skill_band_by_contestant sets each
-- contestant's equity beside it, cycle by cycle.
select
    b.cycle_at,
    cast(b.cycle_at as date) as day,
    b.q05 as q05_equity,
    b.q25 as q25_equity,
    b.q50 as q50_equity,
    b.q75 as q75_equity,
    b.q95 as q95_equity,
    s.arena_players as players
from {{ ref('stg_analytics__arena_luck_band') }} as b
cross join {{ ref('stg_analytics__season') }} as s
