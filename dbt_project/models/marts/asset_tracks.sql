-- Per outside entrant and asset: the single-asset track as a contest of its own. The track's
-- return over the season's window (its first cycle to the last one built), its place among
-- 20,000 zero-skill players of the asset on the same path (whenever the entrant joined), the
-- share of the window a valid position covered, and its rank among the asset's eligible
-- tracks. A track without a score says why in status, its numbers null.
select
    t.entrant,
    t.symbol,
    u.name,
    u.asset_class,
    t.season_start,
    t.season_end,
    t.status,
    t.first_submitted_at,
    t.grid,
    t.bars,
    t.total_return,
    t.turnover,
    t.fees,
    t.coverage,
    t.eligibility_share,
    t.eligible,
    t.luck_percentile,
    t.rank_score,
    t.rank_among_entrants,
    t.zero_skill_players,
    t.seed,
    t.cost_rate,
    t.luck_ceiling,
    t.total_return > t.luck_ceiling as beats_luck_ceiling
from {{ ref('stg_analytics__asset_tracks') }} as t
left join {{ ref('universe') }} as u using (symbol)
