-- Per contestant: what its model calls cost and how its answers fared (tokens, cost and whether
-- the calls carry a price, latency, queue, retries, rejections, repair outcomes, and its cycles by
-- outcome: traded, no_trade, forfeited, skipped - see arena.engine.outcomes). Money in USD, times
-- in seconds.
with calls as (
    select
        contestant,
        count(*) as calls,
        cast(sum(tokens_in) as bigint) as tokens_in,
        cast(sum(tokens_out) as bigint) as tokens_out,
        sum(cost_usd) filter (where model <> 'entrant/inbox') as cost_usd,
        count(*) filter (where {{ answered_model_call('model', 'error') }}) as answered_calls,
        count(cost_usd) filter (where {{ answered_model_call('model', 'error') }}) as priced_calls,
        avg(latency_s) as mean_latency_s,
        quantile_cont(latency_s, 0.95) as p95_latency_s,
        max(queue_s) as max_queue_s,
        cast(sum(retries) as bigint) as retries,
        count(*) filter (where error is not null) as failed_calls
    from {{ ref('stg_ledger__calls') }}
    group by contestant
),

cycles as (
    select
        contestant,
        count(*) as cycles,
        count(*) filter (where status = 'traded') as traded,
        count(*) filter (where status = 'no_trade') as no_trade,
        count(*) filter (where status = 'forfeited') as forfeited,
        count(*) filter (where status = 'skipped') as skipped,
        count(*) filter (where parse_error_answer is not null) as unparsable_answers,
        count(*) filter (where repaired) as repair_rounds,
        count(*) filter (
            where repaired and status in ('traded', 'no_trade') and parse_error_repair is null
        ) as repairs_succeeded,
        cast(sum(n_rejections) as bigint) as rejections,
        cast(sum(n_fills) as bigint) as cycle_fills
    from {{ ref('stg_ledger__outcomes') }}
    group by contestant
)

select
    y.contestant,
    y.cycles,
    y.traded,
    y.no_trade,
    y.forfeited,
    y.skipped,
    coalesce(c.calls, 0) as calls,
    coalesce(c.tokens_in, 0) as tokens_in,
    coalesce(c.tokens_out, 0) as tokens_out,
    c.cost_usd,
    {{ call_pricing('c.answered_calls', 'c.priced_calls') }} as pricing,
    c.cost_usd / y.cycles as cost_per_cycle_usd,
    c.mean_latency_s,
    c.p95_latency_s,
    c.max_queue_s,
    coalesce(c.retries, 0) as retries,
    coalesce(c.failed_calls, 0) as failed_calls,
    y.rejections,
    y.cycle_fills,
    y.unparsable_answers,
    y.repair_rounds,
    y.repairs_succeeded
from cycles as y
left join calls as c using (contestant)
