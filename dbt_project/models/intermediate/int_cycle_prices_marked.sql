-- The price every symbol is marked at after each cycle: its cycle price, or its last earlier one.
with

cycle_prices as (

    select * from {{ ref('stg_analytics__cycle_prices') }}

),

cycles as (

    select distinct cycle_at from cycle_prices

),

symbols as (

    select distinct symbol from cycle_prices

),

grid as (

    select c.cycle_at, s.symbol
    from cycles as c
    cross join symbols as s

),

marked as (

    select
        g.cycle_at,
        g.symbol,
        last_value(p.price ignore nulls) over (
            partition by g.symbol
            order by g.cycle_at
            rows between unbounded preceding and current row
        ) as mark_price
    from grid as g
    left join cycle_prices as p
        on p.cycle_at = g.cycle_at and p.symbol = g.symbol

)

select * from marked
