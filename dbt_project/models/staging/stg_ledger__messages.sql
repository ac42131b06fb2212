select cycle_at, contestant, seq, role, chars, content, prompt_sha256, prompt_offset
from {{ source('ledger', 'messages') }}
