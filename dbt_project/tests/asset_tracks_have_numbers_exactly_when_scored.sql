-- A single-asset track has a return, a place among the players and a ceiling exactly when it is
-- scored; the percentile is a share in [0, 1] (well inside [0, 100]), coverage a share too,
-- and a track without bars (too_short, no_bars) states no coverage.
select entrant, symbol, status, total_return, luck_percentile, coverage
from {{ ref('asset_tracks') }}
where (status = 'scored') <> (total_return is not null)
   or (status = 'scored') <> (luck_percentile is not null)
   or (status = 'scored') <> (rank_score is not null)
   or (status = 'scored') <> (zero_skill_players is not null)
   or (status = 'scored') <> (luck_ceiling is not null)
   or (status = 'scored') <> (turnover is not null and fees is not null)
   or luck_percentile < 0 or luck_percentile > 1
   or rank_score < 0
   or coverage < 0 or coverage > 1
   or (status in ('scored', 'no_position')) <> (coverage is not null)
   or (status = 'no_position' and coverage <> 0)
   or (status = 'scored' and coverage <= 0)
