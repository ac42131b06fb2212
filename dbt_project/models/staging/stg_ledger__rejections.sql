with

source as (

    select * from {{ source('ledger', 'rejections') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        round,
        decision_index,
        action,
        symbol,
        code,
        message
    from source

)

select * from renamed
