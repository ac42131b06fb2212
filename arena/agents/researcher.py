"""The researcher + strategist contestant (two phases, one model).

Phase 1, the researcher, works with tools through litellm function calling (:data:`TOOLS`, run
by :func:`run_tool`); each serves any asset of the universe table, screened or not, and the
benchmarks, from bars closed by the cycle time only (the cycle's charts,
:attr:`arena.core.types.Briefing.charts`, read the lake as of the cycle):

* ``get_candles``: the last ``count`` closed candles of one interval (1w, 1d or 4h; 1 to
  :data:`MAX_CANDLES`, by default the briefing's depth);
* ``get_indicators``: at the last closed candle of one interval, from the last
  :data:`INDICATOR_BARS` closed candles (:func:`indicator_values`, the definitions of
  :mod:`arena.core.indicators`): RSI 14 (Wilder), EMA 20 and 50, MACD 12/26/9, Bollinger bands
  20 with 2 population standard deviations, ATR 14 (Wilder). The window is fixed so a value does
  not depend on how deep the lake reaches, and it is the briefing's RSI window, so the RSIs
  the tools show are the briefing's;
* ``indicator_summary``: the asset's row of the universe table and its RSI 14 on 4h, 1d and 1w;
* ``portfolio_state``: cash, equity and open positions.

A request the tools cannot serve (an unknown symbol or interval, a count out of range, an asset
whose bars the cycle found damaged) is refused with an answer naming the problem, never answered
with other data. It may make at most :data:`MAX_TOOL_CALLS` tool calls; then it must answer with
opportunity packages, each with a 0-100 research confidence. Phase 2, the strategist, sees the
packages above :data:`MIN_PACKAGE_CONFIDENCE` and answers the decision contract (it may shrink,
reject or hold). The repair round continues the strategist's conversation.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from arena.agents.base import KeysStayBehind, Reply
from arena.agents.llm import RetryPolicy, complete, reply_from
from arena.agents.roster import ContestantSpec
from arena.core.errors import ArenaError, UnusableInput
from arena.core.indicators import atr, bollinger, ema, macd, rsi_values
from arena.core.types import Briefing, Charts, Message
from arena.market.prompts import Prompts
from arena.market.types import DEPTH, Candle

MAX_TOOL_CALLS = 10
MIN_PACKAGE_CONFIDENCE = 60
INTERVALS = ("1w", "1d", "4h")
MAX_CANDLES = 100
INDICATOR_BARS = 100  # the closed candles an indicator reads: the briefing's RSI window
RSI_PERIOD = 14
EMA_PERIODS = (20, 50)
MACD_PERIODS = (12, 26, 9)
BB_PERIOD, BB_WIDTH = 20, 2.0
ATR_PERIOD = 14
INDICATOR_KEYS = ("rsi_14", "ema_20", "ema_50", "macd_line", "macd_signal", "macd_histogram",
                  "bb_lower", "bb_middle", "bb_upper", "bb_position", "atr_14")
SUMMARY_KEYS = ("price", "return_1d", "return_10d", "return_30d", "volatility_30d", "rsi_14d",
                "distance_from_30d_high", "adv_usd", "days_to_earnings")

_ANY = "any asset of the universe table (screened or not) or a benchmark"
_INTERVAL = {"type": "string", "enum": list(INTERVALS)}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_candles",
        "description": f"Closed OHLCV candles of {_ANY}, oldest first: the last `count` of one "
                       f"interval (default {DEPTH['1w']} weekly, {DEPTH['1d']} daily, "
                       f"{DEPTH['4h']} four-hour).",
        "parameters": {"type": "object", "required": ["symbol", "interval"], "properties": {
            "symbol": {"type": "string"}, "interval": _INTERVAL,
            "count": {"type": "integer", "minimum": 1, "maximum": MAX_CANDLES}}}}},
    {"type": "function", "function": {
        "name": "get_indicators",
        "description": f"Technical indicators of {_ANY} at its last closed candle of one "
                       f"interval, from its last {INDICATOR_BARS} closed candles: RSI "
                       f"{RSI_PERIOD} (Wilder), EMA {EMA_PERIODS[0]} and {EMA_PERIODS[1]}, MACD "
                       f"{'/'.join(map(str, MACD_PERIODS))} (line, signal, histogram), Bollinger "
                       f"bands {BB_PERIOD} with {BB_WIDTH:g} standard deviations (lower, middle, "
                       f"upper; position 0 = lower band, 1 = upper), ATR {ATR_PERIOD} (Wilder).",
        "parameters": {"type": "object", "required": ["symbol", "interval"], "properties": {
            "symbol": {"type": "string"}, "interval": _INTERVAL}}}},
    {"type": "function", "function": {
        "name": "indicator_summary",
        "description": f"The universe-table row of {_ANY} (price, returns, volatility, RSI, "
                       f"distance from the 30-day high, dollar volume, days to earnings) and its "
                       f"RSI {RSI_PERIOD} on 4h, 1d and 1w candles.",
        "parameters": {"type": "object", "required": ["symbol"],
                       "properties": {"symbol": {"type": "string"}}}}},
    {"type": "function", "function": {
        "name": "portfolio_state", "description": "Cash, equity and open positions.",
        "parameters": {"type": "object", "properties": {}}}},
]


class Refused(UnusableInput):
    """A tool request the tools cannot serve; the message names the problem."""


def _number(x: float) -> float | None:
    """A JSON-safe value: ``None`` for a value the series is too short for."""
    return None if x is None or not math.isfinite(x) else float(x)


def _rsi(close: pd.Series) -> float | None:
    return _number(float(rsi_values(close.to_numpy(dtype=float), RSI_PERIOD)[-1]))


def indicator_values(bars: pd.DataFrame) -> dict[str, float | None]:
    """:data:`INDICATOR_KEYS` at the last of ``bars`` (closed candles, oldest first), each from
    ``bars`` alone (:mod:`arena.core.indicators`); ``None`` where they are too few."""
    high, low, close = (bars[c].astype(float).reset_index(drop=True)
                        for c in ("high", "low", "close"))
    line, signal, histogram = macd(close, *MACD_PERIODS)
    bands = bollinger(close, BB_PERIOD, BB_WIDTH)
    values = [_rsi(close), *(ema(close, n).iloc[-1] for n in EMA_PERIODS),
              line.iloc[-1], signal.iloc[-1], histogram.iloc[-1], bands.lower.iloc[-1],
              bands.middle.iloc[-1], bands.upper.iloc[-1], bands.position.iloc[-1],
              atr(high, low, close, ATR_PERIOD).iloc[-1]]
    return {k: _number(v) for k, v in zip(INDICATOR_KEYS, values, strict=True)}


def _served(briefing: Briefing, arguments: Mapping[str, Any]) -> str:
    """The requested symbol, when the tools serve it."""
    market = briefing.data["market"]
    symbol = arguments.get("symbol")
    served = ({r["symbol"] for r in market["table"]}
              | {b["symbol"] for b in market.get("benchmarks", ())})
    if not isinstance(symbol, str) or symbol not in served:
        raise Refused(f"no data for {symbol!r}: the tools serve the {len(served)} symbols of the "
                      "universe table and the benchmarks")
    damage = (market.get("damaged") or {}).get(symbol)
    if damage:
        raise Refused(f"the bars of {symbol} cannot be used this cycle: {damage}")
    return symbol


def _interval(arguments: Mapping[str, Any]) -> str:
    interval = arguments.get("interval")
    if interval not in INTERVALS:
        raise Refused(f"interval {interval!r} is not served; use {', '.join(INTERVALS)}")
    return interval


def _count(arguments: Mapping[str, Any], interval: str) -> int:
    count = arguments.get("count", DEPTH[interval])
    if isinstance(count, float) and count.is_integer():
        count = int(count)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_CANDLES:
        raise Refused(f"count must be a whole number from 1 to {MAX_CANDLES}, not {count!r}")
    return count


def _charts(briefing: Briefing) -> Charts:
    if briefing.charts is None:
        raise Refused("no candles can be read: this briefing carries no charts of the cycle")
    return briefing.charts


def _read(briefing: Briefing, symbol: str, interval: str, count: int) -> pd.DataFrame:
    """The last ``count`` closed candles, or :class:`Refused` when there are none."""
    bars = _charts(briefing).candles(symbol, interval, count)
    if bars.empty:
        raise Refused(f"there are no closed {interval} candles of {symbol} at this cycle")
    return bars


def _head(briefing: Briefing, symbol: str, interval: str | None = None) -> dict[str, Any]:
    """What every answer about ``symbol`` starts with (a stale price flagged)."""
    out: dict[str, Any] = {"symbol": symbol}
    if interval is not None:
        out["interval"] = interval
    out["closed_by"] = briefing.at.isoformat()
    stale = (briefing.data["market"].get("stale") or {}).get(symbol)
    if stale:
        out["stale_since"] = stale
    return out


def _candles(briefing: Briefing, arguments: Mapping[str, Any]) -> dict[str, Any]:
    symbol, interval = _served(briefing, arguments), _interval(arguments)
    bars = _read(briefing, symbol, interval, _count(arguments, interval))
    rows = [[t.isoformat(), *values] for t, *values in zip(
        bars["timestamp"], *(bars[c].to_numpy(dtype=float).tolist()
                             for c in ("open", "high", "low", "close", "volume")), strict=True)]
    return {**_head(briefing, symbol, interval), "columns": list(Candle._fields), "rows": rows}


def _indicators(briefing: Briefing, arguments: Mapping[str, Any]) -> dict[str, Any]:
    symbol, interval = _served(briefing, arguments), _interval(arguments)
    bars = _read(briefing, symbol, interval, INDICATOR_BARS)
    return {**_head(briefing, symbol, interval),
            "last_candle": bars["timestamp"].iloc[-1].isoformat(),
            "close": float(bars["close"].iloc[-1]), "candles_used": len(bars),
            **indicator_values(bars)}


def _summary(briefing: Briefing, arguments: Mapping[str, Any]) -> dict[str, Any]:
    symbol = _served(briefing, arguments)
    row = next((r for r in briefing.data["market"]["table"] if r["symbol"] == symbol), {})
    rsi = {}
    for interval in ("4h", "1d", "1w"):
        bars = _charts(briefing).candles(symbol, interval, INDICATOR_BARS)
        rsi[f"rsi_{interval}"] = None if bars.empty else _rsi(bars["close"])
    return {**_head(briefing, symbol), **{k: row.get(k) for k in SUMMARY_KEYS}, **rsi}


_RUN: dict[str, Callable[[Briefing, Mapping[str, Any]], dict[str, Any]]] = {
    "get_candles": _candles, "get_indicators": _indicators, "indicator_summary": _summary,
    "portfolio_state": lambda briefing, arguments: dict(briefing.portfolio)}


def run_tool(briefing: Briefing, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """One tool call against the cycle's data (module docstring); a refusal, or a read the lake
    refuses (a damaged file), is an answer ``{"error": ...}``, never other data."""
    tool = _RUN.get(name)
    if tool is None:
        return {"error": f"unknown tool {name!r}; the tools are {', '.join(_RUN)}"}
    try:
        return tool(briefing, arguments)
    except ArenaError as exc:
        return {"error": str(exc)}


def _packages(text: str | None) -> list[dict[str, Any]]:
    """The researcher's packages: the JSON object in its answer (prose or a fence around it is
    tolerated here - this is the team's internal note, not the contract)."""
    text = text or ""
    start, end = text.find("{"), text.rfind("}")
    try:
        payload = json.loads(text[start:end + 1]) if start >= 0 < end else {}
    except ValueError:
        return []
    packages = payload.get("packages") if isinstance(payload, dict) else None
    return [p for p in packages if isinstance(p, dict)] if isinstance(packages, list) else []


def _confidence(package: Mapping[str, Any]) -> float:
    try:
        return float(package.get("confidence") or 0)
    except (TypeError, ValueError):
        return 0.0


class ResearcherContestant(KeysStayBehind):
    kind = "researcher"

    def __init__(self, spec: ContestantSpec, *, env: Mapping[str, str] | None = None,
                 templates: Prompts | None = None, retry: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 max_tool_calls: int = MAX_TOOL_CALLS) -> None:
        self.spec, self.name = spec, spec.name
        self._env, self._retry, self._sleep = env, retry or RetryPolicy(), sleep
        self._prompts = templates or Prompts()
        self.max_tool_calls = max_tool_calls

    def _call(self, role: str, messages: list[dict[str, Any]], **extra: Any):
        return complete(self.spec, (), role=role, env=self._env, retry=self._retry,
                        sleep=self._sleep, raw_messages=messages, **extra)

    def answer(self, briefing: Briefing) -> Reply:
        """Research, then decide. Whatever the model sends, this returns a Reply (never raises)."""
        try:
            return self._answer(briefing)
        except Exception as exc:
            return Reply(None, error=f"researcher failed: {type(exc).__name__}: {exc}")

    def _answer(self, briefing: Briefing) -> Reply:
        sections = dict(briefing.data["sections"])
        fields = {"max_tool_calls": self.max_tool_calls,
                  "min_package_confidence": MIN_PACKAGE_CONFIDENCE}
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": briefing.messages[0].content},
            {"role": "user", "content": self._prompts.render("researcher", **sections, **fields)}]
        calls, tool_log, used = [], [], 0
        while True:
            allow_tools = used < self.max_tool_calls
            done = self._call("researcher", messages, **({"tools": TOOLS} if allow_tools else {}))
            calls.append(done.record)
            choices = getattr(done.response, "choices", None) or []
            message = choices[0].message if choices else None
            tool_calls = list(getattr(message, "tool_calls", None) or []) if allow_tools else []
            if not tool_calls:
                break
            messages.append({"role": "assistant", "content": message.content or "",
                             "tool_calls": [{"id": c.id, "type": "function", "function": {
                                 "name": c.function.name, "arguments": c.function.arguments}}
                                 for c in tool_calls]})
            for call in tool_calls:
                used += 1
                try:
                    args = json.loads(call.function.arguments or "{}")
                except ValueError:
                    args = {}
                args = args if isinstance(args, dict) else {}
                result = (run_tool(briefing, call.function.name, args) if used <= self.max_tool_calls
                          else {"error": f"the limit of {self.max_tool_calls} tool calls is reached"})
                tool_log.append({"tool": call.function.name, "arguments": args, "result": result})
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": json.dumps(result)})
        extra: dict[str, Any] = {"tool_calls": tool_log, "research": done.text}
        if done.text is None:
            return Reply(None, tuple(calls), error=done.error or "the researcher gave no answer",
                         extra=extra)
        packages = [p for p in _packages(done.text) if _confidence(p) > MIN_PACKAGE_CONFIDENCE]
        extra["packages"] = packages
        strategist = (briefing.messages[0], Message("user", self._prompts.render(
            "strategist", **sections, **fields, packages=json.dumps(packages, indent=1))))
        decided = complete(self.spec, strategist, role="strategist", env=self._env,
                           retry=self._retry, sleep=self._sleep)
        calls.append(decided.record)
        return reply_from(decided, strategist, calls, extra)

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        history = (*previous.transcript, Message("user", follow_up))
        return reply_from(complete(self.spec, history, role="repair", env=self._env,
                                   retry=self._retry, sleep=self._sleep), history)
