"""The league jobs: a league's next season, its status, and its marts across seasons.

* :func:`init_next` - ``arena season init --league DIR``: the league's next season in a lake of
  its own, ``DIR/<season id>/``, starting where the last one ended (its first cycle is the
  previous season's last; the config records the season it follows), refused while the
  previous season has not ended (:func:`arena.pipeline.league.next_start`).
* :func:`status` - ``arena league status DIR``: every season of the league (id, dates, state,
  cycles, published or not, contestants), in the order they start.
* :func:`publish` - ``arena league publish DIR``: the league's marts over its published seasons
  and the verdict on skill (:mod:`arena.pipeline.league_marts`), into ``DIR/league.duckdb`` and
  ``DIR/marts/``; one publication of a league at a time (``DIR/_locks/publish.lock``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from arena.app.effects import INLINE, Effects
from arena.app.publish import PUBLISH_LOCK, build_errors
from arena.data.lake import Lake
from arena.pipeline.league import (
    LeagueSeason,
    init_league_season,
    next_start,
    read_league,
)
from arena.pipeline.league_marts import LeagueBuild, build_league
from arena.pipeline.season_config import LIVE, SeasonConfig, make_season


@dataclass(frozen=True)
class LeagueInit:
    """The season started in the league: its lake, its config and the season it follows (None
    for the league's first)."""

    lake: Lake
    config: SeasonConfig
    previous: LeagueSeason | None


def init_next(league: str | Path, *, start: dt.date | None = None, days: int,
              symbols: tuple[str, ...] | list[str], providers: Mapping[str, str],
              roster: str | None = None, now: Any = None, **season: Any) -> LeagueInit:
    """Start the league's next season (see the module docstring): ``start`` is needed for the
    league's first season only (later, a start after the previous season's end leaves a gap);
    ``season``: the rest of :func:`arena.pipeline.season_config.make_season`'s settings (id,
    seed, timeouts, dask, candles)."""
    first, cycle_hour, previous = next_start(league, start)
    if cycle_hour is not None:
        season["cycle_hour"] = cycle_hour
    config = make_season(first, days, symbols, mode=LIVE, providers=providers,
                         follows=None if previous is None else previous.id, **season)
    lake, written = init_league_season(league, config, roster=roster, now=now)
    return LeagueInit(lake, written, previous)


@dataclass(frozen=True)
class LeagueStatus:
    """The league's folder and its seasons, in the order they start."""

    root: Path
    seasons: list[LeagueSeason]

    def to_json(self) -> dict[str, object]:
        return {"league": str(self.root), "seasons": [s.to_json() for s in self.seasons]}


def status(league: str | Path) -> LeagueStatus:
    """The league's seasons (:func:`arena.pipeline.league.read_league`)."""
    return LeagueStatus(Path(league), read_league(league))


def publish(league: str | Path, effects: Effects = INLINE, *, seasons: str = "clean"
            ) -> LeagueBuild:
    """Build and publish the league's marts over its published seasons and the verdict on
    skill over the seasons ``seasons`` selects (:data:`~arena.pipeline.league_marts.SELECTIONS`:
    by default every season not contaminated for the model); a second publication of the league
    waits for the first. A build that fails raises
    :class:`~arena.pipeline.warehouse.MartsError` (nothing published) or, for what DuckDB or a
    file raises, :class:`~arena.app.publish.PublishFailed`."""
    root = Path(league)
    read_league(root)  # a folder that is no league is refused before anything is written
    lock = root / PUBLISH_LOCK
    lock.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lock)), build_errors():
        return build_league(root, read_league(root), effects.invoke,
                            progress=effects.progress, selection=seasons)
