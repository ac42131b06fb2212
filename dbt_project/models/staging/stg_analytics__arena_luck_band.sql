with

source as (

    select * from {{ source('analytics', 'arena_luck_band') }}

),

renamed as (

    select
        cycle_at,
        q05,
        q25,
        q50,
        q75,
        q95
    from source

)

select * from renamed
