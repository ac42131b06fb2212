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
* :func:`replay_league` - ``arena league replay DIR --from DATE --seasons N``: N historical
  seasons one after another, each a replay (:func:`arena.app.replay.replay`) in its own lake
  of the league starting where the last ended, then the league's publication. Run again, it
  resumes: a season replayed and published is kept, one cut short is replayed on from its
  recorded cycles (nothing traded twice), the missing ones follow.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from filelock import FileLock

from arena.app.effects import INLINE, Effects
from arena.app.publish import PUBLISH_LOCK, build_errors
from arena.app.replay import ReplayPlan, replay
from arena.core.errors import BadArgument
from arena.data.lake import Lake
from arena.pipeline.league import (
    LeagueSeason,
    init_league_season,
    next_start,
    read_league,
    season_folder,
)
from arena.pipeline.league_marts import LeagueBuild, build_league
from arena.pipeline.season_config import (
    LIVE,
    REPLAY,
    SeasonConfig,
    make_season,
    new_season_id,
)


@dataclass(frozen=True)
class LeagueInit:
    """The season started in the league: its lake, its config and the season it follows (None
    for the league's first)."""

    lake: Lake
    config: SeasonConfig
    previous: LeagueSeason | None


def init_next(league: str | Path, *, start: dt.date | None = None, days: int,
              symbols: tuple[str, ...] | list[str], providers: Mapping[str, str],
              roster: str | None = None, now: Any = None, sectors: bool = False,
              **season: Any) -> LeagueInit:
    """Start the league's next season (see the module docstring): ``start`` is needed for the
    league's first season only (later, a start after the previous season's end leaves a gap);
    ``season``: the rest of :func:`arena.pipeline.season_config.make_season`'s settings (id,
    seed, timeouts, dask, candles, blind); ``sectors``: a blind season's prompts show sectors."""
    one_day(days)
    first, cycle_hour, previous = next_start(league, start)
    if cycle_hour is not None:
        season["cycle_hour"] = cycle_hour
    config = make_season(first, days, symbols, mode=LIVE, providers=providers,
                         follows=None if previous is None else previous.id, **season)
    lake, written = init_league_season(league, config, roster=roster, now=now, sectors=sectors)
    return LeagueInit(lake, written, previous)


def one_day(days: int) -> None:
    """:class:`BadArgument` for a league season of one day: its window is its first cycle to
    its last, and the next season starts at that last cycle, so one day would start the next
    season where this one starts."""
    if days < 2:
        raise BadArgument(f"--days must be at least 2 in a league, not {days}: the next season "
                          "starts at this one's last cycle")


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


@dataclass(frozen=True)
class LeagueReplayPlan:
    """What ``arena league replay`` plays: ``seasons`` historical seasons of ``days`` each,
    the first from ``start``, every one a replay of ``season`` (the roster, the assets, the
    synthetic market's seed, the luck tables' players, the candles' layout: its ``start`` and
    ``days`` are the league's to set)."""

    start: dt.date
    seasons: int
    season: ReplayPlan

    def check(self) -> None:
        if self.seasons < 1:
            raise BadArgument(f"--seasons must be at least 1, not {self.seasons}")
        self.season.check()
        one_day(self.season.days)


@dataclass
class LeagueReplay:
    """A league replayed: the seasons kept from an earlier run, the ones played by this one,
    and the league's publication (its verdict)."""

    kept: list[str]
    played: list[str]
    build: LeagueBuild


def replay_league(league: str | Path, plan: LeagueReplayPlan, *, env: Mapping[str, str],
                  effects: Effects = INLINE, verdict_seasons: str = "clean",
                  on_season: Callable[[int, int, Lake], None] | None = None) -> LeagueReplay:
    """Replay the ``plan``'s seasons into the league at ``league`` and publish it (see the
    module docstring); ``on_season`` hears of each season before it plays (its number, the
    count, its lake); ``verdict_seasons``: the seasons the verdict reads
    (:data:`~arena.pipeline.league_marts.SELECTIONS`)."""
    plan.check()
    root = Path(league)
    kept, played = [], []
    for number in range(1, plan.seasons + 1):
        held = read_league(root) if root.exists() else []
        season = _season_to_play(root, held, number, plan)
        if isinstance(season, str):
            kept.append(season)
            continue
        lake, step = season
        if on_season:
            on_season(number, plan.seasons, lake)
        replay(lake, step, env=env, effects=effects)
        played.append(lake.root.name)
    return LeagueReplay(kept, played, publish(root, effects, seasons=verdict_seasons))


def _season_to_play(root: Path, held: list[LeagueSeason], number: int, plan: LeagueReplayPlan
                    ) -> str | tuple[Lake, ReplayPlan]:
    """The league's season ``number`` (from 1): its id when an earlier run replayed and
    published it, else its lake and what to replay there (resuming what a run cut short left).
    A league holding a live season, or starting elsewhere than ``plan.start``, is refused."""
    if held and held[0].config.start != plan.start:
        raise BadArgument(f"the league {root} starts {held[0].config.start}, not {plan.start}: "
                          "give its own --from to resume it, or another folder")
    if number <= len(held):
        season = held[number - 1]
        if season.config.mode != REPLAY:
            raise BadArgument(f"the league {root} holds the live season {season.id!r}: replay "
                              "historical seasons into a league of their own")
        if season.config.providers != plan.season.providers:
            raise BadArgument(f"the league {root} replayed season {season.id!r} from "
                              f"{' and '.join(season.config.sources)}: resume it on the same "
                              "market (--drop for recorded bars, none for the synthetic one)")
        if season.config.blind != plan.season.blind:
            raise BadArgument(f"the league {root} replayed season {season.id!r} "
                              f"{'blind' if season.config.blind else 'open'}: resume it "
                              f"{'with' if season.config.blind else 'without'} --blind")
        if season.counted:
            return season.id
        start, follows, lake = season.config.start, season.config.follows, season.lake
    else:
        start, _hour, previous = next_start(root, plan.start if not held else None)
        follows = previous.id if previous is not None else None
        lake = Lake(season_folder(root, new_season_id(start, plan.season.providers, REPLAY)))
    return lake, replace(plan.season, start=start, follows=follows)
