"""House agents: rule-based contestants with no LLM, always available offline.

They read the same briefing as everyone (the universe table, the contestant's own portfolio),
answer the same JSON contract and go through the same parsing, validation and repair path. Each
opens at most one position per cycle, sized within the rules, with an invalidation level on the
losing side; their simple logic is stated per strategy:

* ``momentum``: close a long whose 10-day return turned negative; open a long in the tradeable
  asset with the best positive 30-day return (20% of equity, level 10% below).
* ``mean_reversion``: close a long once its 14-day RSI is back above 50; open a long in the most
  oversold tradeable asset (RSI below 30; 15%, level 8% below).
* ``trend_following``: close a long trading more than 5% below its 30-day high; open a long in
  the tradeable asset nearest its 30-day high with a positive 30-day return (20%, level 7%
  below).
* ``equal_weight``: a buy-and-hold of an equally weighted basket, within the arena's limits: one
  new 10% position per cycle, in order of dollar volume, until ten are held; never sells.
* ``random``: the zero-skill player of :mod:`arena.scoring.arena_luck` - the same decision
  function (:func:`~arena.scoring.arena_luck.zero_skill_answer`) with the default profile and the
  arena rules, so it is a sample of the luck distribution it is compared with - drawing from
  ``np.random.default_rng`` seeded by the contestant's name and the cycle time.

A repair follow-up (rare: house answers are valid by construction) is answered with holds only.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from arena.agents.base import Reply
from arena.core.lazy import lazy_import
from arena.core.types import Briefing, CallRecord, Message
from arena.engine.portfolio import Portfolio, Position
from arena.engine.rules import ARENA_RULES, Rules
from arena.scoring.arena_luck import zero_skill_answer

np = lazy_import("numpy")
pd = lazy_import("pandas")

Row = Mapping[str, Any]
Answer = dict[str, Any]


def _answer(reasoning: str, decisions: list[dict[str, Any]]) -> Answer:
    return {"reasoning": reasoning,
            "market_context": {"overall_sentiment": "neutral", "key_factors": []},
            "decisions": decisions}


def _open(row: Row, pct: float, stop: float, thesis: str) -> dict[str, Any]:
    return {"action": "open_long", "symbol": row["symbol"], "percent_of_equity": pct,
            "confidence": 0.85, "invalidation_price": round(row["price"] * (1 - stop), 8),
            "thesis": thesis, "invalidation": f"a close {stop:.0%} below entry",
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


def _can_open(book: Mapping[str, Any], rules: Rules = ARENA_RULES) -> bool:
    """A new-position slot is left and free cash can fund the rules' minimum size."""
    equity = book.get("equity") or 0.0
    return (book.get("new_positions_left", 0) > 0 and book.get("cash", 0.0) / (1 + rules.fee_rate)
            >= rules.min_open_share * equity * 1.0001)


def momentum(table: list[Row], book: Mapping[str, Any]) -> Answer:
    closes = _closes(table, book, lambda r: (r.get("return_10d") or 0) < 0,
                     "10-day momentum turned negative")
    opens = []
    best = sorted(_candidates(table, book, "return_30d"), key=lambda r: -r["return_30d"])
    if best and best[0]["return_30d"] > 0 and _can_open(book):
        opens.append(_open(best[0], 20, 0.10, f"strongest 30-day return ({best[0]['return_30d']:.1%})"))
    return _answer("Ride the strongest 30-day trend; cut when 10-day momentum fades.", closes + opens)


def mean_reversion(table: list[Row], book: Mapping[str, Any]) -> Answer:
    closes = _closes(table, book, lambda r: (r.get("rsi_14d") or 0) > 50, "RSI recovered above 50")
    opens = []
    oversold = sorted((r for r in _candidates(table, book, "rsi_14d") if r["rsi_14d"] < 30),
                      key=lambda r: r["rsi_14d"])
    if oversold and _can_open(book):
        opens.append(_open(oversold[0], 15, 0.08, f"oversold, RSI {oversold[0]['rsi_14d']:.0f}"))
    return _answer("Buy the most oversold asset; take profit when RSI normalises.", closes + opens)


def trend_following(table: list[Row], book: Mapping[str, Any]) -> Answer:
    closes = _closes(table, book, lambda r: (r.get("distance_from_30d_high") or 0) < -0.05,
                     "fell more than 5% below its 30-day high")
    opens = []
    near = sorted((r for r in _candidates(table, book, "distance_from_30d_high")
                   if (r.get("return_30d") or 0) > 0), key=lambda r: -r["distance_from_30d_high"])
    if near and _can_open(book):
        opens.append(_open(near[0], 20, 0.07, "trading at its 30-day high in an uptrend"))
    return _answer("Follow assets making new highs; exit on a 5% pullback.", closes + opens)


def equal_weight(table: list[Row], book: Mapping[str, Any]) -> Answer:
    pool = sorted(_candidates(table, book, "adv_usd"), key=lambda r: (-r["adv_usd"], r["symbol"]))
    if not pool or not _can_open(book):  # new_positions_left already counts the 10-position cap
        return _answer("Equal-weight basket complete or nothing tradeable today: hold.", [])
    return _answer("Build an equal-weight basket one 10% position a day, then hold.",
                   [_open(pool[0], 10, 0.5, "equal-weight buy and hold")])


def trading_table(market: Mapping[str, Any]) -> list[Row]:
    """The briefing's universe table as the house rules read it: a row whose price is stale or
    whose bars are damaged (``market["stale"]``, ``market["damaged"]``:
    :class:`arena.market.types.MarketData`) is not tradeable this cycle (the engine would refuse
    it, ``stale_price``), though a stale price still marks the book."""
    stale = {**(market.get("stale") or {}), **(market.get("damaged") or {})}
    return [{**r, "tradeable_today": False} if r["symbol"] in stale else r
            for r in market["table"]]


STRATEGIES: dict[str, Callable[[list[Row], Mapping[str, Any]], Answer]] = {
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
    """A roster contestant of kind ``house`` (``strategy`` picks the rule)."""

    kind = "house"

    def __init__(self, name: str, strategy: str, *, seed: int = 0) -> None:
        if strategy not in {*STRATEGIES, "random"}:
            raise ValueError(f"unknown house strategy {strategy!r}")
        self.name, self.strategy, self.seed = name, strategy, seed

    def __repr__(self) -> str:
        return f"HouseContestant({self.name!r}, {self.strategy!r})"

    def answer(self, briefing: Briefing) -> Reply:
        t0 = time.perf_counter()
        table = trading_table(briefing.data["market"])
        book = briefing.portfolio
        if self.strategy == "random":
            key = zlib.crc32(f"{self.name}|{briefing.at.isoformat()}".encode())
            rng = np.random.default_rng(self.seed * 2**32 + key)
            answer = random_contestant_answer(table, book, rng)
        else:
            answer = STRATEGIES[self.strategy](table, book)
        text = json.dumps(answer)
        record = CallRecord(self.name, "decision", f"house/{self.strategy}", 0, 0,
                            time.perf_counter() - t0, 0.0)
        return Reply(text, (record,), (*briefing.messages, Message("assistant", text)))

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        text = json.dumps(_answer("Repair: keep what executed, hold the rest.", []))
        record = CallRecord(self.name, "repair", f"house/{self.strategy}", 0, 0, 0.0, 0.0)
        return Reply(text, (record,), (*previous.transcript, Message("user", follow_up),
                                       Message("assistant", text)))
