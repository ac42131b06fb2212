select cycle_at, contestant, cash, equity, fees_paid, realised_pnl, positions
from {{ source('ledger', 'equity') }}
