"""The status job: what ``arena season status`` shows of a season at a time.

Every cycle of the season (done, partial, failed and retryable, due, missed - and whether a
backfill can still play it - or upcoming), each asset's data freshness by its own calendar, each
contestant's state and roster changes - the contestants first, then the house rules of the
roster as rulers (:mod:`arena.reporting.roles`: told by their kind), and the leading contestant
(never a ruler) -, and the lake's last persistence verdict
(:func:`arena.pipeline.live.season_status`).
"""

from __future__ import annotations

from arena.app.effects import INLINE, Effects
from arena.app.handle import SeasonHandle
from arena.pipeline.live.status import SeasonStatus, season_status
from arena.reporting.roles import RULER, role_of


def status(handle: SeasonHandle, effects: Effects = INLINE) -> SeasonStatus:
    """The season at the clock's time (see the module docstring)."""
    roster = handle.roster()
    return season_status(handle.lake, handle.config, roster.names, effects.clock(),
                         ledger=handle.ledger, attempts=handle.attempts,
                         rulers={s.name for s in roster if role_of(s) == RULER})
