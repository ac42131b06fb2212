select cycle_at, contestant, round, decision_index, action, symbol, code, message
from {{ source('ledger', 'rejections') }}
