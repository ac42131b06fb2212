with

source as (

    select * from {{ source('analytics', 'reference_rules') }}

),

renamed as (

    select
        symbol,
        rule,
        kind,
        "return" as total_return,
        turnover,
        fees,
        percentile,
        rank_score,
        cast(rank as integer) as rank_among_rules,
        status,
        cast(history_bars as integer) as history_bars,
        cast(needed_bars as integer) as needed_bars
    from source

)

select * from renamed
