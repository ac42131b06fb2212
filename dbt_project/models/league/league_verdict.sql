{{ config(materialized='table', schema='marts', tags=['league']) }}
-- One row per model (a contestant, or a replicated model's instances together): its luck
-- percentiles over the league's counted seasons combined into one test of "no skill", with the
-- verdict in words (computed by arena/scoring/verdict.py when the league is published).
select
    model,
    role,
    instances,
    seasons,
    draws,
    first_season,
    last_season,
    stouffer_z,
    p_value,
    fisher_statistic,
    fisher_p_value,
    holm_p_value,
    family_size,
    verdict,
    method
from {{ source('league', 'verdict') }}
order by role, p_value, model
