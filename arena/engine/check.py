"""``arena check``: a dry run of one answer against a portfolio state and cycle prices.

STATE.json (a contestant's state at the cycle; ``opened_this_cycle``/``closed_this_cycle`` let a
repair answer be checked under the same cycle)::

    {"cash": 7998.0, "fees_paid": 2.0, "realised_pnl": 0.0,
     "positions": [{"symbol": "ETH", "side": "long", "quantity": 0.6666666667,
                    "entry_price": 3000.0, "invalidation_price": 2800.0,
                    "thesis": "...", "invalidation": "...", "opened_at": "2025-11-20T16:00:00Z"}],
     "opened_this_cycle": [], "closed_this_cycle": []}

PRICES.json maps house symbols to the cycle price: ``{"ETH": 3150.0, "AAPL": 251.2}``.
ANSWER.json is the model's raw answer, exactly as it came back (it may be wrapped in a code
fence or even be broken: the point is to see what the engine makes of it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from arena.core.errors import UnusableInput
from arena.core.sessions import utc
from arena.core.universe import Universe, load_universe
from arena.engine.broker import CycleResult, execute_answer
from arena.engine.contract import parse_answer
from arena.engine.portfolio import LONG, SHORT, Portfolio, Position
from arena.engine.repair import repair_context
from arena.engine.rules import ARENA_RULES, CycleState, Rules


class CheckInputError(UnusableInput, ValueError):
    """A state, prices or answer file that cannot be used (names the file and the problem)."""


class _PositionIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    symbol: str
    side: str = Field(pattern=f"^({LONG}|{SHORT})$")
    quantity: float = Field(gt=0, allow_inf_nan=False)
    entry_price: float = Field(gt=0, allow_inf_nan=False)
    invalidation_price: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    thesis: str = ""
    invalidation: str = ""
    opened_at: str | None = None


class _StateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cash: float = Field(allow_inf_nan=False)
    fees_paid: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    realised_pnl: float = Field(default=0.0, allow_inf_nan=False)
    positions: list[_PositionIn] = []
    opened_this_cycle: list[str] = []
    closed_this_cycle: list[str] = []


def _read_json(path: Path, what: str) -> object:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise CheckInputError(f"{what} file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CheckInputError(f"{what} file {path} is not JSON: {exc}") from exc


def load_state(path: Path, at: pd.Timestamp, universe: Universe) -> CycleState:
    try:
        raw = _StateIn.model_validate(_read_json(path, "state"))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CheckInputError(f"state file {path}: {where}: {first['msg']}") from exc
    positions = {}
    for p in raw.positions:
        if p.symbol not in universe:
            raise CheckInputError(f"state file {path}: position in unknown symbol {p.symbol}")
        if p.symbol in positions:
            raise CheckInputError(f"state file {path}: two positions in {p.symbol}")
        try:
            opened = utc(p.opened_at) if p.opened_at else at
        except (TypeError, ValueError) as exc:
            raise CheckInputError(f"state file {path}: position in {p.symbol}: opened_at "
                                  f"{p.opened_at!r} is not an ISO-8601 time") from exc
        positions[p.symbol] = Position(p.symbol, p.side, p.quantity, p.entry_price, opened,
                                       p.invalidation_price, p.thesis, p.invalidation)
    portfolio = Portfolio(raw.cash, MappingProxyType(positions), raw.fees_paid, raw.realised_pnl)
    return CycleState(portfolio, at, tuple(raw.opened_this_cycle), tuple(raw.closed_this_cycle))


def load_prices(path: Path) -> dict[str, float]:
    raw = _read_json(path, "prices")
    if not isinstance(raw, dict):
        raise CheckInputError(f"prices file {path} must map symbols to prices")
    prices = {}
    for symbol, value in raw.items():
        try:
            price = float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
                else float("nan")
        except OverflowError:
            price = float("inf")
        if not (math.isfinite(price) and price > 0):
            raise CheckInputError(f"prices file {path}: {symbol} has price {str(value)[:40]}, not "
                                  "a positive finite number")
        prices[symbol] = price
    return prices


def state_to_dict(state: CycleState) -> dict[str, object]:
    p = state.portfolio
    return {
        "cash": p.cash, "fees_paid": p.fees_paid, "realised_pnl": p.realised_pnl,
        "positions": [{"symbol": s.symbol, "side": s.side, "quantity": s.quantity,
                       "entry_price": s.entry_price, "invalidation_price": s.invalidation_price,
                       "thesis": s.thesis, "invalidation": s.invalidation,
                       "opened_at": s.opened_at.isoformat()} for s in p.positions.values()],
        "opened_this_cycle": list(state.opened), "closed_this_cycle": list(state.closed),
    }


def run_check(state_path: Path, answer_path: Path, prices_path: Path, at: pd.Timestamp,
              universe: Universe | None = None, rules: Rules = ARENA_RULES) -> dict[str, object]:
    """Everything ``arena check`` prints, as one JSON-ready dict."""
    universe = universe or load_universe()
    state = load_state(Path(state_path), at, universe)
    prices = load_prices(Path(prices_path))
    missing = sorted(s for s in state.portfolio.positions if s not in prices)
    if missing:
        raise CheckInputError(f"prices file {prices_path} has no price for held {', '.join(missing)}")
    try:
        raw_answer = Path(answer_path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckInputError(f"answer file {answer_path}: {exc}") from exc
    return check_answer(state, raw_answer, prices, universe, rules)


def check_answer(state: CycleState, raw_answer: str, prices: Mapping[str, float],
                 universe: Universe, rules: Rules = ARENA_RULES) -> dict[str, object]:
    """A dry run of ``raw_answer`` from ``state`` at ``prices``: what the engine would parse,
    execute and reject, and the repair prompt it would send (nothing is recorded)."""
    parsed = parse_answer(raw_answer)
    result: CycleResult | None = None
    if parsed.ok:
        result = execute_answer(state, parsed.answer, prices, universe, rules)
        state = result.state
    repair = repair_context(state, prices, result=result,
                            parse_error=None if parsed.ok else parsed.reason, rules=rules)
    return {
        "at": state.at.isoformat(),
        "parsed": parsed.ok,
        "parse_error": None if parsed.ok else parsed.reason,
        "ignored_fields": list(parsed.ignored_fields) if parsed.ok else [],
        "notes": list(parsed.notes) if parsed.ok else [],
        **(result.as_dict() if result else {"fills": [], "rejections": [], "holds": [],
                                            "levels": []}),
        "state": state_to_dict(state),
        "equity": state.portfolio.equity(prices),
        "repair": repair.as_dict(),
        "repair_prompt": repair.render() if repair.needed else None,
    }


def render_check(report: Mapping[str, object]) -> str:
    """The human view of :func:`run_check`."""
    lines = [f"arena check at {report['at']}"]
    if not report["parsed"]:
        lines.append(f"  answer not parsed: {report['parse_error']}")
    for f in report["fills"]:
        lines.append(f"  FILL    {f['kind']:<5} {f['side']:<5} {f['symbol']:<6} qty {f['quantity']:.6g} "
                     f"@ {f['price']:g}  notional ${f['notional']:,.2f}  fee ${f['fee']:,.2f}"
                     + (f"  realised ${f['realised_pnl']:,.2f}" if f["kind"] == "close" else ""))
    for h in report["holds"]:
        lines.append(f"  HOLD    decision {h}")
    for r in report["rejections"]:
        lines.append(f"  REJECT  decision {r['decision_index']} {r['action']} {r['symbol']}: "
                     f"{r['code']} - {r['message']}")
    if report["ignored_fields"]:
        lines.append(f"  ignored fields: {', '.join(report['ignored_fields'])}")
    for note in report["notes"]:
        lines.append(f"  note: {note}")
    st = report["state"]
    lines.append(f"  state   cash ${st['cash']:,.2f}  equity ${report['equity']:,.2f}  "
                 f"fees ${st['fees_paid']:,.2f}  positions {len(st['positions'])}")
    for p in st["positions"]:
        lines.append(f"          {p['side']:<5} {p['symbol']:<6} qty {p['quantity']:.6g} entry "
                     f"{p['entry_price']:g} level {p['invalidation_price']}")
    if report["repair_prompt"]:
        lines.append("  repair follow-up:")
        lines += [f"    {ln}" for ln in str(report["repair_prompt"]).splitlines()]
    return "\n".join(lines)
