"""The season published so far: its tables, marts and report rebuilt from the recorded cycles;
the final publication closes the season."""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd

from arena.core.errors import UnusableInput
from arena.core.runner import INLINE, Runner
from arena.data.lake import Lake, write_text
from arena.ledger.store import Ledger
from arena.pipeline.live.closed import CLOSED
from arena.pipeline.season import SeasonOutputs, finish_season
from arena.pipeline.season_config import (
    SEASON_DIR,
    SeasonConfig,
)
from arena.pipeline.warehouse import Invoke

LIVE_PLAYERS = 2_000  # zero-skill players per asset after each cycle (the nightly build: more)


class PublishError(UnusableInput, RuntimeError):
    """The season's tables, marts and report cannot be built (no cycle yet, or a final
    publication before the last cycle)."""


def publish_season(lake: Lake, season: SeasonConfig, *, players: int = LIVE_PLAYERS,
                   final: bool = False, now: pd.Timestamp | None = None,
                   invoke: Invoke | None = None, runner: Runner = INLINE,
                   ledger: Ledger | None = None,
                   progress: Callable[[str], None] | None = None) -> SeasonOutputs:
    """The season so far as analysts read it: its luck and rules tables (``players`` per asset),
    the dbt marts and the season report, from the cycles recorded until now - the same steps
    as the end of a replay. ``final``: after the season's last cycle, the season closes
    (no further cycle is accepted; :func:`closed_at`)."""
    recorded = sorted({k.cycle_at for k in (ledger or Ledger(lake)).records()})
    if not recorded:
        raise PublishError(f"season {season.id!r} has no recorded cycle yet: its tables, marts "
                           "and report follow its first cycle")
    if final and recorded[-1] < season.last:
        raise PublishError(f"season {season.id!r} cannot close before its last cycle "
                           f"({season.last.isoformat()}; the last recorded is "
                           f"{recorded[-1].isoformat()})")
    times = sorted({t for t in season.times if t <= recorded[-1]} | set(recorded))
    out = finish_season(lake, season.market, season.universe(), times, players=players,
                        quiet=True, invoke=invoke, runner=runner, progress=progress)
    if final:
        stamp_ = (now or pd.Timestamp.now(tz="UTC")).isoformat()
        write_text(lake.root / SEASON_DIR / CLOSED, json.dumps(
            {"season": season.id, "closed_at": stamp_, "last_cycle": recorded[-1].isoformat(),
             "players": players}, indent=2) + "\n")
    return out
