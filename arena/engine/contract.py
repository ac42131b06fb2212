"""The decision contract (SPEC §2): the strict JSON every contestant answers, and its parser.

:func:`parse_answer` turns a raw model answer into a :class:`ParsedAnswer` or a
:class:`ParseFailure` whose ``reason`` a model can act on in the repair round. It never raises.
Accepted: one JSON object, alone or inside one markdown code fence. Refused: prose around it,
two objects, trailing text, NaN/Infinity, numbers written as strings, fields of the wrong type,
answers longer than :data:`MAX_ANSWER_CHARS`. Unknown fields are ignored and listed.

Ranges (confidence 0.80-1.00, sizes 10-100) are *rules*, not syntax: the validator rejects a
decision that breaks one, so one bad decision never sinks the rest of the answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

MAX_ANSWER_CHARS = 100_000
ACTIONS = ("open_long", "open_short", "add", "close", "hold")
_FENCE = re.compile(r"\A```[A-Za-z]*[ \t]*\n(?P<body>.*?)\n?```\Z", re.S)
_STRICT = ConfigDict(strict=True, allow_inf_nan=False, extra="allow", frozen=True)


class MarketContext(BaseModel):
    model_config = _STRICT

    overall_sentiment: Literal["bullish", "bearish", "neutral"] | None = None
    key_factors: list[str] = []


class Decision(BaseModel):
    """One decision. ``action`` and ``symbol`` are checked by the validator (reason codes)."""

    model_config = _STRICT

    action: str
    symbol: str
    percent_of_equity: float | None = None
    invalidation_price: float | None = None
    confidence: float | None = None
    percent_of_position: float | None = None
    thesis: str | None = None
    invalidation: str | None = None
    rationale: str | None = None


class Answer(BaseModel):
    model_config = _STRICT

    reasoning: str
    market_context: MarketContext | None = None
    decisions: list[Decision]


@dataclass(frozen=True)
class ParsedAnswer:
    answer: Answer
    ignored_fields: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return True


@dataclass(frozen=True)
class ParseFailure:
    reason: str

    @property
    def ok(self) -> bool:
        return False


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _unknown_fields(answer: Answer) -> tuple[str, ...]:
    found = [f"answer.{k}" for k in (answer.model_extra or {})]
    if answer.market_context is not None:
        found += [f"market_context.{k}" for k in (answer.market_context.model_extra or {})]
    for i, d in enumerate(answer.decisions):
        found += [f"decisions[{i}].{k}" for k in (d.model_extra or {})]
    return tuple(found)


def _describe(error: dict[str, Any]) -> str:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
    value = error.get("input")
    got = f"{type(value).__name__} {json.dumps(value)[:40]}" if error["type"] != "missing" else ""
    if error["type"] == "missing":
        return f"{where or 'answer'}: required field is missing"
    if error["type"] in ("float_type", "int_type") and isinstance(value, str):
        return f"{where}: expected a number, got the string {json.dumps(value)[:40]}"
    return f"{where or 'answer'}: {error['msg'].lower()} (got {got})"


def parse_answer(raw: str) -> ParsedAnswer | ParseFailure:
    """Parse a raw model answer. Never raises; a failure says what to fix."""
    if not isinstance(raw, str):
        return ParseFailure(f"the answer is a {type(raw).__name__}, not text")
    if len(raw) > MAX_ANSWER_CHARS:
        return ParseFailure(f"the answer is {len(raw):,} characters long; the limit is "
                            f"{MAX_ANSWER_CHARS:,}: answer with the JSON object only")
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        return ParseFailure("the answer contains characters that are not valid Unicode "
                            "(a lone surrogate): send plain UTF-8 text")
    text = raw.strip()
    if not text:
        return ParseFailure("the answer is empty: answer with one JSON object")
    if text.startswith("```"):
        fenced = _FENCE.match(text)
        if fenced is None or "```" in fenced.group("body"):
            return ParseFailure("the answer must be one JSON object, alone or inside one markdown "
                                "code fence, with nothing before or after it")
        text = fenced.group("body").strip()
    if not text.startswith("{"):
        return ParseFailure("the answer must start with '{': send the JSON object only, "
                            "without prose before it")
    try:
        payload = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        detail = str(exc)
        if "Extra data" in detail:
            return ParseFailure("there is text after the JSON object (a second object or prose): "
                                "send exactly one JSON object")
        return ParseFailure(f"the answer is not valid JSON: {detail}")
    except RecursionError:
        return ParseFailure("the JSON is nested too deeply")
    if not isinstance(payload, dict):
        return ParseFailure(f"the answer must be a JSON object, not a {type(payload).__name__}")
    try:
        answer = Answer.model_validate(payload)
    except ValidationError as exc:
        problems = [_describe(e) for e in exc.errors()[:5]]
        more = f" (and {exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        return ParseFailure("the JSON does not follow the contract: " + "; ".join(problems) + more)
    return ParsedAnswer(answer, _unknown_fields(answer))
