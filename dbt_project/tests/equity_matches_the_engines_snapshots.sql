-- The SQL fold marked at the cycle prices gives, to the cent, the cash, equity, fees, realised P&L
-- and position count the engine recorded after every cycle (arena/ledger/store.py equity table).
select e.contestant, e.cycle_at, e.equity, s.equity as recorded_equity, e.cash, s.cash as recorded_cash
from {{ ref('equity_daily') }} as e
inner join {{ ref('stg_ledger__equity') }} as s using (contestant, cycle_at)
where abs(e.cash - s.cash) > {{ var('cent') }}
   or abs(e.equity - s.equity) > {{ var('cent') }}
   or (e.equity is null) <> (s.equity is null)
   or abs(e.fees_paid - s.fees_paid) > {{ var('cent') }}
   or abs(e.realised_pnl - s.realised_pnl) > {{ var('cent') }}
   or e.positions <> s.positions
union all
-- and no snapshot of the season is left without its row (an empty join would pass the above)
select s.contestant, s.cycle_at, null, s.equity, null, s.cash
from {{ ref('stg_ledger__equity') }} as s
left join {{ ref('equity_daily') }} as e using (contestant, cycle_at)
where e.cycle_at is null
  and s.cycle_at in (select cycle_at from {{ ref('stg_analytics__cycle_prices') }})
