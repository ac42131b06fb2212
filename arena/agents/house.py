"""House agents: rule-based contestants with no LLM, always available offline.

They read the same briefing as everyone (the universe table, the contestant's own portfolio),
answer the same JSON contract and go through the same parsing, validation and repair path. Each
opens at most one position per cycle, sized within the rules, with an invalidation level on the
losing side; their simple logic is stated per strategy, with its parameters (a roster entry's
``strategy_params``, :func:`house_params`) and their defaults in brackets:

* ``momentum``: close a long whose ``exit_lookback``-day return [10] is below
  ``exit_below_return_pct`` [0]; open a long in the tradeable asset with the best
  ``entry_lookback``-day return [30], if that return is above ``entry_min_return_pct`` [0]
  (``size_pct`` [20] of equity, level ``stop_pct`` [10] below).
* ``mean_reversion``: close a long once its 14-day RSI is back above ``exit_rsi_above`` [50];
  open a long in the most oversold tradeable asset, RSI below ``entry_rsi_below`` [30]
  (``size_pct`` [15], level ``stop_pct`` [8] below).
* ``trend_following``: close a long trading more than ``pullback_pct`` [5] below its 30-day
  high; open a long in the tradeable asset nearest its 30-day high whose ``trend_lookback``-day
  return [30] is above ``trend_min_return_pct`` [0] (``size_pct`` [20], level ``stop_pct`` [7]
  below).
* ``equal_weight``: a buy-and-hold of an equally weighted basket, within the arena's limits: one
  new ``size_pct`` [10] position per cycle (level ``stop_pct`` [50] below), in order of dollar
  volume, until ``basket_size`` [10] are held; never sells.
* ``random``: the zero-skill player of :mod:`arena.scoring.arena_luck` - the same decision
  function (:func:`~arena.scoring.arena_luck.zero_skill_answer`) with the default profile and the
  arena rules, so it is a sample of the luck distribution it is compared with - drawing from
  ``np.random.default_rng`` seeded by the contestant's name and the cycle time. It takes no
  parameters: tuned, it would no longer be a sample of that distribution.

Units: every ``_pct`` parameter is in percent (``size_pct: 20`` is 20% of equity, ``stop_pct: 7``
a level 7% below the entry price, ``exit_below_return_pct: -5`` a return of -5%); RSI levels are
RSI points (0-100); lookbacks are days. A lookback reads a column of the universe table, so it is
one of the returns the briefing gives every asset: 1, 10 or 30 days (``return_1d``,
``return_10d``, ``return_30d``). The 14-day RSI (``rsi_14d``), the 30-day high
(``distance_from_30d_high``) and the 30-day dollar volume (``adv_usd``) have no other window in
the table, so they take no lookback. Sizes stay within the arena's rules
(:data:`~arena.engine.rules.ARENA_RULES`): an open is 10% to 100% of equity, never below the
minimum open share; a level lies between zero and the entry price (``stop_pct`` 0.1 to 99).
Anything else is refused at load (:class:`HouseParamsError`), naming the parameter and what it
takes. Without parameters a strategy answers exactly as before they existed.

Two entries of one strategy with different parameters are two contestants. Their call records
tell them apart: the model label is ``house/<strategy>``, followed by the parameters that differ
from their defaults (:func:`house_label`: ``house/momentum(entry_lookback=10,size_pct=25)``).

**Rulers and contestants.** A house rule at its defaults is one of the arena's own rules: a
**ruler**, the yardstick the contestants are read against, never ranked. An entry that changes a
parameter is someone's own strategy (a researcher's "momentum-fast"), and an entry marked
``role: contestant`` in the roster asks to compete: both play as **contestants**, ranked and
tested like any model (:func:`house_role`). The decision is recorded in the call records' label,
so a season's ledger and marts read it back without the roster (:func:`label_role`): a ruler's
label is exactly ``house/<strategy>`` (:data:`RULER_LABEL`); a variant's names its parameters,
and a default entry marked a contestant is labelled ``house/<strategy>(role=contestant)``.

A repair follow-up (rare: house answers are valid by construction) is answered with holds only.
"""

from __future__ import annotations

import json
import re
import time
import zlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Annotated, Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from arena.agents.base import Reply
from arena.core.types import Briefing, CallRecord, Message
from arena.engine.portfolio import Portfolio, Position
from arena.engine.rules import ARENA_RULES, Rules
from arena.scoring.arena_luck import zero_skill_answer

Row = Mapping[str, Any]
Answer = dict[str, Any]

# -- parameters ----------------------------------------------------------------------------------

# The lookbacks a strategy can read: the universe table's returns (arena.market.types.UniverseRow).
LOOKBACKS: Mapping[int, str] = MappingProxyType({1: "return_1d", 10: "return_10d",
                                                 30: "return_30d"})
_LOOKBACK_TEXT = f"{', '.join(map(str, list(LOOKBACKS)[:-1]))} or {list(LOOKBACKS)[-1]}"
_RETURNS_TEXT = ", ".join(LOOKBACKS.values())
# An open's size within the rules: the equity percent of an open, never below the minimum share.
SIZE_PCT = (max(ARENA_RULES.equity_percent[0], ARENA_RULES.min_open_share * 100),
            ARENA_RULES.equity_percent[1])
STOP_PCT = (0.1, 99.0)  # a long's level strictly between zero and the entry price

# -- roles ---------------------------------------------------------------------------------------

CONTESTANT, RULER = "contestant", "ruler"
ROLES = (CONTESTANT, RULER)  # the order of the bands: contestants first
# A ruler's call label, whole: house/<strategy> and nothing after it (a regular expression that
# Python's re.fullmatch and DuckDB's regexp_full_match read alike: the leaderboard mart uses it).
RULER_LABEL = "house/[a-z_]+"


def _number(value: float) -> float:
    """``value`` as it is written: a whole number as an int (``20.0`` -> ``20``)."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _percent(value: float) -> str:
    return f"{_number(value)}%"


def _known_lookback(days: int) -> int:
    if days not in LOOKBACKS:
        raise ValueError(f"no {days}-day return in the universe table")
    return days


Lookback = Annotated[int, AfterValidator(_known_lookback)]


def _lookback(default: int, what: str) -> Any:
    return Field(default, description=f"{_LOOKBACK_TEXT} (days): the return that {what} "
                                      f"(the universe table's {_RETURNS_TEXT}; the briefing has "
                                      "no other return)")


def _size(default: float) -> Any:
    low, high = SIZE_PCT
    return Field(default, ge=low, le=high, description=(
        f"a number from {low:g} to {high:g}: the percent of equity each open puts in (the "
        f"arena's rules refuse an open outside {low:g}-{high:g}% of equity)"))


def _stop(default: float) -> Any:
    low, high = STOP_PCT
    return Field(default, ge=low, le=high, description=(
        f"a number from {low:g} to {high:g}: how far below the entry price, in percent, the "
        "position's invalidation level lies (a long's level must lie between zero and its "
        "entry price)"))


def _return(default: float, what: str) -> Any:
    return Field(default, gt=-100, description=f"a number above -100: {what}, in percent "
                                               "(-5 is a return of -5%)")


def _rsi(default: float, what: str) -> Any:
    return Field(default, gt=0, lt=100,
                 description=f"a number between 0 and 100 (RSI points): {what}")


class HouseParams(BaseModel):
    """The parameters of one house strategy: a frozen value, each field with today's default.
    Strict: a lookback is a whole number, a level or size a number (never a string or a bool),
    and no parameter is infinite or NaN."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)
    fixed: ClassVar[str] = ""  # what the strategy reads that no parameter changes


class MomentumParams(HouseParams):
    """The parameters of ``momentum`` (the module docstring states its rule)."""

    entry_lookback: Lookback = _lookback(30, "ranks the assets to open")
    entry_min_return_pct: float = _return(0, "the entry return an open must beat")
    exit_lookback: Lookback = _lookback(10, "closes a long when it falls below "
                                            "exit_below_return_pct")
    exit_below_return_pct: float = _return(0, "a long whose exit return falls below it closes")
    size_pct: float = _size(20)
    stop_pct: float = _stop(10)


class MeanReversionParams(HouseParams):
    """The parameters of ``mean_reversion`` (the module docstring states its rule)."""

    fixed: ClassVar[str] = ("its RSI is the universe table's rsi_14d, the only RSI the briefing "
                            "gives every asset")
    entry_rsi_below: float = _rsi(30, "an asset whose 14-day RSI is below it is oversold")
    exit_rsi_above: float = _rsi(50, "a long whose 14-day RSI is back above it closes")
    size_pct: float = _size(15)
    stop_pct: float = _stop(8)

    @model_validator(mode="after")
    def _exit_above_entry(self) -> MeanReversionParams:
        if self.exit_rsi_above <= self.entry_rsi_below:
            raise ValueError(f"exit_rsi_above ({_number(self.exit_rsi_above)}) must be above "
                             f"entry_rsi_below ({_number(self.entry_rsi_below)}): the strategy "
                             "buys below the one and sells above the other")
        return self


class TrendFollowingParams(HouseParams):
    """The parameters of ``trend_following`` (the module docstring states its rule)."""

    fixed: ClassVar[str] = ("its high is the universe table's distance_from_30d_high, the only "
                            "high the briefing gives")
    pullback_pct: float = Field(5, gt=0, lt=100, description=(
        "a number between 0 and 100: a long trading more than this percent below its 30-day "
        "high closes"))
    trend_lookback: Lookback = _lookback(30, "must be above trend_min_return_pct for an open")
    trend_min_return_pct: float = _return(0, "the trend return an open must beat")
    size_pct: float = _size(20)
    stop_pct: float = _stop(7)


class EqualWeightParams(HouseParams):
    """The parameters of ``equal_weight`` (the module docstring states its rule)."""

    fixed: ClassVar[str] = ("it buys in order of adv_usd, the universe table's 30-day average "
                            "dollar volume")
    basket_size: int = Field(10, ge=1, le=ARENA_RULES.max_positions, description=(
        f"a whole number from 1 to {ARENA_RULES.max_positions}: the positions the basket holds "
        f"(the arena's rules allow {ARENA_RULES.max_positions} open positions)"))
    size_pct: float = _size(10)
    stop_pct: float = _stop(50)


# Every house strategy and the class of its parameters (None: it takes none).
PARAMETERS: Mapping[str, type[HouseParams] | None] = MappingProxyType({
    "momentum": MomentumParams, "mean_reversion": MeanReversionParams,
    "trend_following": TrendFollowingParams, "equal_weight": EqualWeightParams, "random": None})


class HouseParamsError(ValueError):
    """Parameters a house strategy cannot take. ``problems``: ``(parameter, message)`` pairs, the
    parameter ``""`` for a problem of the whole mapping."""

    def __init__(self, strategy: str, problems: list[tuple[str, str]]) -> None:
        self.strategy, self.problems = strategy, tuple(problems)
        super().__init__(f"house strategy {strategy}: " + "; ".join(
            f"{name}: {message}" if name else message for name, message in self.problems))


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}..."


def _problem(strategy: str, schema: type[HouseParams], error: Mapping[str, Any]
             ) -> tuple[str, str]:
    if not error["loc"]:  # a rule between parameters
        return "", error["msg"].removeprefix("Value error, ")
    name = str(error["loc"][0])
    if error["type"] == "extra_forbidden":
        fixed = f"; {schema.fixed}" if schema.fixed else ""
        return name, (f"not a parameter of strategy {strategy} (it takes "
                      f"{', '.join(schema.model_fields)}{fixed})")
    field = schema.model_fields.get(name)
    if field is None:  # not expected: pydantic names a field or the whole mapping
        return name, error["msg"]
    return name, f"{_shown(error.get('input'))} refused: {name} takes {field.description}"


def house_params(strategy: str, given: object = None) -> HouseParams | None:
    """The validated parameters of house ``strategy`` from ``given`` (a roster entry's
    ``strategy_params``: a mapping of parameter names to values, or ``None`` for every
    default); ``None`` for a strategy that takes none. Raises :class:`HouseParamsError` naming
    every parameter that is unknown, of the wrong type or out of its range."""
    if strategy not in PARAMETERS:
        raise ValueError(f"unknown house strategy {strategy!r} "
                         f"(known: {', '.join(sorted(PARAMETERS))})")
    schema = PARAMETERS[strategy]
    if isinstance(given, HouseParams) and type(given) is schema:
        return given
    if given is None:
        return None if schema is None else schema()
    if isinstance(given, HouseParams):
        raise HouseParamsError(strategy, [("", f"{type(given).__name__} are the parameters of "
                                               "another strategy")])
    if not isinstance(given, Mapping):
        raise HouseParamsError(strategy, [("", "expected a mapping of parameter names to "
                                               "values, such as {size_pct: 15}")])
    names = [key for key in given if not isinstance(key, str)]
    if names:
        raise HouseParamsError(strategy, [(str(key), "not a parameter name (a name is a word "
                                                     "such as size_pct)") for key in names])
    if schema is None:
        if not given:
            return None
        raise HouseParamsError(strategy, [("", (
            f"strategy {strategy} takes no parameters (it plays the arena's zero-skill player "
            "exactly as the luck distribution it is compared with does)"))])
    try:
        return schema.model_validate(dict(given))
    except ValidationError as exc:
        raise HouseParamsError(strategy, [_problem(strategy, schema, e)
                                          for e in exc.errors(include_url=False)]) from None


def changed_params(params: HouseParams | None) -> dict[str, Any]:
    """The parameters that differ from their defaults, in their declared order."""
    return {} if params is None else params.model_dump(exclude_defaults=True)


def house_role(params: HouseParams | None, role: str | None = None) -> str:
    """The role a house entry plays: a ruler when it is the arena's own rule - every parameter at
    its default - and not marked ``role: contestant``; a contestant otherwise."""
    if role not in (None, *ROLES):
        raise ValueError(f"unknown role {role!r} (expected {' or '.join(ROLES)})")
    return CONTESTANT if role == CONTESTANT or changed_params(params) else RULER


def house_label(strategy: str, params: HouseParams | None, role: str | None = None) -> str:
    """The model label of a house agent's call records: ``house/<strategy>``, followed by the
    parameters that differ from their defaults, in their declared order
    (``house/momentum(entry_lookback=10,size_pct=25)``), so two variants are told apart; a
    default entry marked ``role: contestant`` is ``house/<strategy>(role=contestant)``, so its
    records tell its role (:func:`label_role`)."""
    changed = changed_params(params)
    if not changed and house_role(params, role) == CONTESTANT:
        changed = {"role": CONTESTANT}
    if not changed:
        return f"house/{strategy}"
    return f"house/{strategy}({','.join(f'{k}={_number(v)}' for k, v in changed.items())})"


def label_role(model: object) -> str:
    """The role a recorded call's model label tells: a ruler's is exactly ``house/<strategy>``
    (:data:`RULER_LABEL`); every other label - a house variant's, a model's, an agent's, an
    entrant's - is a contestant's."""
    return RULER if re.fullmatch(RULER_LABEL, str(model)) else CONTESTANT


# -- strategies ----------------------------------------------------------------------------------


def _answer(reasoning: str, decisions: list[dict[str, Any]]) -> Answer:
    return {"reasoning": reasoning,
            "market_context": {"overall_sentiment": "neutral", "key_factors": []},
            "decisions": decisions}


def _open(row: Row, size_pct: float, stop_pct: float, thesis: str) -> dict[str, Any]:
    return {"action": "open_long", "symbol": row["symbol"], "percent_of_equity": _number(size_pct),
            "confidence": 0.85, "invalidation_price": round(row["price"] * (1 - stop_pct / 100), 8),
            "thesis": thesis, "invalidation": f"a close {_percent(stop_pct)} below entry",
            "rationale": thesis}


def _close(symbol: str, why: str) -> dict[str, Any]:
    return {"action": "close", "symbol": symbol, "rationale": why}


def _candidates(table: list[Row], book: Mapping[str, Any], key: str) -> list[Row]:
    held = {p["symbol"] for p in book.get("positions", [])}
    return [r for r in table if r["tradeable_today"] and r["symbol"] not in held
            and r.get("price") and r.get(key) is not None]


def _closes(table: list[Row], book: Mapping[str, Any], exit_when: Callable[[Row], bool],
            why: str) -> list[dict[str, Any]]:
    """Close every held long (tradeable today) whose universe row meets ``exit_when``."""
    rows = {r["symbol"]: r for r in table}
    return [_close(p["symbol"], why) for p in book.get("positions", [])
            if p["side"] == "long" and rows.get(p["symbol"], {}).get("tradeable_today")
            and exit_when(rows[p["symbol"]])]


def _below(value: float | None, level: float) -> bool:
    """A known ``value`` below ``level`` (a missing indicator never triggers a rule)."""
    return value is not None and value < level


def _above(value: float | None, level: float) -> bool:
    return value is not None and value > level


def _can_open(book: Mapping[str, Any], rules: Rules = ARENA_RULES) -> bool:
    """A new-position slot is left and free cash can fund the rules' minimum size."""
    equity = book.get("equity") or 0.0
    return (book.get("new_positions_left", 0) > 0 and book.get("cash", 0.0) / (1 + rules.fee_rate)
            >= rules.min_open_share * equity * 1.0001)


MOMENTUM, MEAN_REVERSION = MomentumParams(), MeanReversionParams()
TREND_FOLLOWING, EQUAL_WEIGHT = TrendFollowingParams(), EqualWeightParams()


def momentum(table: list[Row], book: Mapping[str, Any], p: MomentumParams = MOMENTUM) -> Answer:
    entry, leave = LOOKBACKS[p.entry_lookback], LOOKBACKS[p.exit_lookback]
    cut = p.exit_below_return_pct / 100
    why = (f"{p.exit_lookback}-day momentum turned negative" if cut == 0 else
           f"{p.exit_lookback}-day return fell below {_percent(p.exit_below_return_pct)}")
    closes = _closes(table, book, lambda r: _below(r.get(leave), cut), why)
    opens = []
    best = sorted(_candidates(table, book, entry), key=lambda r: -r[entry])
    if best and best[0][entry] > p.entry_min_return_pct / 100 and _can_open(book):
        opens.append(_open(best[0], p.size_pct, p.stop_pct,
                           f"strongest {p.entry_lookback}-day return ({best[0][entry]:.1%})"))
    return _answer(f"Ride the strongest {p.entry_lookback}-day trend; cut when "
                   f"{p.exit_lookback}-day momentum fades.", closes + opens)


def mean_reversion(table: list[Row], book: Mapping[str, Any],
                   p: MeanReversionParams = MEAN_REVERSION) -> Answer:
    closes = _closes(table, book, lambda r: _above(r.get("rsi_14d"), p.exit_rsi_above),
                     f"RSI recovered above {_number(p.exit_rsi_above)}")
    opens = []
    oversold = sorted((r for r in _candidates(table, book, "rsi_14d")
                       if r["rsi_14d"] < p.entry_rsi_below), key=lambda r: r["rsi_14d"])
    if oversold and _can_open(book):
        opens.append(_open(oversold[0], p.size_pct, p.stop_pct,
                           f"oversold, RSI {oversold[0]['rsi_14d']:.0f}"))
    return _answer("Buy the most oversold asset; take profit when RSI normalises.", closes + opens)


def trend_following(table: list[Row], book: Mapping[str, Any],
                    p: TrendFollowingParams = TREND_FOLLOWING) -> Answer:
    drop = -p.pullback_pct / 100
    closes = _closes(table, book, lambda r: _below(r.get("distance_from_30d_high"), drop),
                     f"fell more than {_percent(p.pullback_pct)} below its 30-day high")
    opens = []
    trend, floor = LOOKBACKS[p.trend_lookback], p.trend_min_return_pct / 100
    near = sorted((r for r in _candidates(table, book, "distance_from_30d_high")
                   if _above(r.get(trend), floor)), key=lambda r: -r["distance_from_30d_high"])
    if near and _can_open(book):
        opens.append(_open(near[0], p.size_pct, p.stop_pct,
                           "trading at its 30-day high in an uptrend"))
    return _answer(f"Follow assets making new highs; exit on a {_percent(p.pullback_pct)} "
                   "pullback.", closes + opens)


def equal_weight(table: list[Row], book: Mapping[str, Any],
                 p: EqualWeightParams = EQUAL_WEIGHT) -> Answer:
    pool = sorted(_candidates(table, book, "adv_usd"), key=lambda r: (-r["adv_usd"], r["symbol"]))
    full = len(book.get("positions", ())) >= p.basket_size  # the rules' own cap is in
    if full or not pool or not _can_open(book):  # new_positions_left
        return _answer("Equal-weight basket complete or nothing tradeable today: hold.", [])
    return _answer(f"Build an equal-weight basket one {_percent(p.size_pct)} position a day, "
                   "then hold.", [_open(pool[0], p.size_pct, p.stop_pct, "equal-weight buy and hold")])


def trading_table(market: Mapping[str, Any]) -> list[Row]:
    """The briefing's universe table as the house rules read it: a row whose price is stale or
    whose bars are damaged (``market["stale"]``, ``market["damaged"]``:
    :class:`arena.market.types.MarketData`) is not tradeable this cycle (the engine would refuse
    it, ``stale_price``), though a stale price still marks the book."""
    stale = {**(market.get("stale") or {}), **(market.get("damaged") or {})}
    return [{**r, "tradeable_today": False} if r["symbol"] in stale else r
            for r in market["table"]]


# Each rule-based strategy: ``(table, book)`` with its defaults, or ``(table, book, params)``.
STRATEGIES: dict[str, Callable[..., Answer]] = {
    "momentum": momentum, "mean_reversion": mean_reversion, "trend_following": trend_following,
    "equal_weight": equal_weight,
}


def book_portfolio(book: Mapping[str, Any]) -> Portfolio:
    """The engine :class:`~arena.engine.portfolio.Portfolio` of a briefing's portfolio snapshot
    (:func:`arena.market.briefing.portfolio_snapshot`): cash, fees, realised P&L and every
    position with its side, quantity, entry price, opening time, level and texts."""
    positions = {p["symbol"]: Position(p["symbol"], p["side"], float(p["quantity"]),
                                       float(p["entry_price"]), pd.Timestamp(p["opened_at"]),
                                       p.get("invalidation_price"), p.get("thesis") or "",
                                       p.get("invalidation") or "")
                 for p in book.get("positions", ())}
    return Portfolio(float(book["cash"]), MappingProxyType(positions),
                     float(book.get("fees_paid", 0.0)), float(book.get("realised_pnl", 0.0)))


def random_contestant_answer(table: list[Row], book: Mapping[str, Any],
                             rng: np.random.Generator, rules: Rules = ARENA_RULES) -> Answer:
    """The arena's zero-skill player (:func:`arena.scoring.arena_luck.zero_skill_answer`, default
    :class:`~arena.scoring.arena_luck.RandomProfile`) on the briefing's universe table (this
    cycle's prices, which also mark the book, and ``tradeable_today``) and portfolio snapshot."""
    prices = {r["symbol"]: float(r["price"]) for r in table if r.get("price") is not None}
    tradeable = [r["symbol"] for r in table if r["tradeable_today"] and r["symbol"] in prices]
    answer = zero_skill_answer(rng, book_portfolio(book), prices, prices, tradeable, rules=rules)
    return {**answer.as_json(),
            "market_context": {"overall_sentiment": "neutral", "key_factors": []}}


class HouseContestant:
    """A roster contestant of kind ``house``: ``strategy`` picks the rule, ``params`` tunes it
    (a mapping as a roster entry's ``strategy_params`` gives it, or the strategy's
    :class:`HouseParams`; ``None``: every default), ``role`` is the roster's ``role:`` (None:
    not given); its role is :func:`house_role`'s. Bad parameters raise
    :class:`HouseParamsError`."""

    kind = "house"

    def __init__(self, name: str, strategy: str, *, seed: int = 0,
                 params: HouseParams | Mapping[str, Any] | None = None,
                 role: str | None = None) -> None:
        self.name, self.strategy, self.seed = name, strategy, seed
        self.params = house_params(strategy, params)
        self.role = house_role(self.params, role)
        self.label = house_label(strategy, self.params, role)

    def __repr__(self) -> str:
        return f"HouseContestant({self.name!r}, {self.label!r})"

    def answer(self, briefing: Briefing) -> Reply:
        t0 = time.perf_counter()
        table = trading_table(briefing.data["market"])
        book = briefing.portfolio
        if self.strategy == "random":
            key = zlib.crc32(f"{self.name}|{briefing.at.isoformat()}".encode())
            rng = np.random.default_rng(self.seed * 2**32 + key)
            answer = random_contestant_answer(table, book, rng)
        else:
            answer = STRATEGIES[self.strategy](table, book, self.params)
        text = json.dumps(answer)
        record = CallRecord(self.name, "decision", self.label, 0, 0, time.perf_counter() - t0, 0.0)
        return Reply(text, (record,), (*briefing.messages, Message("assistant", text)))

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        text = json.dumps(_answer("Repair: keep what executed, hold the rest.", []))
        record = CallRecord(self.name, "repair", self.label, 0, 0, 0.0, 0.0)
        return Reply(text, (record,), (*previous.transcript, Message("user", follow_up),
                                       Message("assistant", text)))
