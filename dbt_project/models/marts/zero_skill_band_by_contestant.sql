-- Per contestant (rulers included) and cycle: its equity after the cycle beside the arena's
-- zero-skill band at that cycle (zero_skill_band), and on which side of the band's 95th and 5th
-- percentiles it was - how often the zero-skill 95th percentile was above a contestant is
-- avg(below_q95::int) over its rows. A cycle the band does not reach has no row. Equity and the
-- band are USD, returns fractions. Ties with a quantile are on neither side (strict comparisons):
-- at the first cycle most players are still at the start cash, and so is a contestant that holds.
with band as (
    select * from {{ ref('zero_skill_band') }}
),

curves as (
    select contestant, cycle_at, equity from {{ ref('equity_daily') }}
),

roles as (
    select contestant, role from {{ ref('leaderboard') }}
)

select
    c.contestant,
    r.role,
    c.cycle_at,
    b.day,
    c.equity,
    c.equity / {{ var('start_cash') }} - 1 as cumulative_return,
    b.q05_equity,
    b.q25_equity,
    b.q50_equity,
    b.q75_equity,
    b.q95_equity,
    c.equity > b.q95_equity as above_q95,
    c.equity < b.q95_equity as below_q95,
    c.equity < b.q05_equity as below_q05,
    b.players
from curves as c
inner join band as b using (cycle_at)
left join roles as r using (contestant)
order by c.contestant, c.cycle_at
