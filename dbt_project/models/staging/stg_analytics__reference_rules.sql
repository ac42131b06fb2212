select symbol, rule, kind, "return" as total_return, turnover, fees, percentile, rank_score,
       cast(rank as integer) as rank_among_rules
from {{ source('analytics', 'reference_rules') }}
