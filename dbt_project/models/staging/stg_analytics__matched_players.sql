with

source as (

    select * from {{ source('analytics', 'matched_players') }}

),

renamed as (

    select
        unit,
        player,
        final_return
    from source

)

select * from renamed
