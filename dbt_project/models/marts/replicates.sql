-- One row per replicated model (a roster entry with `replicates: N`, arena/agents/roster.py): its
-- instances played the season as separate contestants, each with its own sampling seed or
-- temperature, and this mart reads them together - the median and the spread of their returns
-- and luck percentiles - beside the zero-skill band at the season's end, so a model is judged by
-- what it does across draws of its sampling, not by one lucky (or unlucky) instance; and its
-- skill percentile, one draw for the model: its instances' mean return among its matched players.
-- Fractions, not percent. Quantiles interpolate linearly between the instances' values
-- (quantile_cont, numpy's default): the median of an even number is the mean of the middle two.
with instances as (
    select contestant, replicate_of, total_return, zero_skill_percentile, rank_score
    from {{ ref('leaderboard') }}
    where replicate_of is not null
),

models as (
    -- the litellm model the instances called (one per replicated entry)
    select replicate_of, min(model) as model
    from {{ ref('stg_ledger__calls') }}
    where replicate_of is not null
    group by replicate_of
),

band as (
    -- the zero-skill players' equity after the season's last cycle, as returns
    select
        q05_equity / {{ var('start_cash') }} - 1 as zero_skill_q05_return,
        q25_equity / {{ var('start_cash') }} - 1 as zero_skill_q25_return,
        q50_equity / {{ var('start_cash') }} - 1 as zero_skill_median_return,
        q75_equity / {{ var('start_cash') }} - 1 as zero_skill_q75_return,
        q95_equity / {{ var('start_cash') }} - 1 as zero_skill_q95_return,
        players as zero_skill_players
    from {{ ref('zero_skill_band') }}
    qualify cycle_at = max(cycle_at) over ()
),

spread as (
    select
        i.replicate_of,
        count(*) as instances,
        avg(i.total_return) as mean_return,
        string_agg(i.contestant, ', ' order by i.contestant) as instance_names,
        quantile_cont(i.total_return, 0.5) as median_return,
        min(i.total_return) as min_return,
        max(i.total_return) as max_return,
        quantile_cont(i.total_return, 0.25) as q25_return,
        quantile_cont(i.total_return, 0.75) as q75_return,
        quantile_cont(i.zero_skill_percentile, 0.5) as median_zero_skill_percentile,
        min(i.zero_skill_percentile) as min_zero_skill_percentile,
        max(i.zero_skill_percentile) as max_zero_skill_percentile,
        count(*) filter (where i.total_return > b.zero_skill_median_return)
            as instances_above_zero_skill_median
    from instances as i
    left join band as b on true
    group by i.replicate_of
),

skill as (
    -- the model is one draw a season: its instances' mean return placed among the means of
    -- matched players that relabel all its instances together (arena/scoring/matched.py), so
    -- instances that agree count as one, whatever their correlation
    select
        s.replicate_of,
        b.status as skill_status,
        b.players as skill_players,
        {{ skill_percentile('s.mean_return', 'p.final_return', 'b.status', 'b.players') }}
            as skill_percentile
    from spread as s
    inner join {{ ref('stg_analytics__matched_books') }} as b
        on b.unit = s.replicate_of and b.unit_kind = 'model'
    left join {{ ref('stg_analytics__matched_players') }} as p on p.unit = b.unit
    group by s.replicate_of, b.status, b.players
)

select
    s.replicate_of,
    m.model,
    s.instances,
    s.instance_names,
    s.median_return,
    s.min_return,
    s.max_return,
    s.max_return - s.min_return as return_range,
    s.q25_return,
    s.q75_return,
    s.q75_return - s.q25_return as return_iqr,
    s.median_zero_skill_percentile,
    s.min_zero_skill_percentile,
    s.max_zero_skill_percentile,
    s.instances_above_zero_skill_median,
    s.mean_return,
    k.skill_percentile,
    k.skill_players,
    coalesce(k.skill_status, 'no_trades') as skill_status,
    b.zero_skill_q05_return,
    b.zero_skill_q25_return,
    b.zero_skill_median_return,
    b.zero_skill_q75_return,
    b.zero_skill_q95_return,
    b.zero_skill_players
from spread as s
left join models as m using (replicate_of)
left join skill as k using (replicate_of)
left join band as b on true
order by s.replicate_of
