-- A contest asset pays, over its tracks, exactly the prizes of the places its eligible tracks
-- take (ties share but never add or lose money): the first `eligible_tracks` prizes summed,
-- never more than the pool; an ineligible track earns nothing.
select b.symbol, b.eligible_tracks, b.prize_paid, b.prize_pool
from {{ ref('contest_boundary') }} as b
where abs(b.prize_paid - coalesce(list_sum(list_slice(b.prizes, 1, b.eligible_tracks)), 0.0))
        > 1e-9
   or b.prize_paid > b.prize_pool + 1e-9
union all
select s.symbol, null, s.prize, null
from {{ ref('contest_standings') }} as s
where (not s.eligible and s.prize <> 0) or s.prize < 0
