{{ config(materialized='table', schema='marts', tags=['league']) }}
-- One row per published season and contestant: the season's return, luck percentile, rank
-- score and skill percentile (as its leaderboard published them), fills, round trips and the profitable ones; the
-- model it is an instance of (replicate_of, else itself); whether the season counts in the
-- league's totals and verdict (ended and published).
with

seasons as (
    select ordinal, season_id, state, counted
    from {{ source('league', 'seasons') }}
    where published
),

boards as (
    select * from {{ source('league', 'leaderboards') }}
),

trips as (
    select
        season_id,
        contestant,
        count(*) filter (where status = 'closed' and net_pnl > 0) as profitable_round_trips
    from {{ source('league', 'trades') }}
    group by season_id, contestant
)

select
    s.ordinal as season_ordinal,
    b.season_id,
    b.contestant,
    coalesce(b.replicate_of, b.contestant) as model,
    b.replicate_of,
    b.role,
    cast(b.place as bigint) as place,
    b.total_return,
    b.zero_skill_percentile,
    (b.skill_percentile * b.skill_players + 0.5) / (b.skill_players + 1)
        as mid_rank_skill_percentile,
    b.rank_score,
    b.zero_skill_players,
    b.skill_percentile,
    b.skill_status,
    cast(b.fills as bigint) as fills,
    cast(b.round_trips as bigint) as round_trips,
    coalesce(t.profitable_round_trips, 0) as profitable_round_trips,
    s.state,
    s.counted
from boards as b
inner join seasons as s using (season_id)
left join trips as t using (season_id, contestant)
order by s.ordinal, b.role, b.place nulls last, b.contestant
