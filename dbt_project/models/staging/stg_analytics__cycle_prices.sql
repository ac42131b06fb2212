select cycle_at, symbol, price, printed_at
from {{ source('analytics', 'cycle_prices') }}
