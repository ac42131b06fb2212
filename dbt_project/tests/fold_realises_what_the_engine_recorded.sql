-- Every close realises, in the SQL fold, the P&L the engine recorded on the fill.
select contestant, symbol, symbol_event, realised_pnl, recorded_realised_pnl
from {{ ref('int_positions_folded') }}
where event = 'fill' and abs(realised_pnl - recorded_realised_pnl) > {{ var('cent') }}
