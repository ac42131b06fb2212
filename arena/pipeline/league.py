"""A league: season lakes side by side in one folder, each season starting where the last ended.

A league is a folder of season lakes, ``<league>/<season-id>/`` (each an ordinary lake with its
``season/season.json``), beside the league's own outputs: ``dbt/`` (dbt's files and the tables
gathered for it), ``marts/`` and ``league.duckdb`` (published by ``arena league publish``:
:mod:`arena.pipeline.league_marts`) and ``_locks/``. Any other folder in it is refused by name:
a league holds seasons only, so nothing else is read as one.

``arena season init --league DIR`` starts the next season in ``DIR/<its id>/``: its first cycle
is the previous season's last (the same date and cycle hour: the windows of two seasons meet,
so their returns chain), and its config records the season it follows (``follows``). The
previous season must have ended: a live season closed by its final publication (``arena season
publish --final``), a replay played to its last cycle. A later start is allowed (a gap, shown by
the status); an earlier one would overlap the previous season and is refused.

Each season's state (:data:`STATES`): ``open`` (a live season not closed yet), ``closed``,
``replaying`` (a replay not played to its last cycle) and ``replayed``; a season has *ended* when
it is closed or replayed. Only ended, published seasons count in the league's totals and its
verdict on skill; the others are listed.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq

from arena.core.errors import UnusableInput
from arena.data.lake import Lake
from arena.ledger.store import Ledger
from arena.pipeline.live.closed import closed_at
from arena.pipeline.season_config import (
    REPLAY,
    SeasonConfig,
    find_season,
    init_season,
    season_roster,
)
from arena.pipeline.season_files import SEASON_DIR
from arena.reporting.roles import CONTESTANT, RULER, role_of

LEAGUE_DB = "league.duckdb"
MARTS_DIR = "marts"
OWN = frozenset({"dbt", MARTS_DIR, "_locks"})  # the league's own folders, never a season
OPEN, CLOSED, REPLAYING, REPLAYED = "open", "closed", "replaying", "replayed"
STATES = (OPEN, CLOSED, REPLAYING, REPLAYED)
ENDED = frozenset({CLOSED, REPLAYED})
FIRST, CONTINUES, GAP, OVERLAPS = "first", "continues", "gap", "overlaps"


class LeagueError(UnusableInput, ValueError):
    """No league there, a folder in it that is no season, or a next season that cannot start
    (the previous one has not ended; a start before its end)."""


@dataclass(frozen=True)
class LeagueSeason:
    """One season lake of a league: its folder and config, the cycles recorded, when it closed,
    whether its marts are published, its contestants and rulers (the published leaderboard's,
    else its roster's), and how it meets the season before it (:data:`FIRST`,
    :data:`CONTINUES`, :data:`GAP`, :data:`OVERLAPS`)."""

    folder: Path
    config: SeasonConfig
    cycles: int
    last_recorded: pd.Timestamp | None
    closed_at: str | None
    published: bool
    contestants: tuple[str, ...]
    rulers: tuple[str, ...]
    after: str = FIRST

    @property
    def id(self) -> str:
        return self.config.id

    @property
    def lake(self) -> Lake:
        return Lake(self.folder)

    @property
    def state(self) -> str:
        if self.config.mode == REPLAY:
            done = self.last_recorded is not None and self.last_recorded >= self.config.last
            return REPLAYED if done else REPLAYING
        return CLOSED if self.closed_at is not None else OPEN

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    @property
    def counted(self) -> bool:
        """Whether the season counts in the league's totals and verdict: ended and published."""
        return self.ended and self.published

    def to_json(self) -> dict[str, object]:
        return {"season": self.id, "folder": str(self.folder), "mode": self.config.mode,
                "start": self.config.start.isoformat(), "days": self.config.days,
                "first_cycle": self.config.first.isoformat(),
                "last_cycle": self.config.last.isoformat(), "cycles": self.cycles,
                "state": self.state, "closed_at": self.closed_at, "published": self.published,
                "counted": self.counted, "follows": self.config.follows, "after": self.after,
                "blind": self.config.blind, "contestants": list(self.contestants),
                "rulers": list(self.rulers)}


def _people(lake: Lake, published: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(contestants, rulers): the published leaderboard's rows by role, else the roster copy's
    entries by kind."""
    if published:
        board = pq.read_table(lake.root / MARTS_DIR / "leaderboard.parquet").to_pandas()
        roles = board["role"] if "role" in board else pd.Series(CONTESTANT, index=board.index)
        names = list(zip(board["contestant"], roles, strict=True))
    else:
        names = [(s.name, role_of(s)) for s in season_roster(lake)]
    return (tuple(sorted(n for n, r in names if r != RULER)),
            tuple(sorted(n for n, r in names if r == RULER)))


def read_season(folder: Path) -> LeagueSeason:
    """The season lake at ``folder`` as its league sees it; :class:`LeagueError` when the folder
    holds no season."""
    lake = Lake(folder)
    config = find_season(lake)
    if config is None:
        raise LeagueError(
            f"{folder} is not a season lake (no {SEASON_DIR}/season.json): a league folder holds "
            f"season lakes only (and its own {', '.join(sorted(OWN))}/ and {LEAGUE_DB}); move it "
            "out of the league")
    recorded = sorted({k.cycle_at for k in Ledger(lake).records()})
    published = (lake.root / MARTS_DIR / "leaderboard.parquet").is_file()
    contestants, rulers = _people(lake, published)
    return LeagueSeason(folder, config, len(recorded), recorded[-1] if recorded else None,
                        closed_at(lake), published, contestants, rulers)


def _meets(previous: LeagueSeason, season: LeagueSeason) -> str:
    if season.config.first == previous.config.last:
        return CONTINUES
    return GAP if season.config.first > previous.config.last else OVERLAPS


def read_league(root: str | Path) -> list[LeagueSeason]:
    """The seasons of the league at ``root``, in the order they start (then by id), each with
    how it meets the one before; :class:`LeagueError` when ``root`` is no folder or holds a
    folder that is no season (hidden entries, files and the league's own folders are not
    read)."""
    root = Path(root)
    if not root.is_dir():
        what = "is not a folder" if root.exists() else "does not exist"
        raise LeagueError(f"the league {root} {what}: start its first season there with arena "
                          f"season init --league {root} --start DATE")
    if find_season(Lake(root)) is not None:
        raise LeagueError(f"{root} is a season's lake, not a league: a league is a folder that "
                          f"holds season lakes (arena season init --league DIR starts one in it)")
    seasons = sorted((read_season(entry) for entry in root.iterdir()
                      if entry.is_dir() and not entry.name.startswith(".")
                      and entry.name not in OWN),
                     key=lambda s: (s.config.first, s.config.last, s.id))
    out: list[LeagueSeason] = []
    for season in seasons:
        after = FIRST if not out else _meets(out[-1], season)
        out.append(replace(season, after=after))
    return out


def previous_season(seasons: Sequence[LeagueSeason]) -> LeagueSeason | None:
    """The season a new one follows: the one that ends last (None in an empty league)."""
    return max(seasons, key=lambda s: (s.config.last, s.config.first, s.id), default=None)


def next_start(root: str | Path, start: dt.date | None = None
               ) -> tuple[dt.date, int | None, LeagueSeason | None]:
    """Where the league's next season starts: (its first day, its cycle hour - the previous
    season's, None without one -, the season it follows). ``start`` (optional once the league
    holds a season) may leave a gap after the previous season's end, never overlap it.
    :class:`LeagueError` names why there is no next season yet."""
    root = Path(root)
    seasons = read_league(root) if root.exists() else []
    previous = previous_season(seasons)
    if previous is None:
        if start is None:
            raise LeagueError(f"the league {root} holds no season yet: give its first season's "
                              "--start")
        return start, None, None
    if not previous.ended:
        how = (f"play its replay to its last cycle ({previous.config.last:%Y-%m-%d %H:%M} UTC)"
               if previous.config.mode == REPLAY else
               f"close it after its last cycle ({previous.config.last:%Y-%m-%d %H:%M} UTC) with "
               f"arena season publish --final --lake {previous.folder}")
        raise LeagueError(f"season {previous.id!r} of the league {root} is {previous.state} "
                          f"({previous.cycles} of {previous.config.days} cycles recorded): the "
                          f"next season starts where it ends, so {how} first")
    end = previous.config.last.date()
    if start is not None and start < end:
        raise LeagueError(f"--start {start} is before the end of season {previous.id!r} "
                          f"({previous.config.last:%Y-%m-%d %H:%M} UTC): seasons of a league do "
                          f"not overlap; leave --start out to start at its end, {end}")
    return (start or end), previous.config.cycle_hour, previous


def season_folder(root: str | Path, season_id: str) -> Path:
    """The folder of season ``season_id`` in the league at ``root``: ``<root>/<season_id>``;
    :class:`LeagueError` for an id that cannot name a folder of its own there."""
    if (not season_id or season_id.startswith(".") or season_id in OWN
            or os.sep in season_id or (os.altsep and os.altsep in season_id)):
        raise LeagueError(f"season id {season_id!r} cannot name a season's folder in a league "
                          f"(not empty, no path separator, no leading dot, none of "
                          f"{', '.join(sorted(OWN))}): choose another --id")
    return Path(root) / season_id


def init_league_season(root: str | Path, season: SeasonConfig, *, roster: str | Path | None = None,
                       now: pd.Timestamp | None = None, sectors: bool = False
                       ) -> tuple[Lake, SeasonConfig]:
    """Write ``season`` (made from :func:`next_start`) into its own lake of the league at
    ``root``, ``<root>/<season.id>/`` (:func:`arena.pipeline.season_config.init_season`); a
    folder of the league that holds a season already is refused (``sectors``: a blind
    season's prompts show sectors)."""
    lake = Lake(season_folder(root, season.id))
    held = find_season(lake)
    if held is not None:
        raise LeagueError(f"the league {root} already holds a season in {lake.root} ({held.id!r}, "
                          f"from {held.start}): give the new season another --id")
    return lake, init_season(lake, season, roster=roster, now=now, sectors=sectors)


def _utc(stamp: str) -> pd.Timestamp:
    at = pd.Timestamp(stamp)
    return at.tz_localize("UTC") if at.tzinfo is None else at.tz_convert("UTC")


def league_frame(seasons: Sequence[LeagueSeason]) -> pd.DataFrame:
    """The seasons as a table (one row each, in league order, ``ordinal`` from 1): what the
    league's dbt source ``seasons`` reads; ``blind``: the season was played blind (its
    config's, :mod:`arena.market.blind`; a season written before the setting was not)."""
    rows: list[dict[str, Any]] = []
    for i, s in enumerate(seasons, start=1):
        rows.append({
            "ordinal": i, "season_id": s.id, "folder": str(s.folder), "mode": s.config.mode,
            "start_date": s.config.start, "days": s.config.days,
            "first_cycle": s.config.first, "last_cycle": s.config.last, "cycles": s.cycles,
            "state": s.state, "ended": s.ended, "published": s.published, "counted": s.counted,
            "follows": s.config.follows, "after": s.after,
            "closed_at": None if s.closed_at is None else _utc(s.closed_at),
            "contestants": len(s.contestants), "rulers": len(s.rulers),
            "blind": bool(s.config.blind)})
    columns = ["ordinal", "season_id", "folder", "mode", "start_date", "days", "first_cycle",
               "last_cycle", "cycles", "state", "ended", "published", "counted", "follows",
               "after", "closed_at", "contestants", "rulers", "blind"]
    return pd.DataFrame(rows, columns=columns)
