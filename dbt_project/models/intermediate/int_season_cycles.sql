-- Every contestant at every cycle of the season from its first record on.
with cycles as (
    select distinct cycle_at from {{ ref('stg_analytics__cycle_prices') }}
),

firsts as (
    select contestant, min(cycle_at) as first_cycle
    from {{ ref('stg_ledger__outcomes') }}
    group by contestant
)

select f.contestant, c.cycle_at
from firsts as f
inner join cycles as c on c.cycle_at >= f.first_cycle
