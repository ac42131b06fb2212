"""The single-asset tracks of outside entrants (``asset_tracks``): an entrant's submitted
positions per asset, read from ``<lake>/season/tracks/``, each scored over the season's window
and placed among the asset's zero-skill players on the same path (:func:`asset_tracks`, the one
definition the MCP ``score`` calls too).

Two conventions decide a track's numbers, both written here once:

* **When returns start** (:func:`window_prices`): the window's path begins at the open of its
  first bar - the first bar that opens at or after the season's first cycle - and then runs
  close to close. Returns start accumulating an hour after that open, with the first bar's own
  move, as the contest documents say of their hourly grid (not a bar later, from the first
  bar's close). Example: an hourly window whose first bar opens at 100 and closes at 101, the
  next closes at 103 and the third at 102; a position of +1 held from before the season earns
  102 / 100 - 1 = +2.00% less its one entry fee, ``(1 - 0.0006) x 1.02 - 1 = +1.9388%`` at the
  crypto rate (from the first close it would have been 102 / 101 - 1 = +0.99%).
* **When a position starts** (:func:`track_series`): at the first point of the path - the
  window's opening, or a bar's close - at or after its receipt, to the nanosecond. A position
  received exactly at a close knows nothing after that instant and earns only what follows
  it (the scorer's own rule: decided at close t, held from t); received a nanosecond later,
  it waits for the next close.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.core.sessions import bar_close_times, utc
from arena.core.universe import Asset, Universe
from arena.data.lake import Lake
from arena.market.asof import Providers, provider_of
from arena.market.clocks import Clock, asset_clock, closed_expected
from arena.pipeline.season_tables.store import asset_tracks_schema
from arena.scoring.asset_luck import DEFAULT_PLAYERS, luck
from arena.scoring.scorer import asset_cost_rate, score
from arena.scoring.self_check import ensure_self_checked

log = logging.getLogger(__name__)

TRACK_DIR = Path("season") / "tracks"  # <lake>/season/tracks/<entrant>/<received ns>.json
TRACK_PLAYERS = DEFAULT_PLAYERS  # the zero-skill players every track is placed among
TRACK_SEED = 0  # their draws' seed, whatever seed a build gives its other tables
TRACK_ELIGIBLE = 0.70  # share of the asset's season a valid position must cover
TRACK_SCORED = "scored"
TRACK_NO_POSITION = "no_position"  # no submitted position earns any of the season's bars yet
TRACK_TOO_SHORT = "too_short"  # no bar of the asset closed in the season's window yet
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


def window_prices(clock: Clock, close_times: pd.DatetimeIndex) -> pd.Series:
    """The window's price path, indexed by when each price is read: the open of its first bar
    at that bar's open time, then each bar's close at its close time (``close_times``,
    session-aware). Returns start with the first bar's open-to-close move, an hour after the
    open on the hourly grid; the path of ``n`` bars holds ``n`` moves."""
    bars = clock.bars
    times = pd.DatetimeIndex([pd.Timestamp(bars["timestamp"].iloc[0])]).append(
        pd.DatetimeIndex(close_times))
    prices = np.concatenate([[float(bars["open"].iloc[0])],
                             bars["close"].to_numpy(dtype="float64")])
    return pd.Series(prices, index=times.tz_convert("UTC"), name="price")


def _nanos(times: Sequence[pd.Timestamp] | pd.DatetimeIndex) -> np.ndarray:
    """Epoch nanoseconds of ``times``: a receipt a nanosecond after a close stays after it."""
    return pd.DatetimeIndex(times).as_unit("ns").asi8


def track_series(prices: pd.Series, times: pd.DatetimeIndex,
                 submissions: Sequence[tuple[pd.Timestamp, Mapping[str, float]]], symbol: str
                 ) -> pd.Series:
    """The position held at each point of the path (``times``: when each of ``prices`` is
    read - the window's opening, then the bars' closes): the last submission received at or
    before that instant, compared to the nanosecond, 0 before the first. The scorer holds
    ``positions[t]`` from point t to point t+1, so a position starts at the first point at or
    after its receipt and earns only what comes after it arrived: one received exactly at a
    close is held from that close, one a nanosecond later from the next. A submission that
    leaves a symbol out keeps that symbol's position."""
    received = [t for t, p in submissions if symbol in p]
    values = [p[symbol] for _, p in submissions if symbol in p]
    held = np.zeros(len(prices))
    if received:
        at = np.searchsorted(_nanos(received), _nanos(times), side="right") - 1
        held = np.where(at >= 0, np.asarray(values)[np.maximum(at, 0)], 0.0)
    return pd.Series(held, index=prices.index)


def track_coverage(times: pd.DatetimeIndex,
                   submissions: Sequence[tuple[pd.Timestamp, Mapping[str, float]]],
                   symbol: str) -> float:
    """The share of the path's moves (``len(times) - 1`` of them) a submitted position earns:
    the position held at point t earns the move to point t+1, and a point holds one once a
    submission naming ``symbol`` arrived at or before it (before it, the track is flat without
    having decided anything)."""
    received = [t for t, p in submissions if symbol in p]
    if not received or len(times) < 2:
        return 0.0
    held = _nanos(times)[:-1] >= _nanos([min(received)])[0]
    return float(np.count_nonzero(held)) / float(held.size)


def track_path(lake: Lake, provider: str, asset: Asset, start: pd.Timestamp,
               end: pd.Timestamp) -> tuple[str, Clock | None, pd.DatetimeIndex | None]:
    """(status, the asset's bars of ``[start, end)`` that closed by ``end`` on the grid the lake
    covers the window with (:func:`~arena.market.clocks.asset_clock`), when each closed): the
    status is :data:`TRACK_SCORED` when the path holds a bar (its open-to-close move is the
    first one a track earns, :func:`window_prices`); else :data:`TRACK_TOO_SHORT` (the clock,
    when there is one) or :data:`TRACK_NO_BARS`."""
    start, end = utc(start), utc(end)
    if end <= start or not len(closed_expected(asset.calendar, "1h", start, end)):
        return TRACK_TOO_SHORT, None, None  # no bar of the grid has closed in the window yet
    try:
        clock = asset_clock(lake, provider, asset, start, end)
    except LookupError:
        return TRACK_NO_BARS, None, None
    times = bar_close_times(asset.calendar, clock.grid, pd.DatetimeIndex(clock.bars["timestamp"]))
    closed = np.asarray(times <= end)
    clock = Clock(asset.symbol, asset.calendar, clock.grid,
                  clock.bars[closed].reset_index(drop=True))
    status = TRACK_SCORED if len(clock.bars) else TRACK_TOO_SHORT
    return status, clock, times[closed]


def asset_tracks(lake: Lake, provider: str, asset: Asset, start: pd.Timestamp,
                 end: pd.Timestamp,
                 tracks: Mapping[str, Sequence[tuple[pd.Timestamp, Mapping[str, float]]]], *,
                 players: int = TRACK_PLAYERS, seed: int = TRACK_SEED,
                 eligibility: float = TRACK_ELIGIBLE) -> list[dict[str, Any]]:
    """The rows of ``asset`` of the ``asset_tracks`` table: every entrant of ``tracks`` whose
    submissions name the asset, scored over the season's window ``[start, end)`` (the season's
    first cycle to the last one built) on :func:`track_path`. The one definition of a track's
    numbers: the season's build (:func:`tracks_table`) and the MCP ``score``
    (:func:`arena.pipeline.outside.entrant_score`, for a cycle not yet published) both call it.

    The path is :func:`window_prices` (from the first bar's open: returns start with the first
    bar's move); a track holds :func:`track_series` on it (flat before its first submission)
    and is scored with the scorer and cost rate of the asset's zero-skill players (its
    contest's rate, :func:`~arena.scoring.scorer.asset_cost_rate`);
    ``percentile`` and ``rank_score`` place its return among ``players`` of them
    (:func:`~arena.scoring.asset_luck.luck` with the same opening, draws seeded by ``seed``,
    one decision a day, the first held from the open) on the same path from the season's start,
    whenever the entrant joined. ``coverage``: :func:`track_coverage`; ``eligible`` when it is
    at least ``eligibility`` (:data:`TRACK_ELIGIBLE`, or the contest's); ``rank``: the place by return among the asset's eligible
    tracks (1 = best, ties share; none for the ineligible, which keep their numbers). A status
    other than :data:`TRACK_SCORED` names why there is no score, and the numbers are null."""
    start, end = utc(start), utc(end)
    names = [n for n, subs in tracks.items() if any(asset.symbol in p for _, p in subs)]
    if not names:
        return []
    status, clock, close_times = track_path(lake, provider, asset, start, end)
    rate = asset_cost_rate(asset)
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
            "return": None, "turnover": None, "fees": None, "coverage": None,
            "eligibility": eligibility, "eligible": False,
            "percentile": None, "rank_score": None, "rank": None, "players": None,
            "seed": seed, "cost_rate": rate, "ceiling": None}
        rows.append(row)
        if status != TRACK_SCORED:
            continue
        assert clock is not None and close_times is not None
        prices = window_prices(clock, close_times)
        row["coverage"] = track_coverage(prices.index, subs, asset.symbol)
        if row["coverage"] == 0.0:
            row["status"] = TRACK_NO_POSITION
            continue
        if ruler is None:  # the players depend on the path alone: drawn once for every track
            ensure_self_checked()
            ruler = luck(clock.closes, players=players, seed=seed, cost_rate=rate,
                         calendar=asset.calendar, opening=float(prices.iloc[0]))
        result = score(prices, track_series(prices, prices.index, subs, asset.symbol), rate)
        percentile, rank = ruler.place(result.total_return)
        row.update({"return": result.total_return, "turnover": result.turnover,
                    "fees": result.fees, "eligible": row["coverage"] >= eligibility,
                    "percentile": percentile, "rank_score": rank, "players": ruler.players,
                    "ceiling": ruler.ceiling})
    ranked = [r for r in rows if r["eligible"]]
    for row in ranked:
        row["rank"] = 1 + sum(other["return"] > row["return"] for other in ranked)
    return rows


def tracks_table(lake: Lake, provider: Providers, universe: Universe, start: pd.Timestamp,
                 end: pd.Timestamp,
                 tracks: Mapping[str, Sequence[tuple[pd.Timestamp, Mapping[str, float]]]]
                 | None = None, *, eligibility: float = TRACK_ELIGIBLE) -> pd.DataFrame:
    """The ``asset_tracks`` table: :func:`asset_tracks` of every asset of ``universe`` an
    entrant submitted positions for (``tracks``: read from the lake by default; a track is
    eligible from ``eligibility`` of the window covered), typed by
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
            rows += asset_tracks(lake, provider_of(provider, asset), asset, start, end, tracks,
                                 eligibility=eligibility)
    table = pa.Table.from_pylist(rows, schema=asset_tracks_schema())
    return table.to_pandas(types_mapper=pd.ArrowDtype)
