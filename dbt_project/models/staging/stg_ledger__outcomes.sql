select
    cycle_at,
    contestant,
    status,
    repaired,
    prompt_sha256,
    prompt_chars,
    n_calls,
    n_fills,
    n_rejections,
    parse_error_answer,
    parse_error_repair,
    errors
from {{ source('ledger', 'outcome') }}
