-- The lake's candles (every provider and interval), labelled by their open time (UTC).
select
    provider,
    "interval" as bar_interval,
    symbol,
    "timestamp" as opened_at,
    open,
    high,
    low,
    close,
    volume
from {{ source('lake', 'bars') }}
