-- The eligible tracks of an asset are ranked among themselves by return: 1 + the eligible
-- tracks of the same asset with a strictly higher return (ties share a place).
select t.entrant, t.symbol, t.rank_among_entrants
from {{ ref('asset_tracks') }} as t
where t.eligible
  and t.rank_among_entrants is distinct from 1 + (
      select count(*)
      from {{ ref('asset_tracks') }} as o
      where o.symbol = t.symbol and o.eligible and o.total_return > t.total_return
  )
