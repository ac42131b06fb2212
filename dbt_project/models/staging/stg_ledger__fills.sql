-- Fills of the decision cycles. Fold order inside a cycle: the answer round, then the repair
-- round; inside a round, the fills in execution order (seq).
with

source as (

    select * from {{ source('ledger', 'fills') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        round,
        seq,
        "at" as filled_at,
        symbol,
        side,
        kind,
        quantity,
        price,
        notional,
        fee,
        realised_pnl,
        decision_index,
        automatic,
        invalidation_price,
        thesis,
        invalidation
    from source

)

select * from renamed
