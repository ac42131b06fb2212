{{ config(materialized='table', schema='marts', tags=['league']) }}
-- One row per model (a contestant, or a replicated model's instances together): its places among
-- its matched players over the league's counted seasons combined into one test of "no skill",
-- with the verdict and what its seasons could detect in words (computed by
-- arena/scoring/verdict.py when the league is published).
select
    model,
    role,
    instances,
    seasons,
    seasons_without_positions,
    players,
    first_season,
    last_season,
    median_skill_percentile,
    stouffer_z,
    p_value,
    normal_p_value,
    fisher_statistic,
    fisher_p_value,
    holm_p_value,
    bh_p_value,
    family_size,
    family_skill_share,
    power_at_90,
    edge_flagged_half,
    edge_flagged_80,
    verdict,
    in_words,
    method,
    null_hypothesis,
    seasons_read,
    seasons_contaminated
from {{ source('league', 'verdict') }}
order by role, p_value, model
