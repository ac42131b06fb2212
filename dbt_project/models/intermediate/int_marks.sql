-- The price every symbol is marked at after each cycle: its cycle price, or its last earlier one.
with grid as (
    select c.cycle_at, s.symbol
    from (select distinct cycle_at from {{ ref('stg_analytics__cycle_prices') }}) as c
    cross join (select distinct symbol from {{ ref('stg_analytics__cycle_prices') }}) as s
)

select
    g.cycle_at,
    g.symbol,
    last_value(p.price ignore nulls) over (
        partition by g.symbol order by g.cycle_at rows between unbounded preceding and current row
    ) as mark_price
from grid as g
left join {{ ref('stg_analytics__cycle_prices') }} as p
    on p.cycle_at = g.cycle_at and p.symbol = g.symbol
