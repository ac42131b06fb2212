with

source as (

    select * from {{ source('analytics', 'correlations') }}

),

renamed as (

    select
        symbol_a,
        symbol_b,
        correlation,
        observations
    from source

)

select * from renamed
