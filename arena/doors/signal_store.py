"""The signal server's own store: every debate it answered, and what the price did after.

Not a season's lake: terminals ask about any symbol at any time. Layout (Parquet, one file per
record, never rewritten)::

    <store>/debates/day=<YYYY-MM-DD>/<id>.parquet    one request and its whole answer
    <store>/outcomes/day=<YYYY-MM-DD>/<id>-h<N>.parquet  the return N bars after a debate
    <store>/debates/day=_schema/_schema.parquet      empty, with the schema (dbt's globs match
    <store>/outcomes/day=_schema/_schema.parquet     before the first record)

An outcome is attached when a later request for the same symbol carries bar times that reach
``N`` bars past the debate's last bar (:meth:`SignalStore.attach_outcomes`), or when a lake
holds those bars for a symbol of its universe (:func:`attach_from_lake`, ``arena signal-marts
--lake``): the return from the debate's last close to the close ``N`` bars later, for each of
:data:`HORIZONS`, on bars of the debate's own length.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.core.sessions import INTERVALS, TS_UNIT
from arena.data.lake import Lake
from arena.pipeline.warehouse import SIGNALS_TAG, MartsError, build_dir, dbt_args

HORIZONS = (1, 5, 20)  # bars after the debate's last bar
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
    ("error", pa.string()), ("bar_seconds", pa.float64()),
])
OUTCOME_SCHEMA = pa.schema([
    ("debate_id", pa.string()), ("symbol", pa.string()), ("horizon_bars", pa.int64()),
    ("from_at", _TS), ("to_at", _TS), ("from_close", pa.float64()), ("to_close", pa.float64()),
    ("return", pa.float64()), ("attached_at", _TS),
])


@dataclass(frozen=True)
class Pending:
    debate_id: str
    last_bar_at: pd.Timestamp
    last_close: float
    missing: tuple[int, ...]
    bar_seconds: float | None


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
        self._lock = threading.Lock()
        self._pending: dict[str, dict[str, Pending]] | None = None

    def add_debate(self, record: Mapping[str, object]) -> str:
        """Keep one request and its answer; returns its id."""
        row = {name: record.get(name) for name in DEBATE_SCHEMA.names}
        row["id"] = row["id"] or uuid.uuid4().hex
        table = pa.Table.from_pylist([row], schema=DEBATE_SCHEMA)
        day = pd.Timestamp(row["received_at"]).strftime("%Y-%m-%d")
        _write(table, self.root / "debates" / f"day={day}" / f"{row['id']}.parquet")
        with self._lock:
            if self._pending is not None and _open(row):
                self._pending.setdefault(str(row["symbol"]), {})[str(row["id"])] = Pending(
                    str(row["id"]), pd.Timestamp(row["last_bar_at"]),
                    float(row["last_close"]), HORIZONS, row.get("bar_seconds"))
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
        for row in debates.to_dict("records"):
            if not _open(row):
                continue
            missing = tuple(h for h in HORIZONS if (row["id"], h) not in have)
            if missing:
                out.setdefault(row["symbol"], {})[row["id"]] = Pending(
                    row["id"], pd.Timestamp(row["last_bar_at"]), float(row["last_close"]),
                    missing, row.get("bar_seconds"))
        return out

    def pending(self, symbol: str) -> list[Pending]:
        """The symbol's debates with a bar time and a horizon still without its outcome."""
        with self._lock:
            if self._pending is None:
                self._pending = self._load()
            return list(self._pending.get(symbol, {}).values())

    def attach_outcomes(self, symbol: str, times: pd.DatetimeIndex, closes: np.ndarray,
                        now: pd.Timestamp) -> int:
        """Attach every outcome the series (``times``, ``closes``, oldest first) now reaches for
        the symbol's earlier debates on bars of the same length; returns how many. The series'
        last bar may still be forming: only the bars before it count."""
        attached = 0
        positions = {t: i for i, t in enumerate(times)}
        spacing = bar_seconds(times)
        for debate in self.pending(symbol):
            start = positions.get(debate.last_bar_at)
            if start is None or debate.bar_seconds != spacing:
                continue
            done = []
            for horizon in debate.missing:
                end = start + horizon
                if end >= len(times) - 1:
                    continue
                row = {"debate_id": debate.debate_id, "symbol": symbol, "horizon_bars": horizon,
                       "from_at": debate.last_bar_at, "to_at": times[end],
                       "from_close": debate.last_close, "to_close": float(closes[end]),
                       "return": float(closes[end]) / debate.last_close - 1.0,
                       "attached_at": now}
                # one file name per (debate, horizon), in the debate's own day: never twice
                day = debate.last_bar_at.strftime("%Y-%m-%d")
                _write(pa.Table.from_pylist([row], schema=OUTCOME_SCHEMA),
                       self.root / "outcomes" / f"day={day}" /
                       f"{debate.debate_id}-h{horizon}.parquet")
                done.append(horizon)
                attached += 1
            with self._lock:
                assert self._pending is not None
                left = tuple(h for h in debate.missing if h not in done)
                if left:
                    self._pending[symbol][debate.debate_id] = Pending(
                        debate.debate_id, debate.last_bar_at, debate.last_close, left,
                        debate.bar_seconds)
                else:
                    self._pending[symbol].pop(debate.debate_id, None)
        return attached


def attach_from_lake(store: SignalStore, lake: Lake, now: pd.Timestamp) -> int:
    """Attach outcomes from a lake's bars (complete bars only, as the lake stores them) to the
    debates on its symbols whose bars have the same length; returns how many."""
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
            attached += store.attach_outcomes(symbol, times, closes, now)
    return attached


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
    with duckdb.connect(str(build_dir(lake) / "warehouse.duckdb")) as con:  # as dbt opened it
        quoted = str(out).replace("'", "''")
        con.execute(f"copy (select * from signal_patterns order by all) to '{quoted}' "
                    "(format parquet)")
    return out
