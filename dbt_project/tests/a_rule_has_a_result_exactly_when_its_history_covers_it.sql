-- A reference rule has a result (return, percentile, rank score) exactly when the asset's bars
-- before the season cover its window; one without is insufficient_history and ranks nowhere.
select symbol, rule, status, history_bars, needed_bars, total_return, rank_among_rules
from {{ ref('reference_rules') }}
where (status = 'scored') <> (history_bars >= needed_bars)
   or (status = 'scored') <> (total_return is not null)
   or (status = 'scored') <> (percentile is not null)
   or (status = 'scored') <> (rank_score is not null)
   or (status <> 'scored' and (rank_among_rules is not null or beats_luck_ceiling is not null))
