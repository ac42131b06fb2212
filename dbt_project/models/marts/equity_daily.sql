-- Cash, market value, equity and drawdown per contestant after each cycle of the season.
-- cash = start + every cash movement of the fold up to the cycle; equity = cash + market value;
-- drawdown from the running peak, the start cash being the first peak (SPEC §4).
-- The money moved up to a cycle is a running sum over the fold's events in effective order, read
-- at each cycle by an as-of join (the work grows with the cycles and the events, not their product).
with moves as (
    select
        contestant,
        effective_at,
        sum(cash_delta) as cash_delta,
        sum(fee) as fee,
        sum(realised_pnl) as realised_pnl,
        count(event) filter (where event = 'fill') as fills
    from {{ ref('int_positions_folded') }}
    group by contestant, effective_at
),

moved as (
    select
        contestant,
        effective_at,
        sum(cash_delta) over w as cash_delta,
        sum(fee) over w as fee,
        sum(realised_pnl) over w as realised_pnl,
        cast(sum(fills) over w as bigint) as fills
    from moves
    window w as (partition by contestant order by effective_at
                 rows between unbounded preceding and current row)
),

money as (
    select
        g.contestant,
        g.cycle_at,
        {{ var('start_cash') }} + coalesce(m.cash_delta, 0.0) as cash,
        coalesce(m.fee, 0.0) as fees_paid,
        coalesce(m.realised_pnl, 0.0) as realised_pnl,
        coalesce(m.fills, 0) as fills_to_date
    from {{ ref('int_season_cycles_listed') }} as g
    asof left join moved as m
        on m.contestant = g.contestant and m.effective_at <= g.cycle_at
),

book as (
    select contestant, cycle_at, sum(market_value) as market_value, count(*) as positions,
           count(*) filter (where mark_price is null) as unmarked
    from {{ ref('positions') }}
    group by contestant, cycle_at
),

valued as (
    select
        m.contestant,
        m.cycle_at,
        m.cash,
        coalesce(b.market_value, 0.0) as market_value,
        coalesce(b.unmarked, 0) as unmarked,
        coalesce(b.positions, 0) as positions,
        m.fees_paid,
        m.realised_pnl,
        m.fills_to_date
    from money as m
    left join book as b on b.contestant = m.contestant and b.cycle_at = m.cycle_at
),

equity as (
    select
        contestant,
        cycle_at,
        cash,
        market_value,
        -- no equity while a held symbol has no price
        case when unmarked = 0 then cash + market_value end as equity,
        positions,
        fees_paid,
        realised_pnl,
        fills_to_date
    from valued
),

peaks as (
    select
        *,
        -- against the start cash on the first cycle; a missing previous equity gives no return
        case when row_number() over w = 1 then {{ var('start_cash') }}
             else lag(equity) over w end as previous_equity,
        greatest({{ var('start_cash') }},
                 max(equity) over (w rows between unbounded preceding and current row))
            as peak_equity
    from equity
    window w as (partition by contestant order by cycle_at)
),

final as (
    select
        contestant,
        cycle_at,
        cast(cycle_at as date) as day,
        cash,
        market_value,
        equity,
        positions,
        fees_paid,
        realised_pnl,
        fills_to_date,
        equity / previous_equity - 1 as daily_return,
        peak_equity,
        1 - equity / peak_equity as drawdown
    from peaks
)

select * from final
