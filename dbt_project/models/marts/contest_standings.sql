-- Per entrant and asset of the season's contest: the asset's single-asset track (the
-- asset_tracks numbers), whether it cleared the asset's luck ceiling, and its prize. Places are
-- the eligible tracks' ranks by return (1 = best, ties share a place); tracks tied at a place
-- share, equally, the prizes of the places they take together (two tracks tied first share the
-- first and second prizes): the rule of arena/pipeline/contest.py, prizes_by_place. No rows
-- when the season is not a contest.
with

assets as (

    select * from {{ ref('stg_analytics__contest_assets') }}

),

tracks as (

    select
        t.*,
        count(*) over (partition by t.symbol, t.rank_among_entrants) as tied
    from {{ ref('stg_analytics__asset_tracks') }} as t
    inner join assets as a using (symbol)

)

select
    a.contest,
    t.entrant,
    t.symbol,
    a.name,
    a.ordinal,
    t.status,
    t.total_return,
    t.luck_percentile,
    t.rank_score,
    t.coverage,
    t.eligible,
    t.rank_among_entrants as place,
    case when t.rank_among_entrants is not null then t.tied end as tied,
    t.luck_ceiling,
    t.zero_skill_players,
    coalesce(t.eligible and t.total_return > t.luck_ceiling, false) as cleared,
    case
        when t.rank_among_entrants is null then 0.0
        else coalesce(list_sum(list_slice(a.prizes, t.rank_among_entrants,
                                          t.rank_among_entrants + t.tied - 1)), 0.0) / t.tied
    end as prize,
    a.currency,
    a.fee_rate
from tracks as t
inner join assets as a using (symbol)
