-- Fold of fills equals positions: each open position's quantity is what its trip's opens and
-- adds bought minus what its closes sold, up to that cycle (a plain sum, no recursion).
with flows as (
    select
        p.contestant, p.cycle_at, p.symbol, p.quantity,
        sum(case when f.kind = 'close' then -f.trade_quantity else f.trade_quantity end) as net
    from {{ ref('positions') }} as p
    inner join {{ ref('int_positions_folded') }} as f
        on f.contestant = p.contestant and f.symbol = p.symbol and f.trip = p.trip
        and f.event = 'fill' and f.effective_at <= p.cycle_at
    group by p.contestant, p.cycle_at, p.symbol, p.quantity
)
select * from flows where abs(quantity - net) > 1e-9 * greatest(1.0, abs(quantity))
