-- Every recorded cycle of the season (whatever its outcome) has its point on the contestant's
-- equity curve.
select o.contestant, o.cycle_at
from {{ ref('stg_ledger__outcomes') }} as o
left join {{ ref('equity_daily') }} as e using (contestant, cycle_at)
where e.cycle_at is null
  and o.cycle_at between (select min(cycle_at) from {{ ref('stg_analytics__cycle_prices') }})
                     and (select max(cycle_at) from {{ ref('stg_analytics__cycle_prices') }})
