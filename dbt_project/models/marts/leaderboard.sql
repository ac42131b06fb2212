-- One row per contestant for the season (SPEC §4): return, Sharpe, drawdown, win rate, fills,
-- excess returns over BTC, SPY and the equal-weighted universe, the place among the arena's
-- zero-skill players (the luck percentile: long or short 50/50, so it includes the market's
-- direction), the place among its own matched players (the skill percentile: its book with the
-- assets relabelled at random, so direction and exposure are held fixed), and what the model
-- calls cost (and whether they carry a price: pricing). Returns, rates and percentiles are
-- fractions (0.05 = 5%), never percent; money is USD.
-- role tells a contestant (a model, an agent built on one, an outside entrant, a house strategy
-- with changed parameters or marked role: contestant) from a ruler (one of the arena's own rules
-- at its defaults: the yardstick, played beside them under the same rules): the contestants are
-- placed among themselves, 1..n; a ruler keeps its row and has no place (arena/reporting/roles.py).
-- market says whose prices the season was played on: SYNTHETIC (the embedded default's
-- invented prices) or the real provider's name, as arena/pipeline/season_tables.py labels the season.
-- The equity series starts with the season-start mark (the start cash at the first cycle,
-- before its trades): it is the first peak and the base of the first daily return; benchmarks
-- are bought at the first cycle's prices and marked at the last cycle's.
with season as (
    select min(cycle_at) as first_cycle, max(cycle_at) as last_cycle
    from {{ ref('stg_analytics__cycle_prices') }}
),

last_equity as (
    -- the equity after the season's last cycle itself (null if unmarked: never an older value)
    select e.contestant, max(e.equity) filter (where e.cycle_at = s.last_cycle) as final_equity,
           count(*) as cycles, count(*) filter (where e.equity is null) as unmarked_cycles
    from {{ ref('equity_daily') }} as e
    cross join season as s
    group by e.contestant
),

final_returns as (
    -- the season's return of each contestant, computed once: the board, the excess returns and
    -- the place among the zero-skill players all read it
    select *, final_equity / {{ var('start_cash') }} - 1 as total_return
    from last_equity
),

returns as (
    select
        contestant,
        avg(daily_return - {{ per_period_rate(var('risk_free_rate'), var('periods_per_year')) }})
            as mean_excess,
        stddev_samp(daily_return) as volatility,
        count(daily_return) as n_returns,
        max(drawdown) as max_drawdown
    from {{ ref('equity_daily') }}
    group by contestant
),

trips as (
    select
        contestant,
        count(*) filter (where status = 'closed') as round_trips,
        count(*) filter (where status = 'closed' and net_pnl > 0) as winning_trips,
        cast(sum(fills) as bigint) as fills,
        count(*) filter (where closed_by = 'automatic') as automatic_closes
    from {{ ref('trades') }}
    group by contestant
),

window_prices as (
    -- each symbol's mark at the first and at the last cycle (no later first price for an asset
    -- that had none at the start: it is left out, as arena/scoring/metrics.py does)
    select
        p.symbol,
        max(p.mark_price) filter (where p.cycle_at = s.first_cycle) as first_price,
        max(p.mark_price) filter (where p.cycle_at = s.last_cycle) as last_price
    from {{ ref('int_cycle_prices_marked') }} as p
    cross join season as s
    group by p.symbol
),

window_returns as (
    -- each symbol's return over the season, bought at its first mark and marked at its last
    select symbol, last_price / first_price - 1 as window_return
    from window_prices
    where first_price > 0 and last_price is not null
),

benchmarks as (
    select
        max(w.window_return) filter (where w.symbol = 'BTC') as btc_return,
        max(w.window_return) filter (where w.symbol = 'SPY') as spy_return,
        avg(w.window_return) filter (where u.tradable) as universe_return
    from window_returns as w
    inner join {{ ref('universe') }} as u using (symbol)
),

luck as (
    select count(*) as players from {{ ref('stg_analytics__arena_luck') }}
),

market as (
    select market from {{ ref('stg_analytics__season') }}
),

placed as (
    select
        e.contestant,
        (count(*) filter (where z.final_return < e.total_return)
         + 0.5 * count(*) filter (where z.final_return = e.total_return))
            / any_value(l.players) as zero_skill_percentile
    from final_returns as e
    cross join {{ ref('stg_analytics__arena_luck') }} as z
    cross join luck as l
    group by e.contestant
),

skill as (
    -- the place among the contestant's matched players: its own book with the assets relabelled
    -- at random (arena/scoring/matched.py); null unless its book is scored
    select
        e.contestant,
        b.status as skill_status,
        b.players as skill_players,
        {{ skill_percentile('e.total_return', 'm.final_return', 'b.status', 'b.players') }}
            as skill_percentile
    from final_returns as e
    inner join {{ ref('stg_analytics__matched_books') }} as b
        on b.unit = e.contestant and b.unit_kind = 'contestant'
    left join {{ ref('stg_analytics__matched_players') }} as m on m.unit = b.unit
    group by e.contestant, b.status, b.players
),

costs as (
    -- an outside entrant's submissions are read from its inbox: a row each, not a model call;
    -- the cost sums the calls that carry a price, and pricing says whether every answered call
    -- does (macros/pricing.sql)
    select contestant,
           sum(cost_usd) filter (where model <> 'entrant/inbox') as cost_usd,
           count(*) filter (where {{ answered_model_call('model', 'error') }}) as answered_calls,
           count(cost_usd) filter (where {{ answered_model_call('model', 'error') }})
               as priced_calls,
           cast(sum(tokens_in) as bigint) as tokens_in,
           cast(sum(tokens_out) as bigint) as tokens_out,
           count(*) filter (where model <> 'entrant/inbox') as calls,
           bool_or(model = 'entrant/inbox') as outside_entrant,
           -- a ruler records each answer as a call of model house/<strategy>, exactly (a house
           -- variant's label names its parameters: house/momentum(entry_lookback=10), a contestant)
           bool_or(regexp_full_match(model, 'house/[a-z_]+')) as house_rule,
           -- an instance of a replicated model entry names it in every call (older records: null)
           max(replicate_of) as replicate_of
    from {{ ref('stg_ledger__calls') }}
    group by contestant
),

windows as (
    -- where each contestant's window starts: the season's first cycle, or a later one for a
    -- contestant added mid-season (an outside entrant joins with its first submission)
    select contestant, min(cycle_at) as first_cycle_at
    from {{ ref('stg_ledger__outcomes') }}
    group by contestant
),

board as (
    select
        e.contestant,
        case when coalesce(c.house_rule, false) then 'ruler' else 'contestant' end as role,
        m.market,
        e.cycles,
        e.final_equity,
        e.total_return,
        case
            when r.n_returns >= 2 and r.volatility > 1e-12
            then r.mean_excess / r.volatility * sqrt({{ var('periods_per_year') }})
        end as sharpe,
        r.max_drawdown,
        t.winning_trips / nullif(t.round_trips, 0) as win_rate,
        coalesce(t.fills, 0) as fills,
        coalesce(t.round_trips, 0) as round_trips,
        coalesce(t.automatic_closes, 0) as automatic_closes,
        e.total_return - b.btc_return as excess_vs_btc,
        e.total_return - b.spy_return as excess_vs_spy,
        e.total_return - b.universe_return as excess_vs_universe,
        p.zero_skill_percentile,
        -log10(1 - least(p.zero_skill_percentile, l.players / (l.players + 1.0))) as rank_score,
        l.players as zero_skill_players,
        k.skill_percentile,
        k.skill_players,
        coalesce(k.skill_status, 'no_trades') as skill_status,
        coalesce(c.calls, 0) as model_calls,
        coalesce(c.tokens_in, 0) as tokens_in,
        coalesce(c.tokens_out, 0) as tokens_out,
        c.cost_usd,
        {{ call_pricing('c.answered_calls', 'c.priced_calls') }} as pricing,
        case when {{ call_pricing('c.answered_calls', 'c.priced_calls') }} = 'priced'
             then (e.final_equity - {{ var('start_cash') }}) / nullif(c.cost_usd, 0)
        end as pnl_per_call_dollar,
        e.unmarked_cycles,
        coalesce(c.outside_entrant, false) as outside_entrant,
        kn.knowledge_cutoff,
        coalesce(kn.contaminated, false) as contaminated,
        coalesce(kn.contamination, 'not in the season''s roster copy: no model known')
            as contamination,
        w.first_cycle_at,
        c.replicate_of
    from final_returns as e
    inner join returns as r using (contestant)
    left join trips as t using (contestant)
    left join placed as p using (contestant)
    left join skill as k using (contestant)
    left join costs as c using (contestant)
    left join windows as w using (contestant)
    left join {{ ref('stg_analytics__knowledge') }} as kn using (contestant)
    cross join benchmarks as b
    cross join luck as l
    cross join market as m
)

select
    case
        when role = 'contestant' then rank() over (partition by role order by total_return desc)
    end as place,
    *
from board
