with

source as (

    select * from {{ source('analytics', 'contest_assets') }}

),

renamed as (

    select
        contest,
        symbol,
        name,
        cast(ordinal as integer) as ordinal,
        fee_rate,
        eligibility,
        cast(prizes as double[]) as prizes,
        prize_pool,
        currency,
        max_correlation
    from source

)

select * from renamed
