"""What the ledger records: the records of a cycle and of a monitor window, their keys, the
Parquet schemas of their tables, and the rows each record becomes (see :mod:`arena.ledger.store`
for where and how they are written).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from types import MappingProxyType
from typing import Any, NamedTuple

import pandas as pd
import pyarrow as pa

from arena.core.sessions import TS_UNIT
from arena.core.text import dumps, is_storable, storable, to_json_literal
from arena.core.types import CallRecord, Message
from arena.engine.broker import LevelMove
from arena.engine.outcomes import OUTCOMES, played
from arena.engine.portfolio import Fill, Portfolio, Position
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
# the columns' Arrow types by name
_TS, _S, _F, _I, _B, _LS = "timestamp", "string", "float64", "int64", "bool", "list<string>"
_CYCLE_KEY = [("cycle_at", _TS), ("contestant", _S)]
_MONITOR_KEY = [("window_start", _TS), ("window_end", _TS), ("contestant", _S)]
_FILL = [("round", _S), ("seq", _I), ("at", _TS), ("symbol", _S), ("side", _S), ("kind", _S),
         ("quantity", _F), ("price", _F), ("notional", _F), ("fee", _F), ("realised_pnl", _F),
         ("decision_index", _I), ("automatic", _B), ("invalidation_price", _F), ("thesis", _S),
         ("invalidation", _S)]
_ROUND_IDX = [("round", _S), ("decision_index", _I), ("action", _S), ("symbol", _S)]


def _schemas(key: list[tuple[str, str]],
             tables: dict[str, list[tuple[str, str]]]) -> dict[str, pa.Schema]:
    arrow = {_TS: pa.timestamp(TS_UNIT, tz="UTC"), _S: pa.string(), _F: pa.float64(),
             _I: pa.int64(), _B: pa.bool_(), _LS: pa.list_(pa.string())}
    return {name: pa.schema([(column, arrow[kind]) for column, kind in key + cols])
            for name, cols in tables.items()}


SCHEMAS: Mapping[str, pa.Schema] = _schemas(_CYCLE_KEY, {
    "outcome": [("status", _S), ("repaired", _B), ("prompt_sha256", _S), ("prompt_chars", _I),
                ("n_calls", _I), ("n_fills", _I), ("n_rejections", _I),
                ("parse_error_answer", _S), ("parse_error_repair", _S),
                ("errors", _LS)],
    "calls": [("seq", _I), ("role", _S), ("model", _S), ("tokens_in", _I), ("tokens_out", _I),
              ("latency_s", _F), ("cost_usd", _F), ("retries", _I), ("error", _S),
              ("queue_s", _F), ("seed", _I), ("temperature", _F), ("replicate_of", _S)],
    "messages": [("seq", _I), ("role", _S), ("chars", _I), ("content", _S),
                 ("prompt_sha256", _S), ("prompt_offset", _I)],
    "responses": [("round", _S), ("text", _S), ("chars", _I), ("extra", _S),
                  ("notes", _LS), ("raw_json", _S)],
    "decisions": [*_ROUND_IDX, ("decision", _S)],
    "rejections": [*_ROUND_IDX, ("code", _S), ("message", _S)],
    "fills": _FILL,
    "levels": [("round", _S), ("decision_index", _I), ("symbol", _S), ("invalidation_price", _F)],
    "equity": [(f, _I if f == "positions" else _F) for f in EQUITY_FIELDS],
})
MONITOR_SCHEMAS: Mapping[str, pa.Schema] = _schemas(_MONITOR_KEY, {
    "outcome": [("n_fills", _I), ("checked", _S), ("unobserved", _LS),
                ("errors", _LS)],
    "fills": _FILL,
})

Rows = dict[str, list[dict[str, Any]]]


def stamp(t: pd.Timestamp) -> str:
    if t != t.floor("s"):
        raise ValueError(f"ledger keys are whole seconds; got {t}")
    return t.strftime(_STAMP)


@cache
def unstamp(text: str) -> pd.Timestamp:
    """The time of a ledger folder's stamp. Cached: every listing of the ledger parses the
    season's stamps again, and there are only as many as cycles and monitor windows."""
    return pd.to_datetime(text, format=_STAMP, utc=True)


def check_name(contestant: str) -> str:
    if not _NAME.fullmatch(contestant):
        raise ValueError(f"contestant name {contestant!r} is not path-safe ([A-Za-z0-9_.-])")
    return contestant


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fill_row(f: Fill, rnd: str, seq: int) -> dict[str, Any]:
    return {"round": rnd, "seq": seq, "at": f.at, "symbol": f.symbol, "side": f.side,
            "kind": f.kind, "quantity": f.quantity, "price": f.price, "notional": f.notional,
            "fee": f.fee, "realised_pnl": f.realised_pnl, "decision_index": f.decision_index,
            "automatic": f.automatic, "invalidation_price": f.invalidation_price,
            "thesis": f.thesis, "invalidation": f.invalidation}


def portfolio_to_json(state: Portfolio) -> dict[str, Any]:
    """A portfolio as JSON values that :func:`portfolio_from_json` reads back equal (floats
    written by ``repr``, so exactly; times as ISO strings to the nanosecond; the positions in
    the order the fold opened them, so sums over them add in the same order)."""
    return {"cash": state.cash, "fees_paid": state.fees_paid, "realised_pnl": state.realised_pnl,
            "positions": [{"symbol": p.symbol, "side": p.side, "quantity": p.quantity,
                           "entry_price": p.entry_price, "opened_at": p.opened_at.isoformat(),
                           "invalidation_price": p.invalidation_price, "thesis": p.thesis,
                           "invalidation": p.invalidation}
                          for p in state.positions.values()]}  # in the fold's order


def portfolio_from_json(value: Mapping[str, Any]) -> Portfolio:
    """The portfolio :func:`portfolio_to_json` wrote (KeyError, TypeError, ValueError: not one)."""
    positions = {p["symbol"]: Position(p["symbol"], p["side"], float(p["quantity"]),
                                       float(p["entry_price"]), pd.Timestamp(p["opened_at"]),
                                       p["invalidation_price"], p["thesis"], p["invalidation"])
                 for p in value["positions"]}
    return Portfolio(float(value["cash"]), MappingProxyType(positions),
                     float(value["fees_paid"]), float(value["realised_pnl"]))


def fill_from_row(row: Mapping[str, Any]) -> Fill:
    return Fill(pd.Timestamp(row["at"]), row["symbol"], row["side"], row["kind"], row["quantity"],
                row["price"], row["fee"], row["realised_pnl"], row["decision_index"],
                row["automatic"], row["invalidation_price"], row["thesis"], row["invalidation"])


def decision_row(d: Any) -> dict[str, Any]:
    """``action``, ``symbol`` and the JSON text of one recorded decision (any JSON value)."""
    d = d.as_json() if hasattr(d, "as_json") else d
    fields = d if isinstance(d, Mapping) else {}
    action, symbol = fields.get("action"), fields.get("symbol")
    return {"action": action if isinstance(action, str) else None,
            "symbol": symbol if isinstance(symbol, str) else None,
            "decision": dumps(d, sort_keys=True)}


def cycle_rows(r: CycleRecord) -> tuple[Rows, dict[str, str]]:
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
    key = {"cycle_at": r.cycle_at, "contestant": r.contestant}
    prompt = storable(r.prompt)
    sha = sha256_hex(prompt) if prompt else None
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
            rows["decisions"].append({**key, "round": rnd, "decision_index": i, **decision_row(d)})
        rows["levels"] += [{**key, "round": rnd, **m._asdict()} for m in r.levels.get(rnd, ())]
        rows["rejections"] += [{**key, "round": rnd, **j.as_dict()} for j in r.rejections.get(rnd, ())]
        rows["fills"] += [{**key, **fill_row(f, rnd, seq)} for seq, f in enumerate(r.fills.get(rnd, ()))]
    if r.equity:
        rows["equity"].append({**key, **{f: r.equity.get(f) for f in EQUITY_FIELDS}})
    rows["outcome"].append({
        **key, "status": str(r.status), "repaired": r.repaired, "prompt_sha256": sha,
        "prompt_chars": len(prompt), "n_calls": len(r.calls), "n_fills": len(rows["fills"]),
        "n_rejections": len(rows["rejections"]), "parse_error_answer": r.parse_errors.get(ANSWER),
        "parse_error_repair": r.parse_errors.get(REPAIR), "errors": list(r.errors)})
    return _storable_rows(rows), ({sha: prompt} if sha else {})


def outcome_status(status: str, n_fills: int) -> str:
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


def monitor_rows(r: MonitorRecord) -> Rows:
    key = {"window_start": r.start, "window_end": r.end, "contestant": r.contestant}
    outside = [f for f in r.fills if not key["window_start"] < f.at <= key["window_end"]]
    if outside:
        raise ValueError(f"monitor fill at {outside[0].at} is outside the window ({r.start}, {r.end}]")
    return _storable_rows({
        "fills": [{**key, **fill_row(f, MONITOR, seq)} for seq, f in enumerate(r.fills)],
        "outcome": [{**key, "n_fills": len(r.fills), "unobserved": list(r.unobserved),
                     "checked": json.dumps(dict(r.checked), sort_keys=True),
                     "errors": list(r.errors)}]})


