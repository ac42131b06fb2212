with

source as (

    select * from {{ source('analytics', 'arena_luck') }}

),

renamed as (

    select
        player,
        final_return
    from source

)

select * from renamed
