{{ config(materialized='table', schema='marts', tags=['league']) }}
-- One row per contestant over the league's counted seasons (ended and published): seasons
-- played, fills, round trips and the share of them that were profitable (pooled over the
-- seasons, not a mean of the seasons' win rates), the mean and median of its seasons' returns,
-- their chained return (each season starts with the same cash; the seasons of a league meet
-- end to start), its mean luck percentile and its mean skill percentile (over the seasons it
-- opened a position), and how many of its seasons ended positive (and their share: the
-- archive's figure per contestant). Its role and model are its latest season's.
with

counted as (
    select * from {{ ref('league_results') }}
    where counted
)

select
    contestant,
    arg_max(model, season_ordinal) as model,
    arg_max(role, season_ordinal) as role,
    count(*) as seasons,
    cast(count(*) filter (where total_return > 0) as bigint) as positive_seasons,
    count(*) filter (where total_return > 0) / count(*) as positive_share,
    arg_min(season_id, season_ordinal) as first_season,
    arg_max(season_id, season_ordinal) as last_season,
    cast(sum(fills) as bigint) as fills,
    cast(sum(round_trips) as bigint) as round_trips,
    cast(sum(profitable_round_trips) as bigint) as profitable_round_trips,
    sum(profitable_round_trips) / nullif(sum(round_trips), 0) as profitable_share,
    avg(total_return) as mean_return,
    median(total_return) as median_return,
    product(1 + total_return) - 1 as chained_return,
    min(total_return) as worst_return,
    max(total_return) as best_return,
    avg(zero_skill_percentile) as mean_zero_skill_percentile,
    avg(rank_score) as mean_rank_score,
    avg(skill_percentile) as mean_skill_percentile,
    count(skill_percentile) as seasons_with_skill_percentile
from counted
group by contestant
order by role, mean_return desc, contestant
