-- The lake's candles (every provider and interval), labelled by their open time (UTC).
with

source as (

    select * from {{ source('lake', 'bars') }}

),

renamed as (

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
    from source

)

select * from renamed
