-- zero_skill_band_by_contestant holds every point of every equity curve (equity_daily) at a cycle
-- of the zero-skill band exactly once, with that curve's equity and the band's quantiles of that
-- cycle, and its sides are what its numbers say: above_q95 exactly when the equity is strictly
-- above the band's 95th percentile, below_q95 exactly when strictly below it, below_q05 when
-- strictly below the 5th (null without equity). A point dropped or repeated by a join, a number
-- taken from another cycle or contestant, or a side that disagrees with the numbers fails.
with expected as (
    select e.contestant, e.cycle_at, e.equity, b.q05_equity, b.q95_equity
    from {{ ref('equity_daily') }} as e
    inner join {{ ref('zero_skill_band') }} as b using (cycle_at)
),

got as (
    select * from {{ ref('zero_skill_band_by_contestant') }}
),

counted as (
    select contestant, cycle_at, count(*) as n
    from got
    group by contestant, cycle_at
)

select x.contestant, x.cycle_at, 'missing or repeated' as problem
from expected as x
left join counted as c using (contestant, cycle_at)
where coalesce(c.n, 0) <> 1

union all

select g.contestant, g.cycle_at, 'not the curve or the band of its cycle' as problem
from got as g
left join expected as x using (contestant, cycle_at)
where x.contestant is null
   or g.equity is distinct from x.equity
   or g.q05_equity is distinct from x.q05_equity
   or g.q95_equity is distinct from x.q95_equity

union all

select contestant, cycle_at, 'a side its numbers do not give' as problem
from got
where above_q95 is distinct from (equity > q95_equity)
   or below_q95 is distinct from (equity < q95_equity)
   or below_q05 is distinct from (equity < q05_equity)
