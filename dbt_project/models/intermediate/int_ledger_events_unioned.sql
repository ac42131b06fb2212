{{ config(materialized='table') }}
-- Every event that changes a contestant's book, in the engine's fold order (arena/ledger/store.py):
-- by time; at equal times the monitor window ending then comes before the cycle; inside a
-- cycle the answer round before the repair round, and in a round its fills before its level
-- moves. `effective_at` is the cycle after which the event is part of the book: the cycle
-- itself, or the end of the monitor window that closed the position.
with

cycle_fills as (

    select
        contestant, symbol, 'cycle' as source, 'fill' as event,
        cycle_at as effective_at, cycle_at as order_at, 1 as source_rank,
        case round when 'answer' then 0 else 1 end as round_rank, 0 as level_rank, seq as item,
        filled_at, side, kind, quantity, price, fee, realised_pnl as recorded_realised_pnl,
        automatic, invalidation_price, thesis, cycle_at, round, decision_index
    from {{ ref('stg_ledger__fills') }}

),

monitor_fills as (

    select
        contestant, symbol, 'monitor', 'fill',
        window_end, filled_at, 0,
        0, 0, seq,
        filled_at, side, kind, quantity, price, fee, realised_pnl, automatic,
        invalidation_price, null, null, 'monitor', null
    from {{ ref('stg_monitor__fills') }}

),

level_moves as (

    select
        contestant, symbol, 'cycle', 'level',
        cycle_at, cycle_at, 1,
        case round when 'answer' then 0 else 1 end, 1, decision_index,
        cycle_at, null, null, null, null, cast(0 as double), null, false,
        invalidation_price, null, cycle_at, round, decision_index
    from {{ ref('stg_ledger__levels') }}

),

unioned as (

    select * from cycle_fills
    union all
    select * from monitor_fills
    union all
    select * from level_moves

),

numbered as (

    select
        *,
        row_number() over (
            partition by contestant, symbol
            order by order_at, source_rank, round_rank, level_rank, item
        ) as symbol_event
    from unioned

)

select * from numbered
