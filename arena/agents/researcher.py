"""The researcher + strategist contestant (two phases, one model).

Phase 1, the researcher, works with tools through litellm function calling: candles of a symbol
and interval, an indicator summary, the portfolio's state. The tools serve only what the briefing
holds (bars closed at the cycle time; an unknown symbol or interval is refused explicitly, never
answered with other data). It may make at most :data:`MAX_TOOL_CALLS` tool calls; then it must
answer with opportunity packages, each with a 0-100 research confidence. Phase 2, the strategist,
sees the packages above :data:`MIN_PACKAGE_CONFIDENCE` and answers the decision contract (it may
shrink, reject or hold). The repair round continues the strategist's conversation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any

from arena.agents.base import KeysStayBehind, Reply
from arena.agents.llm import RetryPolicy, complete, reply_from
from arena.agents.roster import ContestantSpec
from arena.core.types import Briefing, Message
from arena.market.prompts import Prompts

MAX_TOOL_CALLS = 10
MIN_PACKAGE_CONFIDENCE = 60
TOOLS = [
    {"type": "function", "function": {
        "name": "get_candles", "description": "Closed candles of one symbol: 1w, 1d or 4h.",
        "parameters": {"type": "object", "required": ["symbol", "interval"], "properties": {
            "symbol": {"type": "string"}, "interval": {"type": "string", "enum": ["1w", "1d", "4h"]}}}}},
    {"type": "function", "function": {
        "name": "indicator_summary", "description": "RSI 4h/1d/1w and returns of one symbol.",
        "parameters": {"type": "object", "required": ["symbol"],
                       "properties": {"symbol": {"type": "string"}}}}},
    {"type": "function", "function": {
        "name": "portfolio_state", "description": "Cash, equity and open positions.",
        "parameters": {"type": "object", "properties": {}}}},
]


def run_tool(briefing: Briefing, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """One tool call against the briefing's data (refusals are answers, never other data)."""
    market = briefing.data["market"]
    details = {d["symbol"]: d for d in market["assets"]}
    if name == "portfolio_state":
        return dict(briefing.portfolio)
    symbol = str(arguments.get("symbol", ""))
    if symbol not in details:
        return {"error": f"no data for {symbol!r}: the tools serve the screened and held assets "
                         f"({', '.join(sorted(details))})"}
    if name == "get_candles":
        interval = str(arguments.get("interval", ""))
        candles = details[symbol]["candles"]
        if interval not in candles:
            return {"error": f"interval {interval!r} is not served; use 1w, 1d or 4h"}
        return {"symbol": symbol, "interval": interval, **candles[interval]}
    if name == "indicator_summary":
        row = next((r for r in market["table"] if r["symbol"] == symbol), {})
        detail = details[symbol]
        return {"symbol": symbol, **{k: detail.get(k) for k in ("rsi_4h", "rsi_1d", "rsi_1w")},
                **{k: row.get(k) for k in ("return_1d", "return_10d", "return_30d",
                                            "volatility_30d", "distance_from_30d_high")}}
    return {"error": f"unknown tool {name!r}"}


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
