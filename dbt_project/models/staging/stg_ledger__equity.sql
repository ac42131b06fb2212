with

source as (

    select * from {{ source('ledger', 'equity') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        cash,
        equity,
        fees_paid,
        realised_pnl,
        positions
    from source

)

select * from renamed
