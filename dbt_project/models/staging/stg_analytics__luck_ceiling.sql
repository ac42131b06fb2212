with

source as (

    select * from {{ source('analytics', 'luck_ceiling') }}

),

renamed as (

    select
        symbol,
        asset_class,
        grid,
        bars,
        decision_steps,
        step,
        draw,
        players,
        seed,
        cost_rate,
        q05,
        q25,
        q50,
        q75,
        q95,
        mean,
        ceiling
    from source

)

select * from renamed
