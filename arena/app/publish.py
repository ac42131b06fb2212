"""The publish job, and the report job.

:func:`publish` rebuilds a season's luck and rules tables, dbt marts and season report from the
cycles recorded so far (:func:`arena.pipeline.live.publish_season`): the cycle job calls it after
a cycle every contestant played (:func:`publish_after_cycle`: 2,000 zero-skill players per asset;
after the season's last cycle 20,000, and the season closes), the nightly deployment at full size
and then copies the lake to its mirror. A live season has its marts and report from its first
cycle on.

:func:`report` writes the season report from the published marts; a lake whose marts were never
built is told which command builds them (a live season's, a replay's, or none).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pandas as pd
from filelock import FileLock

from arena.app.effects import INLINE, Effects
from arena.app.handle import SeasonHandle
from arena.core.errors import ArenaError, Failed, UnusableInput
from arena.data.lake import Lake, is_disk_error
from arena.data.persistence import upload_lake
from arena.pipeline.live.publish import LIVE_PLAYERS, PublishError, publish_season
from arena.pipeline.season import SeasonOutputs
from arena.pipeline.season_config import REPLAY, find_season
from arena.reporting.season import SEASON_FILE, ReportError, write_season_report
from arena.scoring.asset_luck import DEFAULT_PLAYERS

MARTS_DIR = "marts"


@dataclass
class Publication:
    """A publication of the season so far, or why there is none: ``not_yet`` (nothing to
    publish yet) or ``error`` (it failed; after a cycle, the cycle is recorded all the same)."""

    season: str
    players: int
    closed: bool = False
    outputs: SeasonOutputs | None = None
    not_yet: str | None = None
    error: ArenaError | None = None
    mirrored: list[str] = field(default_factory=list)  # what was copied to the mirror

    @property
    def report(self) -> Path | None:
        return None if self.outputs is None else self.outputs.report


class PublishFailed(Failed):
    """The season's tables, marts or report could not be built or written (dbt, DuckDB, a
    file); the previous publication stays as it was."""


PUBLISH_LOCK = "_locks/publish.lock"  # beside the writer lock (never mirrored)


@contextmanager
def build_errors() -> Iterator[None]:
    """Inside, what DuckDB or a file raises while the tables, marts and report are built is a
    :class:`PublishFailed` (a full or read-only disk stays what it is: the edge names it)."""
    try:
        yield
    except duckdb.Error as exc:
        raise PublishFailed(f"DuckDB: {type(exc).__name__}: {exc}") from exc
    except OSError as exc:
        if is_disk_error(exc):
            raise
        raise PublishFailed(f"{type(exc).__name__}: {exc}") from exc


def publish(handle: SeasonHandle, *, players: int | None = None, final: bool = False,
            mirror: str | None = None, effects: Effects = INLINE) -> Publication:
    """Publish the season so far (``players`` zero-skill players per asset: 2,000, or 20,000
    for the ``final`` publication, which closes the season); then copy the lake to ``mirror``
    while the effects' ``hold`` keeps the season's writers out. A season that cannot be published yet (no
    cycle; a final publication before the last cycle) says why in ``not_yet``, and its lake is
    still copied to the mirror. Two publications of one lake never build at once: the second
    waits for the first (``<lake>/_locks/publish.lock``), then publishes what is recorded by then.
    A build that fails raises :class:`PublishFailed` (or the stage's own
    :class:`~arena.core.errors.Failed`)."""
    count = players or (DEFAULT_PLAYERS if final else LIVE_PLAYERS)
    out = Publication(handle.id, count, final)
    lock = handle.lake.root / PUBLISH_LOCK
    lock.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(lock)), build_errors():
            out.outputs = publish_season(handle.lake, handle.config, players=count, final=final,
                                         now=effects.clock(), invoke=effects.invoke,
                                         runner=effects.runner, ledger=handle.ledger,
                                         progress=effects.progress)
    except PublishError as exc:
        out.closed, out.not_yet = False, str(exc)
    if mirror:
        with effects.hold():
            out.mirrored = upload_lake(handle.lake, mirror)
    return out


def publish_after_cycle(handle: SeasonHandle, at: pd.Timestamp, players: int | None,
                        effects: Effects) -> Publication:
    """The publication after the cycle at ``at``: at full size, closing the season, after its
    last cycle. Never raises an :class:`~arena.core.errors.ArenaError`: the cycle is recorded,
    and the publication's ``not_yet`` or ``error`` says why there is none."""
    try:
        return publish(handle, players=players, final=at == handle.config.last, effects=effects)
    except ArenaError as exc:
        return Publication(handle.id, players or LIVE_PLAYERS, error=exc)


class NoMarts(UnusableInput):
    """The lake's marts were never built: the message gives the command that builds them."""


def report(lake: Lake, out: Path | None = None) -> Path:
    """Write the season report of ``lake`` from its published marts (to ``out``, default
    ``<lake>/reports/season.html``); its path."""
    if not (lake.root / MARTS_DIR).is_dir():
        season = find_season(lake)
        if season is None:
            how = (f"the lake {lake.root} holds no season: replay one (arena replay --lake "
                   f"{lake.root} ...) or start one (arena season init --lake {lake.root} ...)")
        elif season.mode == REPLAY:
            how = (f"replay the season again to build them (arena replay --lake {lake.root} "
                   "..., or arena demo for the demo's lake)")
        else:
            how = (f"season {season.id!r} publishes them after each cycle; build them now with "
                   f"arena season publish --lake {lake.root}")
        raise NoMarts(f"{lake.root / MARTS_DIR} does not exist: build the marts first; {how}")
    try:
        return write_season_report(lake, out)
    except ReportError as exc:  # the marts are there but cannot make a report: rebuild them
        raise NoMarts(str(exc)) from exc


__all__ = ["SEASON_FILE", "NoMarts", "Publication", "PublishFailed", "publish",
           "publish_after_cycle", "report"]
