-- A single-asset track is eligible exactly when it is scored and a valid position covered at
-- least 70% of the season's window; an ineligible one keeps its numbers but has no rank.
select entrant, symbol, status, coverage, eligible, rank_among_entrants
from {{ ref('asset_tracks') }}
where (eligible and not (coverage >= {{ var('track_eligible_share', 0.7) }}))
   or eligible <> (status = 'scored' and coverage >= {{ var('track_eligible_share', 0.7) }})
   or eligible <> (rank_among_entrants is not null)
