select player, final_return
from {{ source('analytics', 'arena_luck') }}
