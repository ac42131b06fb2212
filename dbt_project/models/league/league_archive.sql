{{ config(materialized='table', schema='marts', tags=['league']) }}
-- The league's archive in headline figures, one row over its counted seasons (ended and
-- published): how many seasons, contestants and models played, how many trades they made (round
-- trips: a position from its open until fully closed - adds and partial closes belong to it -,
-- never the fills, shown beside), and the share of contestant-seasons that ended positive.
-- The rulers (house rules) are the yardstick and count in none of these figures. One row always,
-- zeros and a null share before any season counts.
with

counted as (
    select season_id, first_cycle, last_cycle
    from {{ source('league', 'seasons') }}
    where counted
),

played as (
    select season_id, contestant, model, total_return, fills
    from {{ ref('league_results') }}
    where counted and role = 'contestant'
),

trips as (
    select t.status
    from {{ source('league', 'trades') }} as t
    inner join played as p using (season_id, contestant)
)

select
    (select count(*) from counted) as seasons,
    (select min(first_cycle) from counted) as first_cycle,
    (select max(last_cycle) from counted) as last_cycle,
    (select count(distinct contestant) from played) as contestants,
    (select count(distinct model) from played) as models,
    (select count(*) from played) as contestant_seasons,
    (select count(*) filter (where total_return > 0) from played) as positive_seasons,
    (select count(*) filter (where total_return > 0) / nullif(count(*), 0) from played)
        as positive_share,
    (select count(*) from trips) as trades,
    (select count(*) filter (where status = 'closed') from trips) as closed_trades,
    (select coalesce(sum(fills), 0) from played) as fills
