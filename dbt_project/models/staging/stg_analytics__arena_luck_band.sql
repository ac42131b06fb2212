select cycle_at, q05, q25, q50, q75, q95
from {{ source('analytics', 'arena_luck_band') }}
