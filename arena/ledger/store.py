"""The ledger: append-only Parquet event records, each written exactly once.

Everything a contestant did in a cycle is one immutable **record**, keyed by (cycle, contestant):
the key is the idempotency key. Automatic closes of the invalidation monitor are records of their
own, keyed by (window, contestant). Portfolio state is never stored: it is the fold over the
recorded fills (and hold level moves) in time order, so a record written twice would double
trades - which the write protocol below rules out.

Layout under ``<lake root>/ledger/`` (one directory per record, one Parquet file per table)::

    cycles/cycle=2025-11-26T16-00-00/contestant=momentum/
        outcome.parquet    1 row: status (traded|no_trade|forfeited|skipped, see
                           arena.engine.outcomes), repaired, parse errors, errors, prompt hash,
                           counts
        calls.parquet      one row per model call: role, model, tokens in/out, latency, cost, ...
        messages.parquet   the conversation; a system/user message that is part of the prompt
                           is stored as (prompt_sha256, prompt_offset, chars), others inline
        responses.parquet  response text per round ("answer", "repair"), the parser's notes;
                           ``raw_json``: the exact text as a JSON string literal when it held
                           characters UTF-8 cannot store (a lone surrogate), else null
        decisions.parquet  parsed decisions per round: action, symbol, the decision as JSON
        rejections.parquet code, message, decision index, round
        fills.parquet      every Fill field + round + seq (+ notional for analysts)
        levels.parquet     accepted holds that moved an invalidation level (no fill, but state)
        equity.parquet     snapshot after the cycle: cash, equity, fees_paid, realised_pnl, positions
    monitor/window=2025-11-26T16-00-00_2025-11-26T16-15-00/contestant=momentum/
        outcome.parquet, fills.parquet                   automatic closes of one monitor window
    prompts/<sha256>.txt   each prompt text once, content-addressed
    cycles/cycle=_schema/contestant=_schema/<table>.parquet (and monitor/window=_schema/...)
                       every table empty, with its schema: a glob over a table's files always
                       matches one, so SQL readers (dbt) work before the first monitor window;
                       ``_schema`` is no contestant name (names start with a letter or digit)
    _staging/          records being written (never read; a crashed run's leftovers are removed)
    _locks/            one flock file per contestant (never deleted; holds the last holder's pid)

Every file also carries its key as real, typed columns (``cycle_at`` timestamp UTC and
``contestant``; ``window_start``/``window_end`` for the monitor), so readers need not rely on the
hive partition values (VARCHAR). Every table is written for every record, empty or not, with a
fixed schema, so DuckDB reads a table in place::

    select * from read_parquet('data_lake/ledger/cycles/*/*/fills.parquet', hive_partitioning=true)

Write protocol (``record_cycle`` / ``record_monitor``):

1. fast path: the record's directory exists -> "already recorded" (it only ever appears complete);
2. take an exclusive ``fcntl.flock`` on ``_locks/contestant=<name>.lock`` (waiting for a
   concurrent run), and check again: a run that waited finds the record and skips;
3. remove that contestant's staging leftovers (a crashed run's; no live writer can own them);
4. call ``build()`` (executes the trades), validate the record, refuse any secret in it;
5. write every table into ``_staging/<contestant>+<record>+<pid>+<token>/``, fsync the files and
   the directory, store the prompt text, then one ``os.rename`` of the directory to its final
   place (atomic; and it refuses to replace a non-empty directory), fsync the parent.

Why flock rather than a lock file with a pid or Prefect's lock manager: the kernel drops a flock
when its holder dies (crash, SIGKILL, ``os._exit``), so a lock left behind by a dead process is
never "stale" - the file stays, nobody holds it, the next run locks it at once; there is no pid
liveness guessing and no break-the-lock race. It excludes threads too (each call opens its own
file description). ``arena/`` must not import Prefect (DESIGN), and flock needs no server. The
lock is per contestant, not per record: a contestant's records (cycles and monitor windows) are
serialised, so a ``build`` reading ``portfolio()`` sees every record committed before it and two
monitor windows of one contestant cannot overlap. Limits: flock is local (Linux, one host; NFS and
object storage need another lock manager), and a ``build`` must not fork children that outlive it
(a forked child inherits the lock).

``build`` is called at most once per key among runs that commit; a run that died before the
rename left nothing behind (its trades never happened for the fold), so the next run builds anew.
Ordering for the fold: by time; at equal times monitor fills come before the cycle's (a window
``(start, t]`` describes what happened up to ``t``; the cycle at ``t`` acts on that state), so run
the monitor window ending at ``t`` before the cycle at ``t``. Within a cycle: the answer round,
then the repair round; in a round, its fills, then its level moves - the broker's own order
(closes, then holds, then adds and opens; a symbol appears twice in an answer only as a close and
a hold, and an add of a symbol excludes a hold of it).

Every string is written as UTF-8: text a model sent that UTF-8 cannot hold (a lone surrogate) is
stored with U+FFFD in its place (:func:`arena.core.text.storable`), and the raw response keeps an
exact copy in ``responses.raw_json``, so nothing a model sends can make a record fail to write.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from arena.core.sessions import TS_UNIT, utc
from arena.core.text import dumps, from_json_literal, is_storable, storable, to_json_literal
from arena.core.types import CallRecord, Message
from arena.data.lake import Lake, default_root
from arena.engine.broker import LevelMove
from arena.engine.outcomes import OUTCOMES, played
from arena.engine.portfolio import Fill, Portfolio
from arena.engine.rules import Rejection

ANSWER, REPAIR, MONITOR = "answer", "repair", "monitor"
ROUNDS = (ANSWER, REPAIR)
EQUITY_FIELDS = ("cash", "equity", "fees_paid", "realised_pnl", "positions")
LEGACY_EXECUTED = "executed"  # the status of a read answer before arena.engine.outcomes
SECRET_SUFFIX = "_API_KEY"  # env vars whose values must never reach the ledger
MIN_SECRET_CHARS = 8  # shorter values are not keys (and would match ordinary text)
_STAMP = "%Y-%m-%dT%H-%M-%S"
SCHEMA_DIR = "_schema"  # the directory names of the empty schema files (see write_schemas)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class LedgerError(RuntimeError):
    """A record that cannot be written (inconsistent, overlapping, ...)."""


class LedgerBusy(LedgerError, TimeoutError):
    """Another run held the contestant's lock longer than ``wait`` seconds."""


class SecretInRecord(LedgerError):
    """The record contains the value of a ``*_API_KEY`` environment variable: nothing written."""


class RecordStatus(StrEnum):
    RECORDED = "recorded"
    ALREADY_RECORDED = "already recorded"


class RecordKey(NamedTuple):
    cycle_at: pd.Timestamp
    contestant: str


class MonitorKey(NamedTuple):
    start: pd.Timestamp
    end: pd.Timestamp
    contestant: str


def _map() -> Any:
    return field(default_factory=dict)


@dataclass(frozen=True)
class CycleRecord:
    """What the cycle step hands the ledger for one contestant. Per-round fields are keyed by
    round (``"answer"``, ``"repair"``); ``decisions`` are the parsed decisions of a round as dicts
    (``Decision.as_json()``, or a malformed decision exactly as sent: any JSON value), in answer
    order (index = decision index); ``levels`` the level moves of a round's accepted holds
    (``CycleResult.levels``); ``prompt`` is the rendered prompt text (``Briefing.prompt_text``);
    ``messages`` the whole conversation; ``equity`` a snapshot with :data:`EQUITY_FIELDS` (see
    :func:`equity_snapshot`), empty when none; ``parse_errors`` the parse failure reason per
    round; ``notes`` what the parser noted per round (missing reasoning, cleaned text, ignored
    fields); ``status`` one of :data:`arena.engine.outcomes.OUTCOMES`."""

    contestant: str
    cycle_at: pd.Timestamp
    status: str
    prompt: str = ""
    messages: Sequence[Message] = ()
    responses: Mapping[str, str | None] = _map()
    decisions: Mapping[str, Sequence[Any]] = _map()
    rejections: Mapping[str, Sequence[Rejection]] = _map()
    fills: Mapping[str, Sequence[Fill]] = _map()
    levels: Mapping[str, Sequence[LevelMove]] = _map()
    calls: Sequence[CallRecord] = ()
    equity: Mapping[str, float | int | None] = _map()
    parse_errors: Mapping[str, str] = _map()
    errors: Sequence[str] = ()
    extras: Mapping[str, Mapping[str, Any]] = _map()  # per round: debate transcript, tool calls
    notes: Mapping[str, Sequence[str]] = _map()

    @property
    def repaired(self) -> bool:
        """Whether a repair round was played (a repair response, or a repair parse failure)."""
        return REPAIR in self.responses or REPAIR in self.parse_errors


@dataclass(frozen=True)
class MonitorRecord:
    """The invalidation monitor's automatic closes for one contestant and window ``(start, end]``."""

    contestant: str
    start: pd.Timestamp
    end: pd.Timestamp
    fills: Sequence[Fill] = ()
    checked: Mapping[str, int] = _map()
    unobserved: Sequence[str] = ()
    errors: Sequence[str] = ()


def equity_snapshot(portfolio: Portfolio, prices: Mapping[str, float]) -> dict[str, float | int | None]:
    """The ``equity`` of a :class:`CycleRecord` (equity ``None`` when a held symbol has no price)."""
    equity = None if portfolio.unmarked(prices) else portfolio.equity(prices)
    return {"cash": portfolio.cash, "equity": equity, "fees_paid": portfolio.fees_paid,
            "realised_pnl": portfolio.realised_pnl, "positions": len(portfolio.positions)}


# ---------------------------------------------------------------------------------- schemas
_TS, _S, _F, _I, _B = pa.timestamp(TS_UNIT, tz="UTC"), pa.string(), pa.float64(), pa.int64(), pa.bool_()
_CYCLE_KEY = [("cycle_at", _TS), ("contestant", _S)]
_MONITOR_KEY = [("window_start", _TS), ("window_end", _TS), ("contestant", _S)]
_FILL = [("round", _S), ("seq", _I), ("at", _TS), ("symbol", _S), ("side", _S), ("kind", _S),
         ("quantity", _F), ("price", _F), ("notional", _F), ("fee", _F), ("realised_pnl", _F),
         ("decision_index", _I), ("automatic", _B), ("invalidation_price", _F), ("thesis", _S),
         ("invalidation", _S)]
_ROUND_IDX = [("round", _S), ("decision_index", _I), ("action", _S), ("symbol", _S)]


def _schemas(key: list[tuple[str, pa.DataType]],
             tables: dict[str, list[tuple[str, pa.DataType]]]) -> dict[str, pa.Schema]:
    return {name: pa.schema(key + cols) for name, cols in tables.items()}


SCHEMAS = _schemas(_CYCLE_KEY, {
    "outcome": [("status", _S), ("repaired", _B), ("prompt_sha256", _S), ("prompt_chars", _I),
                ("n_calls", _I), ("n_fills", _I), ("n_rejections", _I),
                ("parse_error_answer", _S), ("parse_error_repair", _S),
                ("errors", pa.list_(_S))],
    "calls": [("seq", _I), ("role", _S), ("model", _S), ("tokens_in", _I), ("tokens_out", _I),
              ("latency_s", _F), ("cost_usd", _F), ("retries", _I), ("error", _S)],
    "messages": [("seq", _I), ("role", _S), ("chars", _I), ("content", _S),
                 ("prompt_sha256", _S), ("prompt_offset", _I)],
    "responses": [("round", _S), ("text", _S), ("chars", _I), ("extra", _S),
                  ("notes", pa.list_(_S)), ("raw_json", _S)],
    "decisions": [*_ROUND_IDX, ("decision", _S)],
    "rejections": [*_ROUND_IDX, ("code", _S), ("message", _S)],
    "fills": _FILL,
    "levels": [("round", _S), ("decision_index", _I), ("symbol", _S), ("invalidation_price", _F)],
    "equity": [(f, _I if f == "positions" else _F) for f in EQUITY_FIELDS],
})
MONITOR_SCHEMAS = _schemas(_MONITOR_KEY, {
    "outcome": [("n_fills", _I), ("checked", _S), ("unobserved", pa.list_(_S)),
                ("errors", pa.list_(_S))],
    "fills": _FILL,
})

Rows = dict[str, list[dict[str, Any]]]


def _stamp(ts: object) -> str:
    t = utc(ts)
    if t != t.floor("s"):
        raise ValueError(f"ledger keys are whole seconds; got {t}")
    return t.strftime(_STAMP)


def _unstamp(text: str) -> pd.Timestamp:
    return pd.to_datetime(text, format=_STAMP, utc=True)


def _name(contestant: str) -> str:
    if not _NAME.fullmatch(contestant):
        raise ValueError(f"contestant name {contestant!r} is not path-safe ([A-Za-z0-9_.-])")
    return contestant


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _fill_row(f: Fill, rnd: str, seq: int) -> dict[str, Any]:
    return {"round": rnd, "seq": seq, "at": f.at, "symbol": f.symbol, "side": f.side,
            "kind": f.kind, "quantity": f.quantity, "price": f.price, "notional": f.notional,
            "fee": f.fee, "realised_pnl": f.realised_pnl, "decision_index": f.decision_index,
            "automatic": f.automatic, "invalidation_price": f.invalidation_price,
            "thesis": f.thesis, "invalidation": f.invalidation}


def _fill(row: Mapping[str, Any]) -> Fill:
    return Fill(pd.Timestamp(row["at"]), row["symbol"], row["side"], row["kind"], row["quantity"],
                row["price"], row["fee"], row["realised_pnl"], row["decision_index"],
                row["automatic"], row["invalidation_price"], row["thesis"], row["invalidation"])


def _decision_row(d: Any) -> dict[str, Any]:
    """``action``, ``symbol`` and the JSON text of one recorded decision (any JSON value)."""
    d = d.as_json() if hasattr(d, "as_json") else d
    fields = d if isinstance(d, Mapping) else {}
    action, symbol = fields.get("action"), fields.get("symbol")
    return {"action": action if isinstance(action, str) else None,
            "symbol": symbol if isinstance(symbol, str) else None,
            "decision": dumps(d, sort_keys=True)}


def _cycle_rows(r: CycleRecord) -> tuple[Rows, dict[str, str]]:
    """Every table's rows for a cycle record, and the prompt texts to store (sha -> text)."""
    for what, keys in (("responses", r.responses), ("decisions", r.decisions),
                       ("rejections", r.rejections), ("fills", r.fills), ("levels", r.levels),
                       ("parse_errors", r.parse_errors), ("notes", r.notes)):
        if set(keys) - set(ROUNDS):
            raise ValueError(f"{what}: rounds are {ROUNDS}, got {sorted(keys)}")
    if r.status not in OUTCOMES:
        raise ValueError(f"status {r.status!r} is not one of {OUTCOMES}")
    if set(r.equity) - set(EQUITY_FIELDS):
        raise ValueError(f"equity fields are {EQUITY_FIELDS}, got {sorted(r.equity)}")
    key = {"cycle_at": utc(r.cycle_at), "contestant": r.contestant}
    prompt = storable(r.prompt)
    sha = _sha(prompt) if prompt else None
    rows: Rows = {name: [] for name in SCHEMAS}
    for seq, m in enumerate(r.messages):  # (_storable_rows cleans what a model wrote in them)
        content = m.content
        offset = prompt.find(content) if sha and content and m.role in ("system", "user") else -1
        ref = offset >= 0
        rows["messages"].append({**key, "seq": seq, "role": m.role, "chars": len(content),
                                 "content": None if ref else content,
                                 "prompt_sha256": sha if ref else None,
                                 "prompt_offset": offset if ref else None})
    for seq, c in enumerate(r.calls):
        rows["calls"].append({**key, "seq": seq, **{k: v for k, v in c.as_dict().items()
                                                    if k != "contestant"}})
    for rnd in ROUNDS:
        if rnd in r.responses:
            text = r.responses[rnd]
            extra = r.extras.get(rnd)
            exact = text is None or is_storable(text)
            rows["responses"].append({  # text made storable by _storable_rows, raw_json exact
                **key, "round": rnd, "text": text,
                "chars": None if text is None else len(text),
                "extra": None if not extra else dumps(extra),
                "notes": list(r.notes.get(rnd, ())),
                "raw_json": None if exact else to_json_literal(text)})
        for i, d in enumerate(r.decisions.get(rnd, ())):
            rows["decisions"].append({**key, "round": rnd, "decision_index": i, **_decision_row(d)})
        rows["levels"] += [{**key, "round": rnd, **m._asdict()} for m in r.levels.get(rnd, ())]
        rows["rejections"] += [{**key, "round": rnd, **j.as_dict()} for j in r.rejections.get(rnd, ())]
        rows["fills"] += [{**key, **_fill_row(f, rnd, seq)} for seq, f in enumerate(r.fills.get(rnd, ()))]
    if r.equity:
        rows["equity"].append({**key, **{f: r.equity.get(f) for f in EQUITY_FIELDS}})
    rows["outcome"].append({
        **key, "status": str(r.status), "repaired": r.repaired, "prompt_sha256": sha,
        "prompt_chars": len(prompt), "n_calls": len(r.calls), "n_fills": len(rows["fills"]),
        "n_rejections": len(rows["rejections"]), "parse_error_answer": r.parse_errors.get(ANSWER),
        "parse_error_repair": r.parse_errors.get(REPAIR), "errors": list(r.errors)})
    return _storable_rows(rows), ({sha: prompt} if sha else {})


def _outcome(status: str, n_fills: int) -> str:
    """The outcome of a recorded cycle; records written before the outcome vocabulary said
    ``executed`` for any read answer (``stg_ledger__outcomes`` maps them the same way)."""
    if status == LEGACY_EXECUTED:
        return played(n_fills).value
    return status


def _storable_rows(rows: Rows) -> Rows:
    """Every string of ``rows`` storable as UTF-8 (the last line of defence: the engine cleans
    what it parses, but an error text or a contestant's transcript may quote a model verbatim)."""
    def fix(value: Any) -> Any:
        if isinstance(value, str):
            return storable(value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value

    return {table: [{col: fix(v) for col, v in row.items()} for row in items]
            for table, items in rows.items()}


def _monitor_rows(r: MonitorRecord) -> Rows:
    key = {"window_start": utc(r.start), "window_end": utc(r.end), "contestant": r.contestant}
    outside = [f for f in r.fills if not key["window_start"] < utc(f.at) <= key["window_end"]]
    if outside:
        raise ValueError(f"monitor fill at {outside[0].at} is outside the window ({r.start}, {r.end}]")
    return _storable_rows({
        "fills": [{**key, **_fill_row(f, MONITOR, seq)} for seq, f in enumerate(r.fills)],
        "outcome": [{**key, "n_fills": len(r.fills), "unobserved": list(r.unobserved),
                     "checked": json.dumps(dict(r.checked), sort_keys=True),
                     "errors": list(r.errors)}]})


def _refuse_secrets(rows: Rows, texts: Mapping[str, str], what: str,
                    names: frozenset[str] = frozenset()) -> None:
    """Raise :class:`SecretInRecord` if any string to be written holds the value of a
    ``*_API_KEY`` variable or of a variable named in ``names`` (the roster's key variables)."""
    secrets = {n: v for n, v in os.environ.items()
               if (n.upper().endswith(SECRET_SUFFIX) or n in names) and len(v) >= MIN_SECRET_CHARS}
    if not secrets:
        return

    def strings() -> Iterator[tuple[str, str]]:
        yield from (("prompt", t) for t in texts.values())
        for table, items in rows.items():
            for row in items:
                for col, value in row.items():
                    for v in value if isinstance(value, list) else [value]:
                        if isinstance(v, str):
                            yield f"{table}.{col}", v

    for where, text in strings():
        for name, value in secrets.items():
            if value in text:
                raise SecretInRecord(f"refusing to write {what}: {where} contains the value of "
                                     f"${name}; nothing was written")


# ---------------------------------------------------------------------------------- I/O helpers
def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def _flock(path: Path, wait: float | None) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (released by the kernel if this process dies)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        if wait is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LedgerBusy(f"{path.name} is held by another run (waited {wait} s)") from None
                    time.sleep(0.02)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # for humans: who holds / held it
        yield
    finally:
        os.close(fd)  # releases the lock


class Ledger:
    """The ledger under ``<lake root>/ledger``: exactly-once writes, and reads for the engine."""

    def __init__(self, root: str | Path | Lake | None = None, *,
                 secret_names: Iterable[str] = ()) -> None:
        """``secret_names``: environment variables (besides ``*_API_KEY``) whose values must
        never be written, e.g. the roster's ``api_key_env`` names."""
        lake_root = root.root if isinstance(root, Lake) else Path(root) if root else default_root()
        self.dir = lake_root / "ledger"
        self.secret_names = frozenset(secret_names)
        self._schemas_written = False

    def __repr__(self) -> str:
        return f"Ledger({str(self.dir)!r})"

    # ------------------------------------------------------------------ addresses
    def record_dir(self, cycle_at: object, contestant: str) -> Path:
        return self.dir / "cycles" / f"cycle={_stamp(cycle_at)}" / f"contestant={_name(contestant)}"

    def monitor_dir(self, start: object, end: object, contestant: str) -> Path:
        return (self.dir / "monitor" / f"window={_stamp(start)}_{_stamp(end)}"
                / f"contestant={_name(contestant)}")

    def write_schemas(self) -> None:
        """Write the empty schema file of every table (idempotent; see the module docstring), or
        rewrite it when the table gained columns since it was written. Once per instance: later
        calls (one after every committed record) do nothing."""
        if self._schemas_written:
            return
        for kind, key, schemas in (("cycles", "cycle", SCHEMAS), ("monitor", "window", MONITOR_SCHEMAS)):
            folder = self.dir / kind / f"{key}={SCHEMA_DIR}" / f"contestant={SCHEMA_DIR}"
            for name, schema in schemas.items():
                path = folder / f"{name}.parquet"
                if not path.is_file() or not pq.read_schema(path).equals(schema):
                    folder.mkdir(parents=True, exist_ok=True)
                    tmp = path.with_name(f".{name}.{uuid.uuid4().hex[:8]}.tmp")
                    pq.write_table(schema.empty_table(), tmp)
                    os.replace(tmp, path)
        self._schemas_written = True

    def pattern(self, table: str, monitor: bool = False) -> str:
        """The glob of one table's files, for ``read_parquet(..., hive_partitioning=true)``."""
        return str(self.dir / ("monitor" if monitor else "cycles") / "*" / "*" / f"{table}.parquet")

    # ------------------------------------------------------------------ writing
    def record_cycle(self, cycle_at: object, contestant: str, build: Callable[[], CycleRecord],
                     *, wait: float | None = None) -> RecordStatus:
        """Run ``build`` and write its record, unless (cycle, contestant) is already recorded.

        Waits for a concurrent run of the same contestant (at most ``wait`` seconds, then
        :class:`LedgerBusy`); exceptions of ``build`` propagate and nothing is written. A cycle
        behind the contestant's history (a later cycle or monitor window already recorded, e.g.
        after an operational failure left a gap) is refused (:class:`LedgerError`) before
        ``build`` runs: its trades would fold before records made without them.
        """
        final = self.record_dir(cycle_at, contestant)
        at = utc(cycle_at)

        def rows() -> tuple[Rows, dict[str, str]]:
            later = ([k.cycle_at for k in self.records(contestant) if k.cycle_at > at]
                     + [k.end for k in self.monitor_records(contestant) if k.end > at])
            if later:
                raise LedgerError(f"the cycle at {at} of {contestant} comes after its history: a "
                                  f"record up to {max(later)} exists, and history is append-only")
            record = build()
            if (record.contestant, utc(record.cycle_at)) != (contestant, utc(cycle_at)):
                raise LedgerError(f"build() returned the record of {record.contestant} at "
                                  f"{record.cycle_at}, not {contestant} at {cycle_at}")
            return _cycle_rows(record)

        return self._commit(final, contestant, rows, SCHEMAS, wait)

    def record_monitor(self, start: object, end: object, contestant: str,
                       build: Callable[[], MonitorRecord], *, wait: float | None = None) -> RecordStatus:
        """Like :meth:`record_cycle`, for the monitor window ``(start, end]``. A window that
        overlaps another recorded window of the contestant is refused (:class:`LedgerError`)."""
        final = self.monitor_dir(start, end, contestant)
        s, e = utc(start), utc(end)

        def rows() -> tuple[Rows, dict[str, str]]:
            clash = [k for k in self.monitor_records(contestant) if s < k.end and k.start < e]
            if clash:
                raise LedgerError(f"monitor window ({s}, {e}] of {contestant} overlaps the "
                                  f"recorded window ({clash[0].start}, {clash[0].end}]")
            later = [k for k in self.records(contestant) if k.cycle_at > s]
            if later:  # its fills would fold before a cycle that already ran without them
                raise LedgerError(f"monitor window ({s}, {e}] of {contestant} comes after its "
                                  f"recorded cycle at {later[0].cycle_at}: history is append-only")
            record = build()
            if (record.contestant, utc(record.start), utc(record.end)) != (contestant, s, e):
                raise LedgerError(f"build() returned the monitor record of {record.contestant} "
                                  f"({record.start}, {record.end}], not {contestant} ({s}, {e}]")
            return _monitor_rows(record), {}

        return self._commit(final, contestant, rows, MONITOR_SCHEMAS, wait)

    def _commit(self, final: Path, contestant: str, make: Callable[[], tuple[Rows, dict[str, str]]],
                schemas: Mapping[str, pa.Schema], wait: float | None) -> RecordStatus:
        if final.is_dir():
            return RecordStatus.ALREADY_RECORDED
        with _flock(self.dir / "_locks" / f"contestant={contestant}.lock", wait):
            if final.is_dir():  # a concurrent run committed while this one waited
                return RecordStatus.ALREADY_RECORDED
            staging = self.dir / "_staging"
            for leftover in staging.glob(f"{contestant}+*"):  # crashed runs' partial writes
                shutil.rmtree(leftover, ignore_errors=True)
            rows, texts = make()
            what = f"{final.parent.name}/{final.name}"
            _refuse_secrets(rows, texts, what, self.secret_names)
            tables = {n: pa.Table.from_pylist(rows.get(n, []), schema=s) for n, s in schemas.items()}
            tmp = staging / f"{contestant}+{final.parent.name}+{os.getpid()}+{uuid.uuid4().hex[:8]}"
            tmp.mkdir(parents=True)
            try:
                for sha, text in texts.items():
                    self._store_text(sha, text)
                for name, table in tables.items():
                    self._write_table(tmp / f"{name}.parquet", table)
                _fsync_dir(tmp)
                final.parent.mkdir(parents=True, exist_ok=True)
                os.rename(tmp, final)  # the commit: the record appears whole, or not at all
                _fsync_dir(final.parent)
                self.write_schemas()
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        return RecordStatus.RECORDED

    def _write_table(self, path: Path, table: pa.Table) -> None:
        with open(path, "wb") as f:
            pq.write_table(table, f, compression="zstd")
            f.flush()
            os.fsync(f.fileno())

    def _store_text(self, sha: str, text: str) -> None:
        path = self.dir / "prompts" / f"{sha}.txt"
        if path.is_file():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{sha}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # same content whoever wins
        _fsync_dir(path.parent)  # durable before any record that references it

    # ------------------------------------------------------------------ reading
    def has(self, cycle_at: object, contestant: str) -> bool:
        return self.record_dir(cycle_at, contestant).is_dir()

    def records(self, contestant: str | None = None) -> list[RecordKey]:
        """The recorded (cycle, contestant) keys, by cycle then contestant."""
        keys = [RecordKey(_unstamp(d.parent.name.split("=", 1)[1]), d.name.split("=", 1)[1])
                for d in self._dirs("cycles", contestant)]
        return sorted(keys)

    def monitor_records(self, contestant: str | None = None) -> list[MonitorKey]:
        keys = []
        for d in self._dirs("monitor", contestant):
            start, end = d.parent.name.split("=", 1)[1].split("_")
            keys.append(MonitorKey(_unstamp(start), _unstamp(end), d.name.split("=", 1)[1]))
        return sorted(keys)

    def _dirs(self, kind: str, contestant: str | None) -> list[Path]:
        name = "*" if contestant is None else _name(contestant)
        return sorted(p for p in (self.dir / kind).glob(f"*/contestant={name}")
                      if p.is_dir() and p.name != f"contestant={SCHEMA_DIR}")

    def _arrow(self, name: str, contestant: str | None = None, monitor: bool = False) -> pa.Table:
        schema = (MONITOR_SCHEMAS if monitor else SCHEMAS)[name]
        paths = [str(d / f"{name}.parquet") for d in self._dirs("monitor" if monitor else "cycles",
                                                                contestant)]
        if not paths:
            return schema.empty_table()
        return ds.dataset(paths, schema=schema, format="parquet").to_table()

    def table(self, name: str, contestant: str | None = None, *, monitor: bool = False) -> pd.DataFrame:
        """Every record's rows of table ``name`` (see :data:`SCHEMAS`), in key order."""
        frame = self._arrow(name, contestant, monitor).to_pandas()
        if name == "outcome" and not monitor and len(frame):
            frame["status"] = [_outcome(s, n) for s, n in zip(frame["status"], frame["n_fills"],
                                                             strict=True)]
        order = [c for c in ("cycle_at", "window_end", "contestant", "round", "seq",
                             "decision_index") if c in frame.columns]
        return frame.sort_values(order, kind="stable").reset_index(drop=True)

    def _events(self, contestant: str) -> list[tuple[tuple[Any, ...], Fill | tuple[str, float]]]:
        rank = {ANSWER: 0, REPAIR: 1}
        events: list[tuple[tuple[Any, ...], Fill | tuple[str, float]]] = []
        for row in self._arrow("fills", contestant).to_pylist():
            events.append(((pd.Timestamp(row["cycle_at"]), 1, rank[row["round"]], 0, row["seq"]),
                           _fill(row)))
        for row in self._arrow("levels", contestant).to_pylist():
            events.append(((pd.Timestamp(row["cycle_at"]), 1, rank[row["round"]], 1,
                            row["decision_index"]), (row["symbol"], row["invalidation_price"])))
        for row in self._arrow("fills", contestant, monitor=True).to_pylist():
            fill = _fill(row)
            events.append(((fill.at, 0, 0, 0, row["seq"]), fill))
        events.sort(key=lambda e: e[0])
        return events

    def fills(self, contestant: str) -> list[Fill]:
        """Every recorded fill of ``contestant`` (cycles and monitor) in fold order."""
        return [e for _, e in self._events(contestant) if isinstance(e, Fill)]

    def portfolio(self, contestant: str, start: Portfolio | None = None, *,
                  until: object | None = None) -> Portfolio:
        """The contestant's state: ``start`` (default $10,000 cash) with every recorded fill and
        level move applied in order - all of them, or those up to the cycle at ``until`` (that
        cycle and the monitor window ending at it included)."""
        state = start or Portfolio()
        end = None if until is None else utc(until)
        for key, event in self._events(contestant):
            if end is not None and key[0] > end:
                break
            state = state.apply(event) if isinstance(event, Fill) else state.with_level(*event)
        return state

    def record_rows(self, name: str, cycle_at: object, contestant: str) -> list[dict[str, Any]]:
        """One table of one (cycle, contestant) record, as rows (KeyError: no such record)."""
        path = self.record_dir(cycle_at, contestant) / f"{name}.parquet"
        if not path.is_file():
            raise KeyError(f"no ledger record for {contestant} at {utc(cycle_at)}")
        rows = pq.ParquetFile(path).read().to_pylist()
        if name == "outcome":
            rows = [{**r, "status": _outcome(r["status"], r["n_fills"])} for r in rows]
        return rows

    def responses(self, contestant: str, cycle_at: object) -> dict[str, str | None]:
        """The raw response text per round of a recorded cycle, exactly as the contestant sent
        it (for the replay contestant)."""
        return {r["round"]: from_json_literal(r["raw_json"]) if r.get("raw_json") else r["text"]
                for r in self.record_rows("responses", cycle_at, contestant)}

    def messages(self, contestant: str, cycle_at: object) -> list[Message]:
        """The recorded conversation, prompt parts restored from the prompt store."""
        out = []
        for r in sorted(self.record_rows("messages", cycle_at, contestant), key=lambda r: r["seq"]):
            if r["prompt_sha256"] is None:
                out.append(Message(r["role"], r["content"]))
            else:
                start = r["prompt_offset"]
                out.append(Message(r["role"], self.prompt(r["prompt_sha256"])[start:start + r["chars"]]))
        return out

    def prompt(self, sha256: str) -> str:
        """A stored prompt text by its hash."""
        return (self.dir / "prompts" / f"{sha256}.txt").read_text(encoding="utf-8")
