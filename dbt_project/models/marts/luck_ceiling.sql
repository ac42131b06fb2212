-- Per asset: the zero-skill distribution over the season's actual path - players, quantiles,
-- the luck ceiling (95th percentile) and the grid it was simulated on. Read within an asset only:
-- tail shapes differ across assets (SPEC §5).
select
    l.symbol,
    u.name,
    l.asset_class,
    s.season_start,
    s.season_end,
    l.grid,
    l.bars,
    l.decision_steps,
    l.step,
    l.draw,
    l.players,
    l.seed,
    l.cost_rate,
    l.q05,
    l.q25,
    l.q50,
    l.q75,
    l.q95,
    l.mean,
    l.ceiling
from {{ ref('stg_analytics__luck_ceiling') }} as l
inner join {{ ref('universe') }} as u using (symbol)
cross join {{ ref('stg_analytics__season') }} as s
