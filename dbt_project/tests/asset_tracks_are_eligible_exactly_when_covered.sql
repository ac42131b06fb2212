-- A single-asset track is eligible exactly when it is scored and a valid position covered at
-- least its eligibility share of the season's window (70%, or its contest's); an ineligible one
-- keeps its numbers but has no rank.
select entrant, symbol, status, coverage, eligibility_share, eligible, rank_among_entrants
from {{ ref('asset_tracks') }}
where (eligible and not (coverage >= eligibility_share))
   or eligible <> (status = 'scored' and coverage >= eligibility_share)
   or eligible <> (rank_among_entrants is not null)
