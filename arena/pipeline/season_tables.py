"""The season's Python-side numbers, landed in the lake for dbt to turn into tables.

dbt folds the ledger in SQL; what SQL should not do - simulate thousands of zero-skill players,
run the reference rules' indicators, read the cycle prices exactly as the engine read them - is
computed here, once per season, through the same modules the rest of the product uses:

* ``season``           one row: provider, its market label (``SYNTHETIC`` or the real provider's
                       name: :func:`arena.data.providers.market_label`), first and last cycle,
                       cycle count, players, seed, and the assets left out of the per-asset
                       tables (no bars in the season)
* ``cycle_prices``     the price every symbol had at every cycle (:func:`arena.market.asof.last_price`:
                       the engine's own marks), with when it printed; NaN-free, long format
* ``arena_luck``       each arena zero-skill player's final return (portfolio-level luck)
* ``arena_luck_band``  quantiles of the zero-skill players' equity after each cycle
* ``matched_players``, ``matched_books``  each contestant's (and replicated model's) matched
                       players: its book with the assets relabelled at random, the null of the
                       skill percentile (:mod:`arena.pipeline.matched_tables`)
* ``luck_ceiling``     per asset: its zero-skill distribution over the season (quantiles, ceiling,
                       the grid, bars and decision steps it was simulated on, cost rate)
* ``reference_rules``  per asset and rule: return, turnover, fees, percentile, rank score, rank;
                       ``status`` ``insufficient_history`` (and those empty) when the asset's
                       bars before the first cycle are fewer than the rule's window
                       (``history_bars`` < ``needed_bars``: a new listing)
* ``correlations``     pairwise correlation of daily returns over :data:`CORRELATION_DAYS`
* ``asset_tracks``     per outside entrant and asset it submitted single-asset positions for:
                       the track's return, turnover and fees over the season's window (its
                       first cycle to the last one built), its luck percentile and rank score
                       among :data:`TRACK_PLAYERS` zero-skill players of the asset on that path
                       (seed :data:`TRACK_SEED`), the share of the window a valid position
                       covered, ``eligible`` (at least :data:`TRACK_ELIGIBLE`) and the place
                       among the eligible; ``status`` ``no_position``, ``too_short`` or
                       ``no_bars`` (and the numbers null) when there is nothing to score
                       (:func:`asset_tracks`, the one definition the MCP ``score`` calls too)

Layout: ``<lake>/analytics/<table>.parquet``, one set for the lake's season. A build writes the
whole set into a staging directory and swaps it in with two renames, so readers see the old set
or the new one, never a mix; a failed build leaves the old set as it was.

A live season builds them after every cycle. What grows with the season does not cost the
season again: beside the tables, in ``_state/`` (:mod:`arena.pipeline.season_state`), a build
leaves the arena's zero-skill players' books at its last two cycles and the digests of the bars
and prices they and the cycle prices consumed; the next build keeps the rows of
``cycle_prices`` and ``arena_luck_band`` up to the latest checkpoint whose inputs are unchanged
and computes the cycles after it (the players advance from their books with the same draws),
which equals a build from scratch, bit for bit. The per-asset tables and the correlations are
computed whole each time: the correlations read a bounded window, and a zero-skill player of
an asset draws its positions as one block over the season's decision steps, so a longer season
redraws them all (their cost grows with the bars, not with the players' books).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.core.errors import Failed
from arena.core.runner import step
from arena.core.sessions import TS_UNIT, bar_close_times, interval_delta, utc
from arena.core.universe import Asset, Universe
from arena.data.lake import Lake, PartitionKey, swap_dir
from arena.data.providers import market_label
from arena.engine.portfolio import START_CASH
from arena.engine.rules import ARENA_RULES
from arena.market.asof import NoPrices, Providers, cycle_prices, provider_label, provider_of
from arena.market.clocks import Clock, asset_clock, closed_expected
from arena.pipeline.matched_tables import matched_tables
from arena.pipeline.season_ingest import history_start
from arena.pipeline.season_state import (
    BooksCheckpoint,
    PriceCheckpoint,
    SeasonReads,
    SeasonState,
    StateUnusable,
    changed_assets,
    changed_cycle,
    load_state,
    price_rows_digest,
    price_sources,
    season_inputs,
)
from arena.scoring.arena_luck import (
    MONITOR_INTERVAL,
    RandomProfile,
    ZeroSkillBooks,
    advance_zero_skill,
)
from arena.scoring.asset_luck import DEFAULT_PLAYERS, luck, shared_players
from arena.scoring.rules_table import rules_table
from arena.scoring.scorer import default_cost_rate, score
from arena.scoring.self_check import ensure_self_checked

log = logging.getLogger(__name__)

ANALYTICS_DIR = "analytics"
ARENA_PLAYERS = 1000  # arena zero-skill players (each plays the full rules engine)
CORRELATION_DAYS = 90  # daily returns up to the season's end that the correlation matrix uses
BAND = (0.05, 0.25, 0.5, 0.75, 0.95)


class AnalyticsError(Failed, RuntimeError):
    """The season's numbers cannot be built (no cycles...); nothing was replaced."""


@dataclass
class Analytics:
    """The tables of one build; how long each step took (wall and CPU seconds); how many
    cycles of each table that grows with the season were kept from the previous build
    (``cycle_prices``, ``arena_luck``; 0: computed from scratch) and, if none, why; the state
    the next build starts from (written with the tables)."""

    tables: dict[str, pd.DataFrame]
    seconds: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)  # the steps' CPU seconds (this process)
    kept: dict[str, int] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    state: SeasonState | None = None


def _checkpoints(count: int) -> list[int]:
    """The cycle counts a build keeps a checkpoint at: the last cycle and the one before."""
    return [n for n in (count - 1, count) if n >= 1]


def _at(t: pd.Timestamp) -> str:
    return f"{t:%Y-%m-%d %H:%M}"


def _and_others(changed: Sequence[str]) -> str:
    return f" (and those of {len(changed) - 1} more assets)" if len(changed) > 1 else ""


@dataclass
class _Prices:
    table: pd.DataFrame
    kept: int
    why: str
    since: dict[str, int | None]
    checkpoints: list[PriceCheckpoint]


def season_prices(lake: Lake, provider: Providers, universe: Universe,
                  times: Sequence[pd.Timestamp], reads: SeasonReads,
                  stored: SeasonState | None, why: str) -> _Prices:
    """The ``cycle_prices`` table of ``times``: the rows of the cycles of the latest stored
    checkpoint whose price bars are unchanged are kept, the later cycles' are read
    (:func:`~arena.market.asof.cycle_prices`: a cycle's price depends on its own cycle only,
    so a table read in parts equals one read whole); all of them without such a checkpoint."""
    intervals = reads.price_intervals()
    counts = _checkpoints(len(times))
    ends = [times[n - 1] for n in counts]
    kept, ahead = 0, None
    if stored is not None and stored.intervals != intervals:
        changed = changed_assets(stored.intervals, intervals)
        why = f"the cycle prices of {changed[0]} come from another interval now"
    elif stored is not None:
        points = sorted(stored.prices, key=lambda p: p.cycles, reverse=True)
        why = "the stored state holds no cycle prices to continue from"
        digests = reads.price_digests([stored.cycles[p.cycles - 1] for p in points] + ends,
                                      stored.since)
        ahead = digests[len(points):]
        for point, now in zip(points, digests, strict=False):
            at = stored.cycles[point.cycles - 1]
            reason = changed_cycle(stored.cycles, times, point.cycles)
            if reason is None and (changed := changed_assets(point.bars, now)):
                reason = (f"the {intervals.get(changed[0], 'price')} bars of {changed[0]} up to "
                          f"{_at(at)} changed since they were stored{_and_others(changed)}")
            if reason is None:
                kept = point.cycles
                break
            if point is points[0]:  # the latest checkpoint's reason: the one to say
                why = reason
    parts = []
    if kept:
        assert stored is not None
        old = stored.table("cycle_prices")
        parts.append(old[old["cycle_at"] <= times[kept - 1]])
    if kept < len(times):
        try:
            parts.append(cycle_prices(lake, provider, universe, times[kept:]))
        except NoPrices as exc:
            if not kept:
                raise AnalyticsError(str(exc)) from exc
    table = parts[0] if len(parts) == 1 and not kept else pd.concat(parts, ignore_index=True)
    if kept:
        table = table.sort_values(["cycle_at", "symbol"]).reset_index(drop=True)
    since = price_sources(table, times, intervals)
    if ahead is None or stored is None or since != stored.since:
        ahead = reads.price_digests(ends, since)
    return _Prices(table, kept, "" if kept else why, since,
                   [PriceCheckpoint(n, d) for n, d in zip(counts, ahead, strict=True)])


@dataclass
class _Arena:
    returns: pd.DataFrame
    band: pd.DataFrame
    rejections: int
    kept: int
    why: str
    cycles: list[pd.Timestamp]
    checkpoints: list[BooksCheckpoint]


BAND_COLUMNS = tuple(f"q{round(q * 100):02d}" for q in BAND)


def tradable_prices(prices: pd.DataFrame, universe: Universe) -> pd.DataFrame:
    """The cycle prices of the tradable assets, wide: a row per cycle, a column per symbol
    (NaN where a symbol has no price of that cycle) - what the zero-skill and matched players
    play on."""
    wide = prices.pivot(index="cycle_at", columns="symbol", values="price")
    return wide[[a.symbol for a in universe.tradable if a.symbol in wide.columns]]


def arena_luck_tables(reads: SeasonReads, prices: pd.DataFrame, wide: pd.DataFrame,
                      universe: Universe, stored: SeasonState | None, why: str, *, players: int,
                      seed: int, say: Callable[[str], None] = lambda _msg: None) -> _Arena:
    """The players' final returns and the equity band per cycle of the arena's zero-skill
    players on the cycle prices of the tradable assets (``wide``: :func:`tradable_prices` of
    ``prices``): the players of the latest stored
    checkpoint whose inputs are unchanged advance from their books through the cycles after
    it, and the band's rows up to it are kept (:func:`~arena.scoring.arena_luck.advance_zero_skill`:
    the same numbers as a simulation from scratch, bit for bit); without one they play the
    season from its first cycle."""
    tradable = [a.symbol for a in universe.tradable]
    cycles = [utc(t) for t in wide.index]
    counts = [n for n in _checkpoints(len(cycles)) if not reads.observed_at_open(cycles[n - 1])]
    ends = [cycles[n - 1] for n in counts]
    kept, books, band_kept = 0, None, None
    trusted: dict[int, BooksCheckpoint] = {}
    ahead = None
    if stored is not None:
        points = sorted(stored.arena, key=lambda p: p.cycles, reverse=True)
        why = "the stored state holds no books to continue from"
        digests = reads.monitor_digests([stored.arena_cycles[p.cycles - 1] for p in points]
                                        + ends)
        ahead = digests[len(points):]
        for point, now in zip(points, digests, strict=False):
            at = stored.arena_cycles[point.cycles - 1]
            reason = changed_cycle(stored.arena_cycles, cycles, point.cycles)
            if reason is None and price_rows_digest(prices, tradable, at) != point.prices:
                reason = f"the cycle prices up to {_at(at)} changed since they were stored"
            if reason is None and (changed := changed_assets(point.monitor_bars, now)):
                reason = (f"the {MONITOR_INTERVAL} bars of {changed[0]} before {_at(at)} "
                          f"changed since they were stored{_and_others(changed)}")
            if reason is None:
                trusted[point.cycles] = point
            elif point is points[0]:  # the latest checkpoint's reason: the one to say
                why = reason
        if trusted:
            kept = max(trusted)
            old = stored.table("arena_luck_band")
            old = old[old["cycle_at"] <= cycles[kept - 1]].reset_index(drop=True)
            try:
                if [utc(t) for t in old["cycle_at"]] != cycles[:kept]:
                    raise StateUnusable(f"the stored band does not hold the first {kept} cycles")
                books, band_kept = stored.books(trusted[kept]), old
            except StateUnusable as exc:
                kept, trusted, why = 0, {}, str(exc)
    if books is None:
        books = ZeroSkillBooks.start(players, seed)
        say(f"arena luck: {players:,} zero-skill players x {len(cycles)} cycles from the "
            f"season's first ({why})")
    else:
        later = "" if stored is None or kept == max(p.cycles for p in stored.arena) else (
            f"; not from the later ones: {why}")
        say(f"arena luck: {players:,} zero-skill players advance {len(cycles) - kept} "
            f"cycle(s) from their books after {_at(cycles[kept - 1])} "
            f"(cycle {kept} of {len(cycles)}){later}")
    since = cycles[0] if not kept else max(reads.times[0], cycles[kept - 1] - interval_delta(
        MONITOR_INTERVAL))
    keep = len(cycles) - 1 if len(cycles) - 1 in counts and len(cycles) - 1 >= kept else None
    played = advance_zero_skill(books, wide, universe, bars=reads.monitor_bars(since) or None,
                                keep=keep)
    new = (np.quantile(played.equity, BAND, axis=0).T if played.equity.shape[1]
           else np.empty((0, len(BAND))))
    band = pd.DataFrame(new, columns=list(BAND_COLUMNS))
    band.insert(0, "cycle_at", wide.index[kept:])
    if band_kept is not None:
        band = pd.concat([band_kept, band], ignore_index=True)
    checkpoints = []
    for n, digest in zip(counts, ahead if ahead is not None else reads.monitor_digests(ends),
                         strict=True):
        if n == len(cycles):
            at_n = played.books
        elif n == keep:
            at_n = played.kept
        elif n in trusted and stored is not None:
            at_n = stored.books(trusted[n])
        else:
            continue
        checkpoints.append(BooksCheckpoint(n, digest, price_rows_digest(prices, tradable,
                                                                         cycles[n - 1]), at_n))
    returns = pd.DataFrame({"player": np.arange(players, dtype="int64"),
                            "final_return": played.returns})
    return _Arena(returns, band, played.books.rejections, kept, "" if kept else why, cycles,
                  checkpoints)


def asset_tables(lake: Lake, provider: str, asset: Asset, start: pd.Timestamp, end: pd.Timestamp,
                 *, players: int, seed: int) -> tuple[dict[str, object], pd.DataFrame]:
    """(luck-ceiling row, reference-rules rows) of one asset over the season ``[start, end)``,
    on the grid the lake covers the season with (:func:`~arena.market.clocks.asset_clock`), the
    rules warmed up on that grid's bars from :func:`~arena.pipeline.season_ingest.history_start`
    of the asset's calendar (the longest rule's window): a rule the stored bars before ``start``
    do not cover is ``insufficient_history``."""
    grid = asset_clock(lake, provider, asset, start, end).grid
    bars = lake.read_bars(PartitionKey(provider, grid, asset.symbol),
                          history_start(start, (asset.calendar,)), end)
    clock = Clock(asset.symbol, asset.calendar, grid, bars)
    rate = default_cost_rate(asset.calendar)
    table, ruler = rules_table(clock.bars, cost_rate=rate, periods_per_year=clock.periods_per_year,
                               start=start, players=players, seed=seed, calendar=asset.calendar)
    ceiling = {"symbol": asset.symbol, "asset_class": asset.asset_class, "grid": clock.grid,
               "bars": ruler.bars, "decision_steps": ruler.steps, "step": ruler.step,
               "draw": ruler.draw, "players": ruler.players, "seed": seed, "cost_rate": rate,
               **{f"q{round(q * 100):02d}": ruler.quantile(q) for q in BAND},
               "mean": float(np.mean(ruler.returns)), "ceiling": ruler.ceiling}
    table.insert(0, "symbol", asset.symbol)
    return ceiling, table


@step("luck-{asset.symbol}")
def asset_luck(asset: Asset, lake: Lake, provider: Providers, start: pd.Timestamp,
               end: pd.Timestamp, players: int, seed: int
               ) -> tuple[dict[str, object], pd.DataFrame] | str:
    """:func:`asset_tables` of one asset as a step of its own; an asset without bars in the
    season gives the reason (a string), not an error, so one such asset fails no fan-out."""
    try:
        return asset_tables(lake, provider_of(provider, asset), asset, start, end,
                            players=players, seed=seed)
    except (LookupError, ValueError) as exc:
        return str(exc) or type(exc).__name__


def correlations(lake: Lake, provider: Providers, universe: Universe, end: pd.Timestamp,
                 days: int = CORRELATION_DAYS) -> pd.DataFrame:
    """Long table ``symbol_a, symbol_b, correlation, observations``: Pearson correlation of daily
    close-to-close returns over the ``days`` before ``end``, on the dates both assets traded."""
    closes = {}
    for asset in universe.tradable:
        bars = lake.read_bars(PartitionKey(provider_of(provider, asset), "1d", asset.symbol),
                              end - pd.Timedelta(days=days), end)
        if len(bars):
            closes[asset.symbol] = bars.set_index(
                pd.DatetimeIndex(bars["timestamp"]).tz_convert("UTC").normalize())["close"]
    if not closes:  # no tradable asset with daily bars (a season of benchmarks only)
        return pd.DataFrame({"symbol_a": pd.Series(dtype=str), "symbol_b": pd.Series(dtype=str),
                             "correlation": pd.Series(dtype=float),
                             "observations": pd.Series(dtype="int64")})
    frame = pd.DataFrame(closes)
    # returns between consecutive trading days of each asset (a stock's Monday vs Friday)
    returns = frame.apply(lambda s: s.dropna().pct_change()).reindex(frame.index)
    corr = returns.corr(min_periods=10)
    count = returns.notna().astype(float).T @ returns.notna().astype(float)
    out = corr.stack(future_stack=True).rename("correlation").reset_index()
    out.columns = ["symbol_a", "symbol_b", "correlation"]
    out["observations"] = [int(count.loc[a, b]) for a, b in zip(out["symbol_a"], out["symbol_b"],
                                                                 strict=True)]
    return out


# ------------------------------------------------------------------------ single-asset tracks
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
    :func:`asset_tracks_schema` (no entrant: no rows)."""
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


@cache
def asset_tracks_schema() -> pa.Schema:
    stamp = pa.timestamp(TS_UNIT, tz="UTC")
    return pa.schema(
        [(c, pa.string()) for c in ("entrant", "symbol", "status")]
        + [("season_start", stamp), ("season_end", stamp), ("first_submitted_at", stamp),
           ("grid", pa.string()), ("bars", pa.int64())]
        + [(c, pa.float64()) for c in ("return", "turnover", "fees", "coverage")]
        + [("eligible", pa.bool_())]
        + [(c, pa.float64()) for c in ("percentile", "rank_score")]
        + [(c, pa.int64()) for c in ("rank", "players", "seed")]
        + [(c, pa.float64()) for c in ("cost_rate", "ceiling")])


def build_analytics(lake: Lake, provider: Providers, universe: Universe,
                    cycles: Sequence[pd.Timestamp], *,
                    players: int = DEFAULT_PLAYERS, arena_players: int = ARENA_PLAYERS,
                    seed: int = 0, progress: Callable[[str], None] | None = None,
                    fan_out: Callable[..., list[Any]] | None = None,
                    resume: bool = True) -> Analytics:
    """Compute every table of the module docstring for the season of ``cycles`` (``provider``:
    one, or one per asset class). ``fan_out``: a runner's ``map``, to compute the assets' luck
    and rules tables elsewhere (:func:`asset_luck` on a Dask cluster); else one after another.

    The tables that grow with the season (``cycle_prices``, ``arena_luck``,
    ``arena_luck_band``) continue from the state the previous build left beside its tables
    when what it consumed is unchanged (:mod:`arena.pipeline.season_state`; the same numbers as
    from scratch), else they are computed from the season's first cycle and ``progress`` says
    why; ``resume=False`` computes them from scratch regardless. Either way the build leaves
    its own state for the next one (:attr:`Analytics.state`)."""
    if not cycles:
        raise AnalyticsError("a season needs at least one cycle")
    times = sorted(cycles)
    start, end = times[0], times[-1]
    say = progress or (lambda _msg: None)
    seconds: dict[str, float] = {}
    cpu: dict[str, float] = {}
    inputs = season_inputs(provider, universe, players=arena_players, seed=seed,
                           rules=ARENA_RULES, profile=RandomProfile())
    stored, why = (load_state(analytics_dir(lake), inputs) if resume
                   else (None, "asked to compute from scratch"))
    reads = SeasonReads(lake, provider, universe, times)
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        priced = season_prices(lake, provider, universe, times, reads, stored, why)
    except NoPrices as exc:
        raise AnalyticsError(str(exc)) from exc
    prices = priced.table
    if priced.kept < len(times):
        say(f"cycle prices: {len(times) - priced.kept} cycle(s) read, {priced.kept} kept"
            + (f" ({priced.why})" if priced.why else ""))
    seconds["cycle_prices"] = time.perf_counter() - t0
    cpu["cycle_prices"] = time.process_time() - c0

    t0, c0 = time.perf_counter(), time.process_time()
    wide = tradable_prices(prices, universe)  # what the zero-skill and matched players play on
    arena = arena_luck_tables(reads, prices, wide, universe, stored, why, players=arena_players,
                              seed=seed, say=say)
    if arena.why and stored is not None:
        log.info("arena luck from the season's first cycle: %s", arena.why)
    luck_returns, band, rejected = arena.returns, arena.band, arena.rejections
    if rejected:
        log.warning("arena zero-skill players got %d rejections (expected none)", rejected)
    seconds["arena_luck"] = time.perf_counter() - t0
    cpu["arena_luck"] = time.process_time() - c0
    state = SeasonState(inputs, times, reads.price_intervals(), priced.since,
                        priced.checkpoints, arena.cycles, arena.checkpoints)
    del reads  # the season's bars: not held through the per-asset tables

    t0, c0 = time.perf_counter(), time.process_time()
    matched, matched_books = matched_tables(lake, wide, universe, players=arena_players,
                                            seed=seed, say=say)
    seconds["matched_players"] = time.perf_counter() - t0
    cpu["matched_players"] = time.process_time() - c0

    t0, c0 = time.perf_counter(), time.process_time()
    ceilings, rules, missing = [], [], []
    assets = list(universe.tradable)
    if fan_out is None:
        results = []
        with shared_players():  # the assets' players are drawn once (the same on every asset)
            for i, asset in enumerate(assets, start=1):
                results.append(asset_luck(asset, lake, provider, start, end, players, seed))
                if i % 10 == 0 or i == len(assets):
                    say(f"luck ceiling and reference rules: {i}/{len(assets)} assets")
    else:
        say(f"luck ceiling and reference rules: {len(assets)} assets fanned out")
        results = fan_out(asset_luck, assets, lake, provider, start, end, players, seed)
    for asset, result in zip(assets, results, strict=True):
        if isinstance(result, str):  # no bars for this asset in the season
            log.warning("no luck table for %s: %s", asset.symbol, result)
            say(f"no luck table for {asset.symbol}: {result}")
            missing.append(asset.symbol)
            continue
        ceilings.append(result[0])
        rules.append(result[1])
    seconds["asset_luck"] = time.perf_counter() - t0
    cpu["asset_luck"] = time.process_time() - c0

    t0, c0 = time.perf_counter(), time.process_time()
    tracks = read_tracks(lake)
    if tracks:
        say(f"single-asset tracks: {len(tracks)} entrant(s) against {TRACK_PLAYERS:,} zero-skill "
            "players per asset")
    with shared_players():  # assets with the same decision steps share their players
        track_rows = tracks_table(lake, provider, universe, start, end, tracks)
    seconds["asset_tracks"] = time.perf_counter() - t0
    cpu["asset_tracks"] = time.process_time() - c0

    t0, c0 = time.perf_counter(), time.process_time()
    corr = correlations(lake, provider, universe, end)
    seconds["correlations"] = time.perf_counter() - t0
    cpu["correlations"] = time.process_time() - c0
    season = pd.DataFrame([{
        "provider": provider_label(provider, universe),
        "market": "+".join(sorted({market_label(provider_of(provider, a)) for a in universe})),
        "season_start": start,
        "season_end": end, "cycles": len(times), "arena_players": arena_players,
        "asset_players": players, "seed": seed,
        "arena_rejections": rejected, "start_cash": START_CASH,
        "assets_without_luck_tables": ",".join(missing)}])
    tables = {"season": season, "cycle_prices": prices, "arena_luck": luck_returns,
              "arena_luck_band": band, "luck_ceiling": _typed(pd.DataFrame(ceilings), luck_ceiling_schema()),
              "reference_rules": _typed(pd.concat(rules, ignore_index=True) if rules else
                                        pd.DataFrame(), reference_rules_schema()), "correlations": corr,
              "asset_tracks": track_rows, "matched_players": matched,
              "matched_books": matched_books}
    return Analytics(tables, seconds, cpu,
                     {"cycle_prices": priced.kept, "arena_luck": arena.kept},
                     {k: w for k, w in (("cycle_prices", priced.why), ("arena_luck", arena.why))
                      if w}, state)


# the per-asset tables' columns, written even when no asset has one yet (a season's first cycle:
# a zero-skill distribution needs two bars on or after it), so dbt reads typed empty tables
@cache
def luck_ceiling_schema() -> pa.Schema:
    return pa.schema(
        [(c, pa.string()) for c in ("symbol", "asset_class", "grid")]
        + [(c, pa.int64()) for c in ("bars", "decision_steps")]
        + [(c, pa.string()) for c in ("step", "draw")]
        + [(c, pa.int64()) for c in ("players", "seed")]
        + [(c, pa.float64()) for c in ("cost_rate", *(f"q{round(q * 100):02d}" for q in BAND),
                                       "mean", "ceiling")])


@cache
def reference_rules_schema() -> pa.Schema:
    return pa.schema(
        [(c, pa.string()) for c in ("symbol", "rule", "kind")]
        + [(c, pa.float64()) for c in ("return", "turnover", "fees", "percentile", "rank_score")]
        + [("status", pa.string())] + [(c, pa.int64()) for c in ("history_bars", "needed_bars")]
        + [("rank", pa.float64())])


def _typed(frame: pd.DataFrame, schema: pa.Schema) -> pd.DataFrame:
    """``frame`` as it is; an empty one as the typed columns of ``schema``."""
    return frame if len(frame) else schema.empty_table().to_pandas()


def analytics_dir(lake: Lake) -> Path:
    return lake.root / ANALYTICS_DIR


def write_analytics(lake: Lake, analytics: Analytics) -> Path:
    """Publish the tables as ``<lake>/analytics/<table>.parquet`` and the build's state in
    ``<lake>/analytics/_state/``, replacing the previous set as a whole (staged, then swapped in
    with two renames)."""
    final = analytics_dir(lake)
    staging = lake.root / f".{ANALYTICS_DIR}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        for name, frame in analytics.tables.items():
            table = pa.Table.from_pandas(frame, preserve_index=False)
            pq.write_table(table, staging / f"{name}.parquet", compression="zstd")
        if analytics.state is not None:  # after the tables, whose files it vouches for
            analytics.state.write(staging)
        swap_dir(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def read_analytics(lake: Lake, name: str) -> pd.DataFrame:
    path = analytics_dir(lake) / f"{name}.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the season's analytics first")
    return pd.read_parquet(path)
