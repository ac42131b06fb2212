select cycle_at, contestant, round, text, chars, extra
from {{ source('ledger', 'responses') }}
