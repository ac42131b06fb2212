with

source as (

    select * from {{ source('analytics', 'cycle_prices') }}

),

renamed as (

    select
        cycle_at,
        symbol,
        price,
        printed_at
    from source

)

select * from renamed
