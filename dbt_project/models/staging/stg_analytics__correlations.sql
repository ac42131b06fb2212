select symbol_a, symbol_b, correlation, observations
from {{ source('analytics', 'correlations') }}
