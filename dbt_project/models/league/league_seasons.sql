{{ config(materialized='table', schema='marts', tags=['league']) }}
-- One row per season lake of the league, in the order the seasons start: its window, state,
-- cycles, publication, and how it meets the season before it (continues where it ended, a gap,
-- an overlap), and whether it was played blind.
select
    ordinal,
    season_id,
    folder,
    mode,
    start_date,
    days,
    first_cycle,
    last_cycle,
    cycles,
    state,
    ended,
    published,
    counted,
    follows,
    after,
    closed_at,
    contestants,
    rulers,
    blind
from {{ source('league', 'seasons') }}
order by ordinal
