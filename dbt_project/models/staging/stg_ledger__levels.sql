select cycle_at, contestant, round, decision_index, symbol, invalidation_price
from {{ source('ledger', 'levels') }}
