"""The decision contract (SPEC §2): the strict JSON every contestant answers, and its parser.

:func:`parse_answer` turns a raw model answer into a :class:`ParsedAnswer` or a
:class:`ParseFailure` whose ``reason`` a model can act on in the repair round. It never raises.

What fails the **whole answer** (a :class:`ParseFailure`): anything that is not one JSON object
with a ``decisions`` list, i.e. an empty answer, prose before or after the object, two objects,
two code fences, invalid JSON, a top-level value that is not an object, a missing ``decisions``
key or one that is not a list, JSON nested deeper than :data:`MAX_DEPTH`, and answers longer than
:data:`MAX_ANSWER_CHARS`. One JSON object inside one markdown code fence is accepted.

What fails **one decision** only (a :class:`MalformedDecision`, which the validator rejects alone
while the rest of the answer executes): an item of ``decisions`` that is not an object, a missing
``action`` or ``symbol`` (:data:`MISSING_FIELD`), a field of the wrong type - a number written as
a string, ``true`` for a number, NaN or Infinity, a symbol that is not text
(:data:`BAD_FIELD_TYPE`). The reason names every field at fault.

What is only **noted** (``ParsedAnswer.notes``): a missing or malformed ``reasoning`` or
``market_context``, and text that is not valid Unicode (a lone surrogate, half an emoji), which is
replaced with U+FFFD so that everything derived from the answer can be stored; the raw answer
itself is stored losslessly by the ledger. Unknown fields are ignored and listed
(``ParsedAnswer.ignored_fields``).

Ranges (confidence 0.80-1.00, sizes 10-100) and the fields an open needs are *rules*, not syntax:
the validator judges them per decision (:mod:`arena.engine.rules`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from arena.core.text import nonfinite_text, storable, storable_json

MAX_ANSWER_CHARS = 100_000
MAX_DEPTH = 32  # nesting of objects and lists; the contract itself needs 4
ACTIONS = ("open_long", "open_short", "add", "close", "hold")
MISSING_FIELD = "missing_field"
BAD_FIELD_TYPE = "bad_field_type"
_FENCE = re.compile(r"\A```[A-Za-z]*[ \t]*\n(?P<body>.*?)\n?```\Z", re.S)
_STRICT = ConfigDict(strict=True, allow_inf_nan=False, extra="allow", frozen=True)


class MarketContext(BaseModel):
    model_config = _STRICT

    overall_sentiment: Literal["bullish", "bearish", "neutral"] | None = None
    key_factors: list[str] = []


class Decision(BaseModel):
    """One well-formed decision. ``action`` and ``symbol`` values are judged by the validator."""

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

    def as_json(self) -> dict[str, Any]:
        return self.model_dump()


@dataclass(frozen=True)
class MalformedDecision:
    """An item of ``decisions`` the contract cannot read: rejected alone with ``code``
    (:data:`MISSING_FIELD` or :data:`BAD_FIELD_TYPE`) and ``problem``, a sentence naming
    ``fields``. ``raw`` is the item as sent (decoded JSON)."""

    raw: Any
    code: str
    fields: tuple[str, ...]
    problem: str

    def _text(self, key: str) -> str:
        value = self.raw.get(key) if isinstance(self.raw, dict) else None
        return value if isinstance(value, str) else ""

    @property
    def action(self) -> str:
        return self._text("action")

    @property
    def symbol(self) -> str:
        return self._text("symbol")

    def as_json(self) -> Any:
        return self.raw


AnyDecision = Decision | MalformedDecision


@dataclass(frozen=True)
class Answer:
    """A parsed answer: its decisions in the order sent (index = decision index)."""

    decisions: Sequence[AnyDecision]
    reasoning: str | None = None
    market_context: MarketContext | None = None

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> Answer:
        """The answer of an already decoded JSON object, read as :func:`parse_answer` reads one
        (raises ``ValueError`` when it has no ``decisions`` list or is nested too deeply)."""
        read = _read_payload(payload)
        if isinstance(read, ParseFailure):
            raise ValueError(read.reason)
        return read.answer

    def as_json(self) -> dict[str, Any]:
        """The answer as JSON-ready data (malformed decisions exactly as they were sent)."""
        out: dict[str, Any] = {"decisions": [d.as_json() for d in self.decisions]}
        if self.reasoning is not None:
            out["reasoning"] = self.reasoning
        if self.market_context is not None:
            out["market_context"] = self.market_context.model_dump(exclude_none=True)
        return out


@dataclass(frozen=True)
class ParsedAnswer:
    answer: Answer
    ignored_fields: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return True


@dataclass(frozen=True)
class ParseFailure:
    reason: str

    @property
    def ok(self) -> bool:
        return False


# ---------------------------------------------------------------------------------- helpers
def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _shown(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return nonfinite_text(value)
    return json.dumps(value, default=str)[:40]


def _problem(error: Mapping[str, Any]) -> tuple[str, str, str]:
    """``(code, field, sentence)`` of one pydantic error of a decision."""
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(".")
    value = error.get("input")
    if error["type"] == "missing":
        return MISSING_FIELD, where, f"{where} is missing"
    if error["type"] == "finite_number" or (isinstance(value, float) and not math.isfinite(value)):
        return BAD_FIELD_TYPE, where, f"{where} must be a finite number, not {_shown(value)}"
    if isinstance(value, str) and error["type"] in ("float_type", "int_type"):
        return BAD_FIELD_TYPE, where, f"{where} must be a number, not the string {_shown(value)}"
    if isinstance(value, int) and not isinstance(value, bool) and error["type"] == "float_type":
        return BAD_FIELD_TYPE, where, f"{where} is a number too large to use ({_shown(value)}...)"
    expected = {"string_type": "text", "float_type": "a number", "int_type": "a number",
                "list_type": "a list"}.get(error["type"])
    if expected is None:
        return BAD_FIELD_TYPE, where, f"{where}: {error['msg'].lower()} (got {_shown(value)})"
    return BAD_FIELD_TYPE, where, f"{where} must be {expected}, not {_kind(value)} {_shown(value)}"


def _depth(value: Any) -> int:
    """How deeply objects and lists nest in ``value`` (without recursion: any depth is safe)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if level <= MAX_DEPTH:  # deeper is already too deep: no need to walk it all
            stack.extend((child, level + 1) for child in children)
    return deepest


def _read_decision(index: int, item: Any) -> AnyDecision:
    if not isinstance(item, dict):
        return MalformedDecision(item, BAD_FIELD_TYPE, ("decision",),
                                 f"decision {index} is {_kind(item)}, not an object")
    try:
        return Decision.model_validate(item)
    except ValidationError as exc:
        problems = [_problem(e) for e in exc.errors()]
        code = MISSING_FIELD if any(p[0] == MISSING_FIELD for p in problems) else BAD_FIELD_TYPE
        return MalformedDecision(item, code, tuple(dict.fromkeys(p[1] for p in problems)),
                                 "; ".join(p[2] for p in problems))


@dataclass
class _Read:
    answer: Answer
    ignored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _read_answer(payload: Mapping[str, Any]) -> _Read | ParseFailure:
    if "decisions" not in payload:
        return ParseFailure("the answer has no \"decisions\" list: send one JSON object with a "
                            "\"decisions\" list (an empty list holds everything)")
    items = payload["decisions"]
    if not isinstance(items, list):
        return ParseFailure(f"\"decisions\" must be a list, not {_kind(items)}")
    decisions = [_read_decision(i, item) for i, item in enumerate(items)]
    notes: list[str] = []
    ignored = [f"answer.{k}" for k in payload if k not in ("reasoning", "market_context",
                                                           "decisions")]
    reasoning = payload.get("reasoning")
    if reasoning is None:
        notes.append("reasoning is missing")
    elif not isinstance(reasoning, str):
        notes.append(f"reasoning is {_kind(reasoning)}, not text: ignored")
        reasoning = None
    context, given = None, payload.get("market_context")
    if given is None:
        notes.append("market_context is missing")
    elif not isinstance(given, dict):
        notes.append(f"market_context is {_kind(given)}, not an object: ignored")
    else:
        try:
            context = MarketContext.model_validate(given)
        except ValidationError as exc:
            problems = "; ".join(f"market_context.{_problem(e)[2]}" for e in exc.errors()[:3])
            notes.append(f"{problems}: market_context ignored")
        else:
            ignored += [f"market_context.{k}" for k in (context.model_extra or {})]
    for i, d in enumerate(decisions):
        if isinstance(d, Decision):
            ignored += [f"decisions[{i}].{k}" for k in (d.model_extra or {})]
    return _Read(Answer(tuple(decisions), reasoning, context), ignored, notes)


def parse_answer(raw: str) -> ParsedAnswer | ParseFailure:
    """Parse a raw model answer. Never raises; a failure says what to fix."""
    if not isinstance(raw, str):
        return ParseFailure(f"the answer is {_kind(raw)}, not text")
    if len(raw) > MAX_ANSWER_CHARS:
        return ParseFailure(f"the answer is {len(raw):,} characters long; the limit is "
                            f"{MAX_ANSWER_CHARS:,}: answer with the JSON object only")
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
        # NaN and Infinity become floats here; the decision holding one is rejected alone
        payload = json.loads(text, parse_constant=float)
    except ValueError as exc:
        detail = storable(str(exc))
        if "Extra data" in detail:
            return ParseFailure("there is text after the JSON object (a second object or prose): "
                                "send exactly one JSON object")
        return ParseFailure(f"the answer is not valid JSON: {detail}")
    except RecursionError:
        return ParseFailure("the JSON is nested too deeply")
    if not isinstance(payload, dict):
        return ParseFailure(f"the answer must be a JSON object, not {_kind(payload)}")
    return _read_payload(payload)


def _read_payload(payload: Mapping[str, Any]) -> ParsedAnswer | ParseFailure:
    """The answer of a decoded JSON object: depth checked, text made storable, then read."""
    if _depth(payload) > MAX_DEPTH:
        return ParseFailure(f"the JSON is nested deeper than {MAX_DEPTH} levels: send the flat "
                            "object of the contract")
    cleaned: list[str] = []
    read = _read_answer(storable_json(payload, cleaned))
    if isinstance(read, ParseFailure):
        return read
    if cleaned:
        read.notes.append(f"text that is not valid Unicode (a lone surrogate, e.g. half an emoji) "
                          f"in {', '.join(dict.fromkeys(cleaned))} was replaced with U+FFFD")
    return ParsedAnswer(read.answer, tuple(read.ignored), tuple(read.notes))
