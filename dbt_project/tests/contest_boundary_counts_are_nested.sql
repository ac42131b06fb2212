-- Per contest asset: the tracks that cleared the luck ceiling are eligible ones, the eligible
-- are entrants' tracks, and a leader past the ceiling means a track cleared it.
select symbol, entrants, eligible_tracks, cleared_tracks, leader_cleared
from {{ ref('contest_boundary') }}
where cleared_tracks > eligible_tracks
   or eligible_tracks > entrants
   or (leader_cleared and cleared_tracks = 0)
   or (eligible_tracks > 0) <> (leaders is not null)
