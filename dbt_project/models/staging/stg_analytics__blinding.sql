with

source as (

    select * from {{ source('analytics', 'blinding') }}

),

renamed as (

    select
        symbol,
        neutral_name,
        price_factor,
        shift_weeks,
        sectors_shown
    from source

)

select * from renamed
