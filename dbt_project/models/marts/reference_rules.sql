-- Per asset and rule: the textbook rules and baselines on the season's path, same scorer and
-- costs as the zero-skill players, with their place among them. A rule the asset's history before
-- the season does not cover is insufficient_history: no return, place or rank (nulls).
select
    r.symbol,
    r.rule,
    r.kind,
    r.total_return,
    r.turnover,
    r.fees,
    r.percentile,
    r.rank_score,
    r.rank_among_rules,
    r.total_return > l.ceiling as beats_luck_ceiling,
    r.status,
    r.history_bars,
    r.needed_bars
from {{ ref('stg_analytics__reference_rules') }} as r
inner join {{ ref('stg_analytics__luck_ceiling') }} as l using (symbol)
