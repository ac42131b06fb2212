"""What the site reads: the season lakes it serves (or a league folder of them), each season's
published marts read once per publication, and a league's own marts.

A season's marts are read once per publication: the folder's identity (inode and modification
time of the folder and of its leaderboard file) is checked on every request - one ``stat`` or
two - and a new publication is read at the next request; the rendered pages of a publication are
kept until the next one.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from arena.core.errors import UnusableInput
from arena.core.marts import LEAGUE_MARTS, SEASON_MARTS
from arena.data.lake import Lake
from arena.reporting.leaderboard import best_contestant
from arena.reporting.season import read_marts
from arena.reporting.site import PageNotFound, Season

# the marts the API serves (a mart a publication lacks answers 404 naming it)
API_MARTS = SEASON_MARTS  # every mart a season publishes (arena.core.marts)
MAX_ROWS = 50_000  # rows one API answer holds at most (a larger mart is paged: offset, limit)


class SiteError(UnusableInput, ValueError):
    """The site cannot be served from what it was given (no season, a bad host)."""


def is_lake(path: Path) -> bool:
    """A season's lake: its season config, or (a lake published before seasons had one) its
    leaderboard mart. A league folder has marts of its own (league_*), never a leaderboard."""
    return ((path / "season" / "season.json").is_file()
            or (path / "marts" / "leaderboard.parquet").is_file())


def season_lakes(root: Path) -> list[Path]:
    """The season lakes ``root`` holds: itself when it is one, else its sub-folders that are
    (a league's seasons), in name order."""
    if is_lake(root):
        return [root]
    if not root.is_dir():
        raise SiteError(f"{root} does not exist")
    found = sorted(p for p in root.iterdir() if p.is_dir() and is_lake(p))
    if not found:
        raise SiteError(f"{root} is neither a season's lake nor a folder of them (a league): "
                        "start a season with arena season init, or publish a replay with "
                        "arena replay")
    return found


def _identity(folder: Path, marker: str = "leaderboard.parquet") -> tuple[int, ...] | None:
    """What changes when a publication swaps ``folder`` (its inode and time, and those of the
    ``marker`` file in it); None: nothing published."""
    try:
        outer = folder.stat()
        inner = (folder / marker).stat()
    except OSError:
        return None
    return (outer.st_ino, outer.st_mtime_ns, inner.st_ino, inner.st_mtime_ns, inner.st_size)


def _version(identity: tuple[int, ...] | None) -> str:
    return "none" if identity is None else "-".join(map(str, identity))


@dataclass
class _Published:
    identity: tuple[int, ...] | None
    marts: dict[str, pd.DataFrame]
    pages: dict[tuple[object, ...], str] = field(default_factory=dict)
    summary: Any = None  # the season as the site lists it (SeasonSource.summary)

    @property
    def version(self) -> str:
        return _version(self.identity)


class SeasonSource:
    """One season lake as the site reads it: its config, its published marts (read again when a
    publication swapped them), its daily reports."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self._lock = threading.Lock()
        self._published: _Published | None = None
        self.id = self._season_id()

    def _season_id(self) -> str:
        path = self.lake.root / "season" / "season.json"
        try:
            return str(json.loads(path.read_text(encoding="utf-8"))["id"])
        except (OSError, ValueError, KeyError, TypeError):
            return self.lake.root.name

    def published(self) -> _Published:
        """The marts of the latest publication (one or two ``stat`` calls when unchanged)."""
        folder = self.lake.root / "marts"
        identity = _identity(folder)
        with self._lock:
            if self._published is not None and self._published.identity == identity:
                return self._published
            marts: dict[str, pd.DataFrame] = {}
            if identity is not None:
                marts = read_marts(self.lake)
            self._published = _Published(identity, marts)
            return self._published

    def page(self, key: tuple[object, ...], make: Callable[[_Published], str]) -> tuple[str, str]:
        """A rendered page of the latest publication (rendered once per publication) and the
        publication's version."""
        published = self.published()
        text = published.pages.get(key)
        if text is None:
            text = published.pages[key] = make(published)
        return text, published.version

    def days(self) -> list[str]:
        folder = self.lake.root / "reports" / "daily"
        return sorted(p.stem for p in folder.glob("*.md")) if folder.is_dir() else []

    def summary(self) -> Any:
        """The season as the site lists it, worked out once per publication."""
        published = self.published()
        if published.summary is None:
            published.summary = self._summary(published)
        return published.summary

    def _summary(self, published: _Published) -> Any:
        config: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):  # a lake without a season config
            config = json.loads((self.lake.root / "season" / "season.json")
                                .read_text(encoding="utf-8"))
        marts = published.marts
        board = marts.get("leaderboard")
        equity = marts.get("equity_daily")
        if board is None or equity is None or equity.empty:
            return Season(self.id, f"Season {self.id}", None, str(config.get("start") or "")
                          or None, None, 0, "not published")
        closed = (self.lake.root / "season" / "closed.json").is_file()
        state = "closed" if closed else ("replay" if config.get("mode") == "replay" else "live")
        times = pd.to_datetime(equity["cycle_at"], utc=True)
        leader = best_contestant(board)
        market = board["market"].dropna().astype(str).unique() if "market" in board else []
        return Season(self.id, f"Season {self.id}", ", ".join(market) or None,
                      f"{times.min():%Y-%m-%d}", f"{times.max():%Y-%m-%d}",
                      int(times.nunique()), state,
                      None if leader is None else str(leader["contestant"]),
                      blind=config.get("blind") is True)


class LeagueSource:
    """A league folder's own marts (``arena league publish``), read again when republished."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lock = threading.Lock()
        self._read: tuple[tuple[int, ...] | None, dict[str, pd.DataFrame]] | None = None

    def marts(self) -> tuple[str, dict[str, pd.DataFrame]]:
        folder = self.root / "marts"
        identity = _identity(folder, "league_verdict.parquet")
        with self._lock:
            if self._read is None or self._read[0] != identity:
                marts = {} if identity is None else {
                    name: pd.read_parquet(folder / f"{name}.parquet") for name in LEAGUE_MARTS
                    if (folder / f"{name}.parquet").is_file()}
                self._read = (identity, marts)
            return _version(identity), self._read[1]


class Site:
    """The seasons a site serves, the newest (by first cycle, then id) last; a league's own
    marts when it serves a league; whether it takes entries (``arena web --entries``: its
    asset pages then link to their entry pages)."""

    def __init__(self, root: Path, *, entries: bool = False) -> None:
        self.root = root
        self.entries = entries
        self.league = None if is_lake(root) else LeagueSource(root)
        self.sources = {}
        for path in season_lakes(root):
            source = SeasonSource(Lake(path))
            if source.id in self.sources:  # two lakes of one id: the folder names tell them apart
                source.id = path.name
            self.sources[source.id] = source

    def refresh(self) -> None:
        """Pick up a season a league gained since the site started."""
        if is_lake(self.root):
            return
        known = {s.lake.root.resolve() for s in self.sources.values()}
        for path in season_lakes(self.root):
            if path.resolve() not in known:
                source = SeasonSource(Lake(path))
                self.sources[source.id if source.id not in self.sources else path.name] = source

    def seasons(self) -> list[Any]:
        self.refresh()
        listed = [s.summary() for s in self.sources.values()]
        return sorted(listed, key=lambda s: (s.start or "", s.id), reverse=True)

    def current(self) -> SeasonSource:
        seasons = self.seasons()
        published = [s for s in seasons if s.state != "not published"] or seasons
        return self.sources[published[0].id]

    def source(self, season_id: str) -> SeasonSource:
        if season_id not in self.sources:
            self.refresh()
        try:
            return self.sources[season_id]
        except KeyError:
            raise PageNotFound(f"no season {season_id!r} here (seasons: "
                               f"{', '.join(sorted(self.sources))})") from None


__all__ = ["API_MARTS", "MAX_ROWS", "LeagueSource", "SeasonSource", "Site", "SiteError",
           "is_lake", "season_lakes"]
