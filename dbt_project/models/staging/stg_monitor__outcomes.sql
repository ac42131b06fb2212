select window_start, window_end, contestant, n_fills, checked, unobserved, errors
from {{ source('monitor', 'outcome') }}
