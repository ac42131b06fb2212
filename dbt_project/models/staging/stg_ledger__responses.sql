select cycle_at, contestant, round, text, chars, extra, notes, raw_json
from {{ source('ledger', 'responses') }}
