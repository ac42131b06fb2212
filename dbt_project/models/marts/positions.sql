-- Open positions per contestant after each cycle of the season, marked to market at the cycle's
-- prices: the last folded state of each (contestant, symbol) by then, when something is held.
with latest as (
    select
        g.contestant,
        g.cycle_at,
        f.symbol,
        arg_max(f, f.symbol_event) as state
    from {{ ref('int_season_cycles_listed') }} as g
    inner join {{ ref('int_positions_folded') }} as f
        on f.contestant = g.contestant and f.effective_at <= g.cycle_at
    group by g.contestant, g.cycle_at, f.symbol
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
