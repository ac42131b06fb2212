with

source as (

    select * from {{ source('ledger', 'levels') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        round,
        decision_index,
        symbol,
        invalidation_price
    from source

)

select * from renamed
