-- Open positions per contestant after each cycle of the season, marked to market at the cycle's
-- prices: the last folded state of each (contestant, symbol) by then, when something is held.
-- "Last" is the state of the highest symbol_event effective by the cycle. A state that a later
-- event takes effect no later than is never that one, so it is dropped (superseded); the states
-- left are in effective_at order, and each (cycle, symbol) takes the last of them by an as-of join:
-- the work grows with the cycles and the events, not with their product.
with ranked as (
    select
        *,
        min(effective_at) over (
            partition by contestant, symbol order by symbol_event desc
            rows between unbounded preceding and 1 preceding
        ) as superseded_at
    from {{ ref('int_positions_folded') }}
),

states as (
    select * from ranked
    where superseded_at is null or effective_at < superseded_at
),

grid as (
    select g.contestant, g.cycle_at, s.symbol
    from {{ ref('int_season_cycles_listed') }} as g
    inner join (select distinct contestant, symbol from states) as s
        on s.contestant = g.contestant
),

latest as (
    select
        g.contestant,
        g.cycle_at,
        g.symbol,
        s as state
    from grid as g
    asof inner join states as s
        on s.contestant = g.contestant and s.symbol = g.symbol and s.effective_at <= g.cycle_at
),

held as (
    select
        contestant,
        cycle_at,
        symbol,
        state.side as side,
        state.quantity as quantity,
        state.entry_price as entry_price,
        state.opened_at as opened_at,
        state.trip as trip,
        state.invalidation_price as invalidation_price,
        state.thesis as thesis
    from latest
    where state.quantity > 0
),

marked as (
    select
        h.*,
        m.mark_price,
        h.quantity * h.entry_price as cost,
        {{ side_sign('h.side') }} * h.quantity * (m.mark_price - h.entry_price) as unrealised_pnl
    from held as h
    left join {{ ref('int_cycle_prices_marked') }} as m
        on m.cycle_at = h.cycle_at and m.symbol = h.symbol
),

final as (
    select
        contestant,
        cycle_at,
        cast(cycle_at as date) as day,
        symbol,
        side,
        quantity,
        entry_price,
        opened_at,
        trip,
        invalidation_price,
        thesis,
        mark_price,
        cost,
        unrealised_pnl,
        cost + unrealised_pnl as market_value
    from marked
)

select * from final
