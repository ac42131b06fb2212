"""What a build of the season's tables leaves for the next one, so that a publication after a
new cycle computes that cycle, not the season again (:func:`~arena.pipeline.season_tables.build_analytics`).

Where: ``<lake>/analytics/_state/``, staged and swapped in with the tables it belongs to
(:func:`~arena.pipeline.season_tables.write_analytics`), so a state is never newer or older than
the tables beside it; dbt reads ``analytics/<table>.parquet`` and never sees it.

* ``state.json``: the format; what the state was computed for (provider, universe, arena
  players, seed, the arena's rules and the zero-skill profile); the season's cycle times; the
  SHA-256 of every file it vouches for (its books, and the ``cycle_prices`` and
  ``arena_luck_band`` tables whose rows a later build keeps); its checkpoints.
* ``books-<n>.parquet``, ``positions-<n>.parquet``: the arena's zero-skill players after the
  season's first ``n`` cycles (:class:`~arena.scoring.arena_luck.ZeroSkillBooks`: cash, fees,
  realised P&L, rejections and generator state per player; the positions in their order).

Checkpoints: after the last cycle and after the one before, so that a bar that arrives after a
publication (the bar closing at the cycle, fetched later) costs the next build one cycle more,
not the season. A checkpoint holds the digests of what the tables up to it consumed
(:class:`SeasonReads`): per asset, the SHA-256 of the bars its cycle prices come from (closed
by the checkpoint's cycle, from the earliest bar a kept price can depend on); per tradable
asset, of the 15-minute bars the zero-skill players' monitor read (opened from the first cycle
up to the checkpoint's cycle); and of the tradable assets' cycle prices up to it. No checkpoint
is placed at a cycle where the monitor would observe a bar opening at that very time (an NYSE
session's opening print): such a bar is not in the lake yet when the cycle is published.

Trust (:func:`load_state`, then each checkpoint against :class:`SeasonReads`): a checkpoint is
used when the state and every file it vouches for hash as recorded, it was computed for the
same inputs, its cycles are the season's first cycles now, and every digest matches the lake
now. Otherwise the tables are computed from scratch, and the reason is said: a damaged or
missing file by name, a restated or late bar by its asset and cycle, a changed schedule by its
cycle, another player count or seed by both values.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.core.sessions import bar_close_times, interval_delta, utc, utc_index
from arena.core.universe import Universe
from arena.data.bars import bar_frame_from_columns, utc_micros
from arena.data.lake import Lake, PartitionKey
from arena.data.providers.base import BAR_COLUMNS
from arena.engine.monitor import observations
from arena.engine.portfolio import Portfolio, Position
from arena.engine.rules import Rules
from arena.market.asof import Providers, price_intervals, provider_of
from arena.scoring.arena_luck import (
    MONITOR_INTERVAL,
    PlayerBook,
    RandomProfile,
    ZeroSkillBooks,
)

STATE_DIR = "_state"
MANIFEST = "state.json"
FORMAT = 1  # the layout of the state; a state of another format is not read
KEPT_TABLES = ("cycle_prices", "arena_luck_band")  # tables whose rows a later build keeps


class StateUnusable(Exception):
    """The stored state cannot be used; the message says why."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def season_inputs(provider: Providers, universe: Universe, *, players: int, seed: int,
                  rules: Rules, profile: RandomProfile) -> dict[str, object]:
    """What a state is computed for: another value of any of them is another simulation."""
    assets = [(a.symbol, a.asset_class, a.calendar, a.tradable) for a in universe]
    return {"provider": provider if isinstance(provider, str) else dict(sorted(provider.items())),
            "universe": _sha256(repr(assets).encode()), "arena_players": players, "seed": seed,
            "rules": repr(rules), "profile": repr(profile), "monitor_interval": MONITOR_INTERVAL}


def _micros(t: pd.Timestamp) -> int:
    """Epoch microseconds of a time (the lake's unit)."""
    return int(pd.Timestamp(t).as_unit("us").asm8.astype(np.int64))


# ----------------------------------------------------------------------------- what is read
@dataclass
class _Rows:
    """One partition's bars as read, packed: per row its open time (epoch microseconds) and the
    bits of its five values, 48 bytes (what is hashed); ``opens``: the open times."""

    packed: np.ndarray
    opens: np.ndarray

    @classmethod
    def of(cls, frame: pd.DataFrame) -> _Rows:
        opens = np.ascontiguousarray(utc_micros(frame["timestamp"]), dtype=np.int64)
        packed = np.empty((len(opens), len(BAR_COLUMNS)), dtype=np.int64)
        packed[:, 0] = opens
        for i, column in enumerate(BAR_COLUMNS[1:], start=1):  # no sub-frame selected
            packed[:, i] = frame[column].to_numpy(dtype="float64").view(np.int64)
        return cls(packed, opens)

    def frame(self, start: int, stop: int) -> pd.DataFrame:
        """Rows ``[start, stop)`` as the lake's bar frame."""
        values = np.ascontiguousarray(self.packed[start:stop, 1:].T).view(np.float64)
        return bar_frame_from_columns(self.opens[start:stop], values)

    def digests(self, first: int, ends: Sequence[int]) -> list[str]:
        """SHA-256 of rows ``[first, end)`` for each of ``ends``, in one pass."""
        out: dict[int, str] = {}
        digest, at = hashlib.sha256(), first
        for end in sorted(set(ends)):
            if end > at:  # whole rows of a C-ordered array: hashed where they lie
                digest.update(self.packed[at:end])
                at = end
            out[end] = digest.copy().hexdigest()
        return [out[e] for e in ends]


class SeasonReads:
    """The bars the season's tables consume, each partition read once per build: every
    tradable asset's 15-minute bars (the zero-skill players' monitor) and every asset's bars of
    the interval its cycle prices come from (:func:`arena.market.asof.price_intervals`), with
    the digests of what a build up to a given cycle consumed of them."""

    def __init__(self, lake: Lake, provider: Providers, universe: Universe,
                 times: Sequence[pd.Timestamp]) -> None:
        self.lake, self.provider, self.universe = lake, provider, universe
        self.times = list(times)
        self._rows: dict[PartitionKey, _Rows] = {}
        self._intervals: dict[str, str] | None = None

    def rows(self, key: PartitionKey) -> _Rows:
        if key not in self._rows:
            self._rows[key] = _Rows.of(self.lake.read_bars(key))
        return self._rows[key]

    def _monitor_key(self, symbol: str) -> PartitionKey:
        return PartitionKey(provider_of(self.provider, self.universe[symbol]), MONITOR_INTERVAL,
                            symbol)

    # ------------------------------------------------------------------ the monitor's bars
    def monitor_bars(self, since: pd.Timestamp) -> dict[str, pd.DataFrame]:
        """Each tradable asset's 15-minute bars opened in ``[since, last cycle)`` (the read of
        a simulation from scratch is ``since`` = the first cycle); assets without any left out."""
        lo, hi = _micros(since), _micros(self.times[-1])
        out = {}
        for asset in self.universe.tradable:
            rows = self.rows(self._monitor_key(asset.symbol))
            a, b = np.searchsorted(rows.opens, [lo, hi], side="left")
            if b > a:
                out[asset.symbol] = rows.frame(int(a), int(b))
        return out

    def monitor_digests(self, ends: Sequence[pd.Timestamp]) -> list[dict[str, str]]:
        """For each of ``ends``: per tradable asset, the digest of its 15-minute bars opened
        in ``[first cycle, end)``, what the monitor read for the windows up to ``end``."""
        first = _micros(self.times[0])
        out: list[dict[str, str]] = [{} for _ in ends]
        for asset in self.universe.tradable:
            rows = self.rows(self._monitor_key(asset.symbol))
            start = int(np.searchsorted(rows.opens, first, side="left"))
            stops = [max(start, int(np.searchsorted(rows.opens, _micros(e), side="left")))
                     for e in ends]
            for d, digest in zip(out, rows.digests(start, stops), strict=True):
                d[asset.symbol] = digest
        return out

    def observed_at_open(self, at: pd.Timestamp) -> bool:
        """Whether the monitor observes a bar opening at ``at`` at ``at`` itself for some
        tradable asset (an NYSE session's opening print): such a bar belongs to the window
        ending at ``at``, and the lake cannot hold it yet when that cycle is published."""
        probe = pd.DataFrame({"timestamp": [at], **{c: [1.0] for c in BAR_COLUMNS[1:]}})
        calendars = {a.calendar for a in self.universe.tradable}
        return any(observations(probe, c, at - pd.Timedelta(microseconds=1), at)
                   for c in sorted(calendars))

    # ------------------------------------------------------------------ the price bars
    def price_intervals(self) -> dict[str, str]:
        """The interval every asset's cycle prices come from (assets without bars left out)."""
        if self._intervals is None:
            finest: dict[str, dict[str, str]] = {}
            out = {}
            for asset in self.universe:
                source = provider_of(self.provider, asset)
                if source not in finest:
                    finest[source] = price_intervals(self.lake, source)
                if asset.symbol in finest[source]:
                    out[asset.symbol] = finest[source][asset.symbol]
            self._intervals = out
        return self._intervals

    def price_digests(self, ends: Sequence[pd.Timestamp], since: Mapping[str, int | None]
                      ) -> list[dict[str, str]]:
        """For each of ``ends``: per asset with price bars, the digest of its bars opened at or
        after ``since[symbol]`` (epoch microseconds; None: from its first bar) that closed by
        ``end``, the bars its cycle prices up to ``end`` can depend on."""
        out: list[dict[str, str]] = [{} for _ in ends]
        for symbol, interval in sorted(self.price_intervals().items()):
            asset = self.universe[symbol]
            key = PartitionKey(provider_of(self.provider, asset), interval, symbol)
            rows = self.rows(key)
            lo = since.get(symbol)
            start = 0 if lo is None else int(np.searchsorted(rows.opens, lo, side="left"))
            stops = [max(start, self._closed_by(rows, asset.calendar, interval, e)) for e in ends]
            for d, digest in zip(out, rows.digests(start, stops), strict=True):
                d[symbol] = digest
        return out

    @staticmethod
    def _closed_by(rows: _Rows, calendar: str, interval: str, end: pd.Timestamp) -> int:
        """How many of the rows (in time order) have closed by ``end``. A bar closes at most one
        interval after it opens, so only those opened in ``(end - interval, end]`` are asked."""
        at = _micros(end)
        step = int(interval_delta(interval).value // 1000)
        sure = int(np.searchsorted(rows.opens, at - step, side="right"))
        maybe = int(np.searchsorted(rows.opens, at, side="right"))
        if maybe == sure:
            return sure
        closes = bar_close_times(calendar, interval, utc_index(rows.opens[sure:maybe])).asi8
        return sure + int(np.count_nonzero(closes <= at))


def price_rows_digest(prices: pd.DataFrame, symbols: Sequence[str], end: pd.Timestamp) -> str:
    """Digest of the long cycle prices of ``symbols`` at the cycles up to ``end`` (each row's
    cycle, its symbol's place in ``symbols`` and its price)."""
    codes = pd.Categorical(prices["symbol"], categories=list(symbols)).codes
    rows = np.flatnonzero((prices["cycle_at"] <= end).to_numpy() & (codes >= 0))
    digest = hashlib.sha256("\0".join(symbols).encode())
    digest.update(pd.DatetimeIndex(prices["cycle_at"]).as_unit("us").asi8[rows].tobytes())
    digest.update(codes[rows].astype(np.int64).tobytes())
    digest.update(prices["price"].to_numpy(dtype="float64")[rows].tobytes())
    return digest.hexdigest()


def price_sources(prices: pd.DataFrame, times: Sequence[pd.Timestamp],
                  intervals: Mapping[str, str]) -> dict[str, int | None]:
    """Per asset with price bars, the earliest open time (epoch microseconds) a price of the
    table can depend on: one interval before its earliest print (a bar closing after that
    print and by the cycle, or the bar itself, would change it); None when some cycle has no
    price of the asset (a bar anywhere before it would give one)."""
    out: dict[str, int | None] = {}
    counts = prices.groupby("symbol")["cycle_at"].nunique()
    first = prices.groupby("symbol")["printed_at"].min()
    for symbol, interval in intervals.items():
        if counts.get(symbol, 0) < len(times):
            out[symbol] = None
        else:
            out[symbol] = _micros(first[symbol]) - int(interval_delta(interval).value // 1000)
    return out


# ----------------------------------------------------------------------------- books on disk
def books_tables(books: ZeroSkillBooks) -> tuple[pa.Table, pa.Table]:
    """(players, positions) of ``books`` as tables: the generators' 128-bit states as decimal
    text; each player's positions in their order (equity sums them in that order)."""
    players: dict[str, list[Any]] = {c: [] for c in (
        "player", "cash", "fees_paid", "realised_pnl", "rejections", "rng", "rng_state",
        "rng_inc", "rng_has_uint32", "rng_uinteger")}
    positions: dict[str, list[Any]] = {c: [] for c in (
        "player", "symbol", "side", "quantity", "entry_price", "opened_at_ns",
        "invalidation_price", "thesis", "invalidation")}
    for i, book in enumerate(books.books):
        p, rng = book.portfolio, book.rng_state
        for col, value in (("player", i), ("cash", p.cash), ("fees_paid", p.fees_paid),
                           ("realised_pnl", p.realised_pnl), ("rejections", book.rejections),
                           ("rng", rng["bit_generator"]), ("rng_state", str(rng["state"]["state"])),
                           ("rng_inc", str(rng["state"]["inc"])),
                           ("rng_has_uint32", int(rng["has_uint32"])),
                           ("rng_uinteger", int(rng["uinteger"]))):
            players[col].append(value)
        for pos in p.positions.values():
            for col, value in (("player", i), ("symbol", pos.symbol), ("side", pos.side),
                               ("quantity", pos.quantity), ("entry_price", pos.entry_price),
                               ("opened_at_ns", pd.Timestamp(pos.opened_at).as_unit("ns").value),
                               ("invalidation_price", pos.invalidation_price),
                               ("thesis", pos.thesis), ("invalidation", pos.invalidation)):
                positions[col].append(value)
    player_types = {"player": pa.int64(), "cash": pa.float64(), "fees_paid": pa.float64(),
                    "realised_pnl": pa.float64(), "rejections": pa.int64(), "rng": pa.string(),
                    "rng_state": pa.string(), "rng_inc": pa.string(),
                    "rng_has_uint32": pa.int64(), "rng_uinteger": pa.int64()}
    position_types = {"player": pa.int64(), "symbol": pa.string(), "side": pa.string(),
                      "quantity": pa.float64(), "entry_price": pa.float64(),
                      "opened_at_ns": pa.int64(), "invalidation_price": pa.float64(),
                      "thesis": pa.string(), "invalidation": pa.string()}
    return (pa.table({c: pa.array(v, player_types[c]) for c, v in players.items()}),
            pa.table({c: pa.array(v, position_types[c]) for c, v in positions.items()}))


def books_from_tables(players: pa.Table, positions: pa.Table, *, seed: int, cycles: int,
                      last_cycle: pd.Timestamp | None) -> ZeroSkillBooks:
    """The books :func:`books_tables` wrote (players numbered 0, 1, ... in order)."""
    rows = players.to_pydict()
    held: dict[int, dict[str, Position]] = {}
    pos = positions.to_pydict()
    for j in range(positions.num_rows):
        level = pos["invalidation_price"][j]
        held.setdefault(pos["player"][j], {})[pos["symbol"][j]] = Position(
            pos["symbol"][j], pos["side"][j], pos["quantity"][j], pos["entry_price"][j],
            pd.Timestamp(pos["opened_at_ns"][j], unit="ns", tz="UTC"), level,
            pos["thesis"][j], pos["invalidation"][j])
    books = []
    for i in range(players.num_rows):
        if rows["player"][i] != i:
            raise StateUnusable(f"the books list player {rows['player'][i]} in row {i}")
        portfolio = Portfolio(rows["cash"][i], MappingProxyType(held.get(i, {})),
                              rows["fees_paid"][i], rows["realised_pnl"][i])
        state = {"bit_generator": rows["rng"][i],
                 "state": {"state": int(rows["rng_state"][i]), "inc": int(rows["rng_inc"][i])},
                 "has_uint32": rows["rng_has_uint32"][i], "uinteger": rows["rng_uinteger"][i]}
        books.append(PlayerBook(portfolio, state, rows["rejections"][i]))
    if set(held) - set(range(len(books))):
        raise StateUnusable("the positions name a player the books do not have")
    return ZeroSkillBooks(seed, tuple(books), cycles, last_cycle)


# ----------------------------------------------------------------------------- the state
@dataclass
class PriceCheckpoint:
    """The cycle prices of the season's first ``cycles`` cycles, and per asset the digest of
    the price bars they can depend on (:meth:`SeasonReads.price_digests`)."""

    cycles: int
    bars: dict[str, str]


@dataclass
class BooksCheckpoint:
    """The arena's zero-skill players after their first ``cycles`` cycles, and the digests of
    what they consumed: per tradable asset its monitor bars (:meth:`SeasonReads.monitor_digests`),
    and the tradable assets' cycle prices (:func:`price_rows_digest`). ``books`` is given when
    written, read from its files on demand when loaded."""

    cycles: int
    monitor_bars: dict[str, str]
    prices: str
    books: ZeroSkillBooks | None = None


@dataclass
class SeasonState:
    """A build's state (see the module docstring): what it was computed for, the season's
    cycles and the arena's (the cycles with a price), where each asset's price bars come from,
    and the checkpoints."""

    inputs: dict[str, object]
    cycles: list[pd.Timestamp]
    intervals: dict[str, str]
    since: dict[str, int | None]
    prices: list[PriceCheckpoint]
    arena_cycles: list[pd.Timestamp]
    arena: list[BooksCheckpoint]
    root: Path | None = None  # the analytics folder it was read from

    # ------------------------------------------------------------------ writing
    def write(self, analytics: Path) -> None:
        """Write the state into the (staging) analytics folder, after its tables."""
        folder = analytics / STATE_DIR
        folder.mkdir(parents=True, exist_ok=True)
        files: dict[str, str] = {}
        for point in self.arena:
            assert point.books is not None, "a checkpoint is written with its books"
            for name, table in zip(_book_files(point.cycles), books_tables(point.books),
                                   strict=True):
                pq.write_table(table, folder / name, compression="zstd")
                files[name] = file_sha256(folder / name)
        for table in KEPT_TABLES:
            files[f"../{table}.parquet"] = file_sha256(analytics / f"{table}.parquet")
        manifest = {
            "format": FORMAT, "inputs": self.inputs,
            "cycles": [t.isoformat() for t in self.cycles], "intervals": self.intervals,
            "since": self.since,
            "prices": [{"cycles": p.cycles, "bars": p.bars} for p in self.prices],
            "arena_cycles": [t.isoformat() for t in self.arena_cycles],
            "arena": [{"cycles": p.cycles, "monitor_bars": p.monitor_bars, "prices": p.prices}
                      for p in self.arena],
            "files": files}
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n",
                                       encoding="utf-8")

    # ------------------------------------------------------------------ reading
    def table(self, name: str) -> pd.DataFrame:
        """A kept table (``cycle_prices``, ``arena_luck_band``) as it was written."""
        assert self.root is not None and name in KEPT_TABLES
        return pd.read_parquet(self.root / f"{name}.parquet")

    def books(self, point: BooksCheckpoint) -> ZeroSkillBooks:
        """The books of ``point`` (:class:`StateUnusable` when their files do not read)."""
        if point.books is None:
            assert self.root is not None
            folder = self.root / STATE_DIR
            try:
                players, positions = (pq.read_table(folder / n) for n in _book_files(point.cycles))
                point.books = books_from_tables(
                    players, positions, seed=int(self.inputs["seed"]),  # type: ignore[call-overload]
                    cycles=point.cycles, last_cycle=self.arena_cycles[point.cycles - 1])
            except (OSError, KeyError, ValueError, TypeError, pa.ArrowException) as exc:
                raise StateUnusable(f"the stored books after {point.cycles} cycles do not read "
                                    f"({type(exc).__name__}: {exc})") from exc
        return point.books


def changed_cycle(stored: Sequence[pd.Timestamp], now: Sequence[pd.Timestamp],
                  count: int) -> str | None:
    """Why the first ``count`` of the ``stored`` cycles are not the first of ``now`` (None:
    they are)."""
    if count > len(now):
        return (f"the stored tables reach cycle {stored[count - 1]:%Y-%m-%d %H:%M}, after the "
                f"last one now ({now[-1]:%Y-%m-%d %H:%M})")
    for was, is_ in zip(stored[:count], now, strict=False):
        if was != is_:
            return f"the season's cycles changed at {min(was, is_):%Y-%m-%d %H:%M}"
    return None


def changed_assets(stored: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """The assets whose digests differ (or are in one map only), in order."""
    return [s for s in sorted(set(stored) | set(now)) if stored.get(s) != now.get(s)]


def _short(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


def _book_files(cycles: int) -> tuple[str, str]:
    return f"books-{cycles}.parquet", f"positions-{cycles}.parquet"


def load_state(analytics: Path, inputs: Mapping[str, object]) -> tuple[SeasonState | None, str]:
    """The state stored beside the tables in ``analytics`` when it is whole (every file it
    vouches for hashes as recorded) and was computed for ``inputs``; else None and why."""
    folder = analytics / STATE_DIR
    path = folder / MANIFEST
    if not path.is_file():
        return None, "no stored state (the first build of these tables)"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT:
            return None, (f"the stored state has format {manifest.get('format')!r}; this "
                          f"build reads format {FORMAT}")
        for name, digest in manifest["files"].items():
            file = folder / name
            if not file.is_file():
                return None, f"the stored state's {Path(name).name} is missing"
            if file_sha256(file) != digest:
                return None, f"the stored state's {Path(name).name} does not hash as recorded"
        stored = manifest["inputs"]
        for key in sorted(set(stored) | set(inputs)):
            if stored.get(key) != inputs.get(key):
                return None, (f"the stored state was computed for {key} "
                              f"{_short(stored.get(key))}; this build is for "
                              f"{_short(inputs.get(key))}")
        state = SeasonState(
            dict(stored), [utc(t) for t in manifest["cycles"]], dict(manifest["intervals"]),
            dict(manifest["since"]),
            [PriceCheckpoint(int(p["cycles"]), dict(p["bars"])) for p in manifest["prices"]],
            [utc(t) for t in manifest["arena_cycles"]],
            [BooksCheckpoint(int(p["cycles"]), dict(p["monitor_bars"]), str(p["prices"]))
             for p in manifest["arena"]], analytics)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return None, f"the stored state cannot be read ({type(exc).__name__}: {exc})"
    return state, ""
