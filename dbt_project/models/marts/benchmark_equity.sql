-- What start_cash put into each benchmark at the season's first cycle is worth after every cycle:
-- BTC, SPY, and the equal-weighted buy-and-hold of the tradable universe. The same marks as the
-- leaderboard's window returns (int_cycle_prices_marked: a symbol without a price at a cycle
-- keeps its last earlier mark), bought at the first cycle's mark; a symbol without a mark at the
-- first cycle is left out, as leaderboard.sql does. cumulative_return is computed with the
-- leaderboard's own expression (price / first price - 1, averaged over the symbols for the
-- universe), so at the last cycle it equals btc_return / spy_return / universe_return exactly.
with season as (
    select min(cycle_at) as first_cycle
    from {{ ref('stg_analytics__cycle_prices') }}
),

marks as (
    select p.cycle_at, p.symbol, p.mark_price, u.tradable
    from {{ ref('int_cycle_prices_marked') }} as p
    inner join {{ ref('universe') }} as u using (symbol)
),

first_marks as (
    select m.symbol, m.mark_price as first_price
    from marks as m
    cross join season as s
    where m.cycle_at = s.first_cycle and m.mark_price > 0
),

ratios as (
    -- each symbol's mark over its first mark, at every cycle (carried forward: never null once
    -- the symbol has a first mark)
    select m.cycle_at, m.symbol, m.tradable, m.mark_price / f.first_price as ratio
    from marks as m
    inner join first_marks as f using (symbol)
    where m.mark_price is not null
),

benchmarks as (
    select cycle_at, symbol as benchmark, ratio, ratio - 1 as cumulative_return
    from ratios
    where symbol in ('BTC', 'SPY')

    union all

    select cycle_at, 'universe' as benchmark, avg(ratio) as ratio,
           avg(ratio - 1) as cumulative_return
    from ratios
    where tradable
    group by cycle_at
),

final as (
    select
        cycle_at,
        cast(timezone('UTC', cycle_at) as date) as day,
        benchmark,
        {{ var('start_cash') }} * ratio as equity,
        cumulative_return
    from benchmarks
)

select * from final
