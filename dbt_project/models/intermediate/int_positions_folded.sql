{{ config(materialized='table') }}
-- The engine's portfolio fold (arena/engine/portfolio.py) in SQL, one (contestant, symbol) chain
-- at a time: the state of the position after each event, and the cash the event moved.
--   open   a new position at the fill price; cash pays notional + fee
--   add    entry re-weighted by quantity over what is held now; cash pays notional + fee
--   close  realises side x quantity x (price - entry) on the closed part; cash receives the
--          closed cost (long) or collateral (short) plus that P&L, minus the fee; a remainder
--          within 1e-12 of the held quantity is fully closed (the engine's tolerance)
--   level  moves the invalidation level; no money
-- The P&L is recomputed here, not read from the ledger, so the fold is checked independently.
with recursive

events as (

    select * from {{ ref('int_ledger_events_unioned') }}

),

fold as (

    select
        contestant, symbol, symbol_event, effective_at, source, event, kind, filled_at, automatic,
        cycle_at, round, decision_index,
        side,
        quantity,
        quantity as trade_quantity,
        price as trade_price,
        fee,
        price as entry_price,
        filled_at as opened_at,
        invalidation_price,
        coalesce(thesis, '') as thesis,
        1 as trip,
        -(quantity * price) - fee as cash_delta,
        cast(0 as double) as realised_pnl,
        recorded_realised_pnl
    from events
    where symbol_event = 1

    union all

    select
        n.contestant, n.symbol, n.symbol_event, n.effective_at, n.source, n.event, n.kind, n.filled_at,
        n.automatic, n.cycle_at, n.round, n.decision_index,
        case when n.kind = 'open' then n.side else f.side end,
        case
            when n.event = 'level' then f.quantity
            when n.kind = 'open' then n.quantity
            when n.kind = 'add' then f.quantity + n.quantity
            when f.quantity - least(n.quantity, f.quantity) <= f.quantity * 1e-12 then 0.0
            else f.quantity - least(n.quantity, f.quantity)
        end,
        n.quantity,
        n.price,
        n.fee,
        case
            when n.kind = 'open' then n.price
            when n.kind = 'add' then (f.quantity * f.entry_price + n.quantity * n.price)
                                     / (f.quantity + n.quantity)
            else f.entry_price
        end,
        case when n.kind = 'open' then n.filled_at else f.opened_at end,
        case
            when n.event = 'level' or n.kind in ('open', 'add') then n.invalidation_price
            else f.invalidation_price
        end,
        case
            when n.kind = 'open' then coalesce(n.thesis, '')
            when n.kind = 'add' and coalesce(n.thesis, '') <> '' then n.thesis
            else f.thesis
        end,
        case when n.kind = 'open' then f.trip + 1 else f.trip end,
        case
            when n.event = 'level' then cast(0 as double)
            when n.kind in ('open', 'add') then -(n.quantity * n.price) - n.fee
            else least(n.quantity, f.quantity) * f.entry_price
                 + {{ side_sign('f.side') }}
                   * least(n.quantity, f.quantity) * (n.price - f.entry_price)
                 - n.fee
        end,
        case
            when n.kind = 'close' then {{ side_sign('f.side') }}
                                       * least(n.quantity, f.quantity) * (n.price - f.entry_price)
            else cast(0 as double)
        end,
        n.recorded_realised_pnl
    from fold as f
    inner join events as n
        on n.contestant = f.contestant
        and n.symbol = f.symbol
        and n.symbol_event = f.symbol_event + 1

)

select * from fold
