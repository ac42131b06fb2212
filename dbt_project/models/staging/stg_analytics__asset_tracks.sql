with

source as (

    select * from {{ source('analytics', 'asset_tracks') }}

),

renamed as (

    select
        entrant,
        symbol,
        status,
        season_start,
        season_end,
        first_submitted_at,
        grid,
        cast(bars as integer) as bars,
        "return" as total_return,
        turnover,
        fees,
        coverage,
        eligibility as eligibility_share,
        eligible,
        percentile as luck_percentile,
        rank_score,
        cast(rank as integer) as rank_among_entrants,
        cast(players as integer) as zero_skill_players,
        cast(seed as integer) as seed,
        cost_rate,
        ceiling as luck_ceiling
    from source

)

select * from renamed
