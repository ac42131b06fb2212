with

source as (

    select * from {{ source('analytics', 'season') }}

),

renamed as (

    select
        provider,
        market,
        season_start,
        season_end,
        cycles,
        arena_players,
        asset_players,
        seed,
        arena_rejections,
        start_cash,
        assets_without_luck_tables
    from source

)

select * from renamed
