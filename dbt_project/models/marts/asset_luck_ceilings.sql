-- Per asset: the zero-skill distribution of returns over the season's actual path (SPEC §5) -
-- players, return quantiles, the asset's luck ceiling (their 95th percentile) and the grid it
-- was simulated on. Every return is a fraction of the starting equity (0.05 = +5%), not percent
-- and not USD: the players hold a position in [-1, +1] of the asset, never a cash amount. Read
-- within an asset only: tail shapes differ across assets. Not the arena's band: that is
-- zero_skill_band (the arena's zero-skill players' equity in USD after each cycle).
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
    l.q05 as q05_return,
    l.q25 as q25_return,
    l.q50 as q50_return,
    l.q75 as q75_return,
    l.q95 as q95_return,
    l.mean as mean_return,
    l.ceiling as luck_ceiling
from {{ ref('stg_analytics__luck_ceiling') }} as l
inner join {{ ref('universe') }} as u using (symbol)
cross join {{ ref('stg_analytics__season') }} as s
