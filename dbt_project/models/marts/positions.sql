-- Open positions per contestant after each cycle of the season, marked to market at the cycle's
-- prices: the last folded state of each (contestant, symbol) by then, when something is held.
with latest as (
    select
        g.contestant,
        g.cycle_at,
        f.symbol,
        arg_max(f, f.symbol_event) as state
    from {{ ref('int_season_cycles') }} as g
    inner join {{ ref('int_position_fold') }} as f
        on f.contestant = g.contestant and f.effective_at <= g.cycle_at
    group by g.contestant, g.cycle_at, f.symbol
)

select
    l.contestant,
    l.cycle_at,
    cast(l.cycle_at as date) as day,
    l.symbol,
    l.state.side as side,
    l.state.quantity as quantity,
    l.state.entry_price as entry_price,
    l.state.opened_at as opened_at,
    l.state.trip as trip,
    l.state.invalidation_price as invalidation_price,
    l.state.thesis as thesis,
    m.mark_price,
    l.state.quantity * l.state.entry_price as cost,
    (case when l.state.side = 'long' then 1 else -1 end)
        * l.state.quantity * (m.mark_price - l.state.entry_price) as unrealised_pnl,
    l.state.quantity * l.state.entry_price
        + (case when l.state.side = 'long' then 1 else -1 end)
          * l.state.quantity * (m.mark_price - l.state.entry_price) as market_value
from latest as l
left join {{ ref('int_marks') }} as m
    on m.cycle_at = l.cycle_at and m.symbol = l.symbol
where l.state.quantity > 0
