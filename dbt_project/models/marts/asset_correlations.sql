-- Pairwise correlation of the tradable assets' daily returns (SPEC §5: a season's assets should be
-- weakly correlated).
select symbol_a, symbol_b, correlation, observations
from {{ ref('stg_analytics__correlations') }}
