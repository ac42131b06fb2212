with

source as (

    select * from {{ source('monitor', 'fills') }}

),

renamed as (

    select
        window_start,
        window_end,
        contestant,
        seq,
        "at" as filled_at,
        symbol,
        side,
        kind,
        quantity,
        price,
        notional,
        fee,
        realised_pnl,
        automatic,
        invalidation_price
    from source

)

select * from renamed
