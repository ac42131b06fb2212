"""The signal server's own store: every debate it answered, and what the price did after.

Not a season's lake: terminals ask about any symbol at any time. Layout (Parquet, one file per
record, never rewritten)::

    <store>/debates/day=<YYYY-MM-DD>/<id>.parquet    one request and its whole answer
    <store>/outcomes/day=<YYYY-MM-DD>/<id>-h<N>.parquet  the return N bars after a debate
    <store>/debates/day=_schema/_schema.parquet      empty, with the schema (dbt's globs match
    <store>/outcomes/day=_schema/_schema.parquet     before the first record)

An outcome is attached when a later request of the same terminal for the same symbol carries
bar times that reach ``N`` bars past the debate's last bar (:meth:`SignalStore.attach_outcomes`),
or when a lake holds those bars for a symbol of its universe (:func:`attach_from_lake`, ``arena
signal-marts --lake``): the return from the debate's last close to the close ``N`` bars later,
for each of :data:`HORIZONS`, on bars of the debate's own length.

Whom the store believes, and when:

* only bars that closed by the server's clock count (bars are labelled by their open time: a
  bar at ``t`` of length ``L`` closed at ``t + L``), and never a series' last bar, which may
  still be forming;
* a request speaks for its own terminal only (``terminal``: an id per connection, or per
  token): it attaches outcomes to that terminal's debates, never to another's; a lake speaks
  for every debate on its symbols (its ``source`` is ``lake``);
* a terminal's bars that the store rests on (a debate's last bar when it had closed, the bar
  an outcome ended on) are kept: a later series of that terminal whose closed bar at one of
  those times disagrees (beyond :data:`CLOSE_TOLERANCE`, relative) is refused whole with a
  :class:`BarConflict`, before anything is attached - never averaged in, never overwriting.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.core.errors import UnusableInput
from arena.core.sessions import INTERVALS, TS_UNIT
from arena.data.lake import Lake
from arena.pipeline.warehouse import SIGNALS_TAG, MartsError, build_dir, dbt_args, open_built

HORIZONS = (1, 5, 20)  # bars after the debate's last bar
CLOSE_TOLERANCE = 1e-9  # relative: two closes of one bar differ beyond it, or they are one
LAKE = "lake"  # the source of outcomes a lake attached (they answer to no terminal)
_TS = pa.timestamp(TS_UNIT, tz="UTC")
DEBATE_SCHEMA = pa.schema([
    ("id", pa.string()), ("received_at", _TS), ("command", pa.string()),
    ("symbol", pa.string()), ("bars", pa.int64()), ("last_bar_at", _TS),
    ("last_close", pa.float64()), ("signal", pa.string()), ("comment", pa.string()),
    ("rule", pa.string()), ("judge_signal", pa.string()), ("overruled", pa.bool_()),
    ("bull_lean", pa.string()), ("bull_strength", pa.int64()), ("bear_lean", pa.string()),
    ("bear_strength", pa.int64()), ("risk", pa.string()), ("bull", pa.string()),
    ("bear", pa.string()), ("risk_text", pa.string()), ("judge", pa.string()),
    ("analysts", pa.string()), ("model_calls", pa.int64()), ("latency_s", pa.float64()),
    ("error", pa.string()), ("bar_seconds", pa.float64()), ("terminal", pa.string()),
    ("request_id", pa.string()), ("judge_first", pa.string()), ("judge_repaired", pa.bool_()),
    ("judge_rules", pa.string()),
])
OUTCOME_SCHEMA = pa.schema([
    ("debate_id", pa.string()), ("symbol", pa.string()), ("horizon_bars", pa.int64()),
    ("from_at", _TS), ("to_at", _TS), ("from_close", pa.float64()), ("to_close", pa.float64()),
    ("return", pa.float64()), ("attached_at", _TS), ("source", pa.string()),
])


class BarConflict(UnusableInput, ValueError):
    """A series whose bar disagrees with one the store already rests on (nothing attached)."""


@dataclass(frozen=True)
class Pending:
    debate_id: str
    last_bar_at: pd.Timestamp
    last_close: float
    missing: tuple[int, ...]
    bar_seconds: float | None
    terminal: str | None = None  # None: a debate from before terminals had ids (a lake only)


_BarKey = tuple[str, str, float]  # (terminal, symbol, bar seconds)


class SignalStore:
    """The store, read once per process and then kept in memory beside the files it writes
    (one server writes a store)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        for folder, schema in (("debates", DEBATE_SCHEMA), ("outcomes", OUTCOME_SCHEMA)):
            path = self.root / folder / "day=_schema" / "_schema.parquet"
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                _write(schema.empty_table(), path)
        # one lock for the memory and for attaching: a series is checked against the kept
        # bars and its outcomes written before the next series of the symbol is looked at
        self._lock = threading.RLock()
        self._pending: dict[str, dict[str, Pending]] | None = None
        self._bars: dict[_BarKey, dict[pd.Timestamp, float]] = {}

    def add_debate(self, record: Mapping[str, object]) -> str:
        """Keep one request and its answer; returns its id."""
        row = {name: record.get(name) for name in DEBATE_SCHEMA.names}
        row["id"] = row["id"] or uuid.uuid4().hex
        table = pa.Table.from_pylist([row], schema=DEBATE_SCHEMA)
        day = pd.Timestamp(row["received_at"]).strftime("%Y-%m-%d")
        _write(table, self.root / "debates" / f"day={day}" / f"{row['id']}.parquet")
        with self._lock:
            if self._pending is not None and _open(row):
                pending = _pending_of(row, HORIZONS)
                self._pending.setdefault(str(row["symbol"]), {})[pending.debate_id] = pending
                self._keep_debate_bar(row)
        return str(row["id"])

    def debates(self) -> pd.DataFrame:
        return _read(self.root / "debates", DEBATE_SCHEMA)

    def outcomes(self) -> pd.DataFrame:
        return _read(self.root / "outcomes", OUTCOME_SCHEMA)

    def _load(self) -> dict[str, dict[str, Pending]]:
        debates = self.debates()
        done = self.outcomes()
        have = set(zip(done["debate_id"], done["horizon_bars"], strict=True))
        out: dict[str, dict[str, Pending]] = {}
        of_debate: dict[str, Mapping[str, Any]] = {}
        for row in debates.to_dict("records"):
            if not _open(row):
                continue
            of_debate[row["id"]] = row
            self._keep_debate_bar(row)
            missing = tuple(h for h in HORIZONS if (row["id"], h) not in have)
            if missing:
                out.setdefault(row["symbol"], {})[row["id"]] = _pending_of(row, missing)
        for outcome in done.to_dict("records"):  # the bars a terminal's outcomes ended on
            debate = of_debate.get(outcome["debate_id"])
            if debate is not None and _known(debate.get("terminal")) \
                    and outcome.get("source") == debate["terminal"]:
                self._keep_bar((str(debate["terminal"]), str(debate["symbol"]),
                                float(debate["bar_seconds"])),
                               pd.Timestamp(outcome["to_at"]), float(outcome["to_close"]))
        return out

    def _keep_debate_bar(self, row: Mapping[str, Any]) -> None:
        """A debate's last bar is one the store rests on when it had closed by the request."""
        at, length = pd.Timestamp(row["last_bar_at"]), float(row["bar_seconds"])
        if _known(row.get("terminal")) and at + pd.Timedelta(seconds=length) <= \
                pd.Timestamp(row["received_at"]):
            self._keep_bar((str(row["terminal"]), str(row["symbol"]), length), at,
                           float(row["last_close"]))

    def _keep_bar(self, key: _BarKey, at: pd.Timestamp, close: float) -> None:
        self._bars.setdefault(key, {}).setdefault(at, close)  # the first one stands

    def pending(self, symbol: str) -> list[Pending]:
        """The symbol's debates with a bar time and a horizon still without its outcome."""
        with self._lock:
            if self._pending is None:
                self._pending = self._load()
            return list(self._pending.get(symbol, {}).values())

    def attach_outcomes(self, symbol: str, times: pd.DatetimeIndex, closes: np.ndarray,
                        now: pd.Timestamp, *, terminal: str) -> int:
        """Attach every outcome the series (``times``, ``closes``, oldest first) of
        ``terminal`` now reaches for that terminal's earlier debates on the symbol, on bars of
        the same length; returns how many. Only bars closed by ``now`` (the server's clock)
        count, and never the series' last bar (it may still be forming). A closed bar that
        disagrees with one the store keeps for the terminal is a :class:`BarConflict`: then
        nothing is attached."""
        with self._lock:
            self._check(terminal, symbol, times, closes, now)
            return self._attach(symbol, times, closes, now, terminal)

    def _check(self, terminal: str, symbol: str, times: pd.DatetimeIndex, closes: np.ndarray,
               now: pd.Timestamp) -> None:
        spacing = bar_seconds(times)
        self.pending(symbol)  # loads the kept bars on first use
        kept = self._bars.get((terminal, symbol, spacing)) if spacing is not None else None
        if not kept:
            return
        for i in _closed(times, spacing, now):
            stored = kept.get(times[i])
            if stored is not None and not _same(stored, float(closes[i])):
                raise BarConflict(
                    f"{symbol}: the bar at {times[i].isoformat()} closes at "
                    f"{float(closes[i]):g} in this series but at {stored:g} in the signal "
                    "store, which keeps the first close of a bar it rests on: nothing was "
                    "attached and nothing answered (send the bars of the same feed, or leave "
                    "out the times)")

    def _attach(self, symbol: str, times: pd.DatetimeIndex, closes: np.ndarray,
                now: pd.Timestamp, source: str) -> int:
        """Attach from a series already checked; ``source`` is a terminal (its own debates
        only) or :data:`LAKE` (every debate)."""
        attached = 0
        positions = {t: i for i, t in enumerate(times)}
        spacing = bar_seconds(times)
        closed = set(_closed(times, spacing, now))
        for debate in self.pending(symbol):
            start = positions.get(debate.last_bar_at)
            if start is None or debate.bar_seconds != spacing:
                continue
            if source != LAKE and debate.terminal != source:  # another terminal's debate
                continue
            done = []
            for horizon in debate.missing:
                end = start + horizon
                if end not in closed:
                    continue
                row = {"debate_id": debate.debate_id, "symbol": symbol, "horizon_bars": horizon,
                       "from_at": debate.last_bar_at, "to_at": times[end],
                       "from_close": debate.last_close, "to_close": float(closes[end]),
                       "return": float(closes[end]) / debate.last_close - 1.0,
                       "attached_at": now, "source": source}
                # one file name per (debate, horizon), in the debate's own day: never twice
                day = debate.last_bar_at.strftime("%Y-%m-%d")
                _write(pa.Table.from_pylist([row], schema=OUTCOME_SCHEMA),
                       self.root / "outcomes" / f"day={day}" /
                       f"{debate.debate_id}-h{horizon}.parquet")
                if source != LAKE:
                    self._keep_bar((source, symbol, float(spacing or 0.0)), times[end],
                                   float(closes[end]))
                done.append(horizon)
                attached += 1
            assert self._pending is not None
            left = tuple(h for h in debate.missing if h not in done)
            if left:
                self._pending[symbol][debate.debate_id] = Pending(
                    debate.debate_id, debate.last_bar_at, debate.last_close, left,
                    debate.bar_seconds, debate.terminal)
            else:
                self._pending[symbol].pop(debate.debate_id, None)
        return attached


def attach_from_lake(store: SignalStore, lake: Lake, now: pd.Timestamp) -> int:
    """Attach outcomes from a lake's bars (complete bars only, as the lake stores them, closed
    by ``now``) to the debates on its symbols whose bars have the same length, whichever
    terminal asked; returns how many."""
    attached = 0
    symbols = {key.symbol for key in lake.partitions()}
    for symbol in sorted(symbols):
        lengths = {p.bar_seconds for p in store.pending(symbol)}
        for key in lake.partitions():
            if key.symbol != symbol or INTERVALS[key.interval].total_seconds() not in lengths:
                continue
            bars = lake.read_bars(key)
            # the lake's last bar is complete: a bar after it stands for the one still forming
            times = pd.DatetimeIndex([*bars["timestamp"], bars["timestamp"].iloc[-1]
                                      + INTERVALS[key.interval]]).as_unit(TS_UNIT)
            closes = np.append(bars["close"].to_numpy(dtype=float), np.nan)
            with store._lock:
                attached += store._attach(symbol, times, closes, now, LAKE)
    return attached


def _closed(times: pd.DatetimeIndex, spacing: float | None, now: pd.Timestamp) -> list[int]:
    """Positions of the bars closed by ``now``, the last bar of the series left out."""
    if spacing is None:
        return []
    ends = times[:-1] + pd.Timedelta(seconds=spacing)
    return [int(i) for i in np.flatnonzero(ends <= now)]


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= CLOSE_TOLERANCE * max(abs(a), abs(b))


def _known(value: object) -> bool:
    return isinstance(value, str) and bool(value)


def _pending_of(row: Mapping[str, Any], missing: tuple[int, ...]) -> Pending:
    terminal = row.get("terminal")
    return Pending(str(row["id"]), pd.Timestamp(row["last_bar_at"]), float(row["last_close"]),
                   missing, row.get("bar_seconds"), str(terminal) if _known(terminal) else None)


def bar_seconds(times: pd.DatetimeIndex) -> float | None:
    """The bars' length in seconds (the median step), None for one bar."""
    if len(times) < 2:
        return None
    return float(np.median(np.diff(times.asi8)) / 1e6)  # microseconds


def _open(row: Mapping[str, object]) -> bool:
    return all(row.get(k) is not None and not pd.isna(row.get(k))  # type: ignore[arg-type]
               for k in ("last_bar_at", "last_close", "bar_seconds"))


def _write(table: pa.Table, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)


def _read(folder: Path, schema: pa.Schema) -> pd.DataFrame:
    files: Sequence[Path] = sorted(folder.glob("day=*/*.parquet"))
    tables = [pq.read_table(f, schema=schema, partitioning=None) for f in files]
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    return table.to_pandas()


def build_signal_marts(store: SignalStore, invoke: Any = None) -> Path:
    """``dbt build`` of the signal models over the store (``<store>/dbt/warehouse.duckdb``),
    then ``signal_patterns`` as ``<store>/marts/signal_patterns.parquet``; returns that file.
    :class:`arena.pipeline.warehouse.MartsError` names what failed."""
    lake = Lake(store.root)
    if invoke is None:
        from dbt.cli.main import dbtRunner  # dbt is slow to import: the marts' command only

        invoke = dbtRunner().invoke
    result = invoke(dbt_args(lake, "build", "--select", f"tag:{SIGNALS_TAG}", "--quiet",
                             more_vars={"signals": str(store.root.resolve())}))
    if not getattr(result, "success", False):
        raise MartsError(f"dbt build of the signal models failed: "
                         f"{getattr(result, 'exception', None) or 'a model or test failed'}")
    out = store.root / "marts" / "signal_patterns.parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open_built(build_dir(lake) / "warehouse.duckdb") as con:  # as dbt opened it
        quoted = str(out).replace("'", "''")
        con.execute(f"copy (select * from marts.signal_patterns order by all) to '{quoted}' "
                    "(format parquet)")
    return out
