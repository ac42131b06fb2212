-- Round trips: a position from its open until fully closed (adds and partial closes belong to
-- it; arena/scoring/metrics.py). Prices are volume-weighted over the entries / the exits; the
-- reasoning reference is the ledger key of the decision that opened (and closed) the trip: the
-- cycle, round and decision index, or for an automatic close its monitor window's end.
with fills as (
    select * from {{ ref('int_positions_folded') }} where event = 'fill'
),

trips as (
    select
        contestant,
        symbol,
        trip,
        any_value(side) filter (where kind = 'open') as side,
        min(filled_at) filter (where kind = 'open') as opened_at,
        max(filled_at) filter (where kind = 'close') as last_exit_at,
        sum(trade_quantity) filter (where kind <> 'close') as quantity,
        sum(trade_quantity * trade_price) filter (where kind <> 'close') as entry_notional,
        sum(trade_quantity) filter (where kind = 'close') as exit_quantity,
        sum(trade_quantity * trade_price) filter (where kind = 'close') as exit_notional,
        sum(fee) as fees,
        sum(realised_pnl) as gross_pnl,
        count(*) as fills,
        count(*) filter (where kind = 'add') as adds,
        count(*) filter (where kind = 'close') as exits,
        arg_max(quantity, symbol_event) as quantity_left,
        arg_max(automatic, symbol_event) filter (where kind = 'close') as last_exit_automatic,
        any_value(cycle_at) filter (where kind = 'open') as entry_cycle_at,
        any_value(round) filter (where kind = 'open') as entry_round,
        any_value(decision_index) filter (where kind = 'open') as entry_decision_index,
        any_value(thesis) filter (where kind = 'open') as thesis,
        -- the last close's keys taken together (arg_max of one column would skip its nulls and
        -- mix an earlier close's cycle with a later monitor close)
        arg_max({'cycle_at': cycle_at, 'round': round, 'decision_index': decision_index,
                 'window_end': case when source = 'monitor' then effective_at end},
                symbol_event) filter (where kind = 'close') as exit_key
    from fills
    group by contestant, symbol, trip
),

closed as (
    -- a trip is closed once nothing of it is held
    select *, quantity_left = 0 as is_closed
    from trips
),

final as (
    select
        contestant || '/' || symbol || '/' || trip as trade_id,
        contestant,
        symbol,
        trip,
        side,
        case when is_closed then 'closed' else 'open' end as status,
        opened_at,
        case when is_closed then last_exit_at end as closed_at,
        case when is_closed
             then date_diff('second', opened_at, last_exit_at) / 86400.0 end as holding_days,
        quantity,
        -- volume-weighted over the entries / the exits
        entry_notional / quantity as entry_price,
        exit_notional / exit_quantity as exit_price,
        fees,
        gross_pnl,
        gross_pnl - fees as net_pnl,
        case
            when quantity_left > 0 then null
            when last_exit_automatic then 'automatic'
            else 'decision'
        end as closed_by,
        fills,
        adds,
        exits,
        entry_cycle_at,
        entry_round,
        entry_decision_index,
        thesis,
        exit_key.cycle_at as exit_cycle_at,
        exit_key.round as exit_round,
        exit_key.decision_index as exit_decision_index,
        exit_key.window_end as exit_window_end
    from closed
)

select * from final
