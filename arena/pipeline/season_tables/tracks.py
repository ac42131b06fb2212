"""The single-asset tracks of outside entrants (``asset_tracks``): an entrant's submitted
positions per asset, read from ``<lake>/season/tracks/``, each scored over the season's window
and placed among the asset's zero-skill players on the same path (:func:`asset_tracks`, the one
definition the MCP ``score`` calls too)."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.core.sessions import TS_UNIT, bar_close_times, utc
from arena.core.universe import Asset, Universe
from arena.data.lake import Lake
from arena.market.asof import Providers, provider_of
from arena.market.clocks import Clock, asset_clock, closed_expected
from arena.pipeline.season_tables.store import asset_tracks_schema
from arena.scoring.asset_luck import DEFAULT_PLAYERS, luck
from arena.scoring.scorer import default_cost_rate, score
from arena.scoring.self_check import ensure_self_checked

log = logging.getLogger(__name__)

TRACK_DIR = Path("season") / "tracks"  # <lake>/season/tracks/<entrant>/<received ns>.json
TRACK_PLAYERS = DEFAULT_PLAYERS  # the zero-skill players every track is placed among
TRACK_SEED = 0  # their draws' seed, whatever seed a build gives its other tables
TRACK_ELIGIBLE = 0.70  # share of the asset's season a valid position must cover
TRACK_SCORED = "scored"
TRACK_NO_POSITION = "no_position"  # no submitted position earns any of the season's bars yet
TRACK_TOO_SHORT = "too_short"  # fewer than two bars of the asset closed in the season's window
TRACK_NO_BARS = "no_bars"  # the lake holds no bars of the asset in the season's window
TRACK_STATUSES = (TRACK_SCORED, TRACK_NO_POSITION, TRACK_TOO_SHORT, TRACK_NO_BARS)


def entrant_track(lake: Lake, name: str) -> list[tuple[pd.Timestamp, dict[str, float]]]:
    """``name``'s single-asset submissions, oldest first: (received at, positions by symbol)."""
    folder = lake.root / TRACK_DIR / name
    out = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        raw = json.loads(path.read_text(encoding="utf-8"))
        out.append((utc(raw["received_at"]), {str(k): float(v)
                                                for k, v in raw["positions"].items()}))
    return out


def read_tracks(lake: Lake) -> dict[str, list[tuple[pd.Timestamp, dict[str, float]]]]:
    """Every entrant's single-asset submissions (:func:`entrant_track`), by name."""
    root = lake.root / TRACK_DIR
    names = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return {name: track for name in names if (track := entrant_track(lake, name))}


def track_series(closes: pd.Series, close_times: pd.DatetimeIndex,
                 submissions: Sequence[tuple[pd.Timestamp, Mapping[str, float]]], symbol: str
                 ) -> pd.Series:
    """The position held over each bar: the last submission received at or before the bar's
    close (``close_times``, session-aware), 0 before the first; the scorer holds
    ``positions[t]`` from close t, so a position earns only what comes after it arrived. A
    submission that leaves a symbol out keeps that symbol's position."""
    times = [t for t, p in submissions if symbol in p]
    values = [p[symbol] for _, p in submissions if symbol in p]
    held = np.zeros(len(closes))
    if times:
        at = np.searchsorted(pd.DatetimeIndex(times).as_unit(TS_UNIT).asi8,
                             pd.DatetimeIndex(close_times).as_unit(TS_UNIT).asi8,
                             side="right") - 1
        held = np.where(at >= 0, np.asarray(values)[np.maximum(at, 0)], 0.0)
    return pd.Series(held, index=closes.index)


def track_coverage(close_times: pd.DatetimeIndex,
                   submissions: Sequence[tuple[pd.Timestamp, Mapping[str, float]]],
                   symbol: str) -> float:
    """The share of the path's bar-to-bar moves (``len(close_times) - 1`` of them) a submitted
    position earns: the position held at close t earns the move to close t+1, and a bar
    holds one once a submission naming ``symbol`` arrived by its close (before it, the track
    is flat without having decided anything)."""
    times = [t for t, p in submissions if symbol in p]
    if not times or len(close_times) < 2:
        return 0.0
    first = pd.DatetimeIndex([min(times)]).as_unit(TS_UNIT).asi8[0]
    held = pd.DatetimeIndex(close_times).as_unit(TS_UNIT).asi8[:-1] >= first
    return float(np.count_nonzero(held)) / float(held.size)


def track_path(lake: Lake, provider: str, asset: Asset, start: pd.Timestamp,
               end: pd.Timestamp) -> tuple[str, Clock | None, pd.DatetimeIndex | None]:
    """(status, the asset's bars of ``[start, end)`` that closed by ``end`` on the grid the lake
    covers the window with (:func:`~arena.market.clocks.asset_clock`), when each closed): the
    status is :data:`TRACK_SCORED` when the path holds at least two bars; else
    :data:`TRACK_TOO_SHORT` (the clock, when there is one) or :data:`TRACK_NO_BARS`."""
    start, end = utc(start), utc(end)
    if end <= start or len(closed_expected(asset.calendar, "1h", start, end)) < 2:
        return TRACK_TOO_SHORT, None, None  # no grid closes two bars in the window yet
    try:
        clock = asset_clock(lake, provider, asset, start, end)
    except LookupError:
        return TRACK_NO_BARS, None, None
    times = bar_close_times(asset.calendar, clock.grid, pd.DatetimeIndex(clock.bars["timestamp"]))
    closed = np.asarray(times <= end)
    clock = Clock(asset.symbol, asset.calendar, clock.grid,
                  clock.bars[closed].reset_index(drop=True))
    status = TRACK_SCORED if len(clock.bars) >= 2 else TRACK_TOO_SHORT
    return status, clock, times[closed]


def asset_tracks(lake: Lake, provider: str, asset: Asset, start: pd.Timestamp,
                 end: pd.Timestamp,
                 tracks: Mapping[str, Sequence[tuple[pd.Timestamp, Mapping[str, float]]]], *,
                 players: int = TRACK_PLAYERS, seed: int = TRACK_SEED) -> list[dict[str, Any]]:
    """The rows of ``asset`` of the ``asset_tracks`` table: every entrant of ``tracks`` whose
    submissions name the asset, scored over the season's window ``[start, end)`` (the season's
    first cycle to the last one built) on :func:`track_path`. The one definition of a track's
    numbers: the season's build (:func:`tracks_table`) and the MCP ``score``
    (:func:`arena.pipeline.outside.entrant_score`, for a cycle not yet published) both call it.

    A track holds :func:`track_series` (flat before its first submission) and is scored with
    the scorer and cost rate of the asset's zero-skill players; ``percentile`` and
    ``rank_score`` place its return among ``players`` of them (:func:`~arena.scoring.asset_luck.luck`,
    draws seeded by ``seed``, one decision a day) on the same path from the season's start,
    whenever the entrant joined. ``coverage``: :func:`track_coverage`; ``eligible`` when it is
    at least :data:`TRACK_ELIGIBLE`; ``rank``: the place by return among the asset's eligible
    tracks (1 = best, ties share; none for the ineligible, which keep their numbers). A status
    other than :data:`TRACK_SCORED` names why there is no score, and the numbers are null."""
    start, end = utc(start), utc(end)
    names = [n for n, subs in tracks.items() if any(asset.symbol in p for _, p in subs)]
    if not names:
        return []
    status, clock, close_times = track_path(lake, provider, asset, start, end)
    rate = default_cost_rate(asset.calendar)
    rows: list[dict[str, Any]] = []
    ruler = None
    for name in names:
        subs = tracks[name]
        row: dict[str, Any] = {
            "entrant": name, "symbol": asset.symbol, "status": status,
            "season_start": start, "season_end": end,
            "first_submitted_at": min(t for t, p in subs if asset.symbol in p),
            "grid": None if clock is None else clock.grid,
            "bars": None if clock is None else len(clock.bars),
            "return": None, "turnover": None, "fees": None, "coverage": None, "eligible": False,
            "percentile": None, "rank_score": None, "rank": None, "players": None,
            "seed": seed, "cost_rate": rate, "ceiling": None}
        rows.append(row)
        if status != TRACK_SCORED:
            continue
        assert clock is not None and close_times is not None
        row["coverage"] = track_coverage(close_times, subs, asset.symbol)
        if row["coverage"] == 0.0:
            row["status"] = TRACK_NO_POSITION
            continue
        closes = clock.closes
        if ruler is None:  # the players depend on the path alone: drawn once for every track
            ensure_self_checked()
            ruler = luck(closes, players=players, seed=seed, cost_rate=rate,
                         calendar=asset.calendar)
        result = score(closes, track_series(closes, close_times, subs, asset.symbol), rate)
        percentile, rank = ruler.place(result.total_return)
        row.update({"return": result.total_return, "turnover": result.turnover,
                    "fees": result.fees, "eligible": row["coverage"] >= TRACK_ELIGIBLE,
                    "percentile": percentile, "rank_score": rank, "players": ruler.players,
                    "ceiling": ruler.ceiling})
    ranked = [r for r in rows if r["eligible"]]
    for row in ranked:
        row["rank"] = 1 + sum(other["return"] > row["return"] for other in ranked)
    return rows


def tracks_table(lake: Lake, provider: Providers, universe: Universe, start: pd.Timestamp,
                 end: pd.Timestamp,
                 tracks: Mapping[str, Sequence[tuple[pd.Timestamp, Mapping[str, float]]]]
                 | None = None) -> pd.DataFrame:
    """The ``asset_tracks`` table: :func:`asset_tracks` of every asset of ``universe`` an
    entrant submitted positions for (``tracks``: read from the lake by default), typed by
    :func:`~arena.pipeline.season_tables.store.asset_tracks_schema` (no entrant: no
    rows)."""
    tracks = read_tracks(lake) if tracks is None else tracks
    named = {s for subs in tracks.values() for _, p in subs for s in p}
    unknown = named - set(universe.symbols)
    if unknown:
        log.warning("single-asset positions for symbols outside the season, not scored: %s",
                    ", ".join(sorted(unknown)))
    rows = []
    for asset in universe:
        if asset.symbol in named:
            rows += asset_tracks(lake, provider_of(provider, asset), asset, start, end, tracks)
    table = pa.Table.from_pylist(rows, schema=asset_tracks_schema())
    return table.to_pandas(types_mapper=pd.ArrowDtype)
