"""The signal server's judge: read the committee's answers and decide buy, sell or hold in code.

A trading terminal asks for a debate on one symbol. A bullish analyst, a bearish analyst and a
risk officer read the same brief of indicators in parallel (templates ``signal_bull``,
``signal_bear``, ``signal_risk`` in ``models/prompts``), then a judge sees the brief, the three
opinions and the rules (``signal_judge``). The analysts answer in free text ending with a line
this module parses (or, prompted in other words, with their lean or level in prose: below); the
judge answers one JSON object:

* bull and bear: ``LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>`` (:func:`parse_opinion`) -
  each argues its side but states its honest lean, so a bull may lean BEARISH;
* risk officer: ``RISK: LOW|MEDIUM|HIGH`` (:func:`parse_risk`), never a direction;
* judge: ``{"signal": "buy"|"sell"|"hold", "comment": "..."}`` (:func:`read_judge`), alone or
  inside one markdown code fence. Anything else is unreadable; the server sends it back once
  (template ``signal_repair``, naming the problem), and when the second answer cannot be read
  either, the rules decide alone.

The analysts' lines are read case-insensitively, tolerating text around them (markdown bold, a
leading phrase), the last matching line winning. An answer without its line is read as prose, in
the ways a committee prompted in its own words answers (:func:`prose_opinion`,
:func:`prose_risk`):

* a lean word (``bullish``, ``bearish``, ``neutral``) with its strength - a number labelled
  ``strength`` (``conviction``, ``confidence``), a fraction (``7/10``, ``4 out of 5``: scaled
  to tenths, rounded half up), or a word (:data:`STRENGTH_WORDS`: ``weak`` 3, ``moderate`` 5,
  ``strong`` 8, ...) in brackets, labelled, ending the phrase or before the lean (``strongly
  bullish``): "bullish, strength 7/10", "lean: bearish (moderate)";
* a risk level in words: ``MEDIUM RISK: ATR14 normal``, ``high-risk``, ``the risk is low``
  (``moderate`` is MEDIUM).

Prose is never guessed: a phrase negated just before it (``not``, ``no``) counts for nothing,
and an answer whose phrases name two different leans (or levels) is unreadable, as is a lean
without a strength. An unreadable answer raises :class:`VerdictError` naming the role and what
is missing; the server sends it back once (:func:`analyst_repair`).

The judge's rules, enforced by :func:`decide` (the judge's own signal only counts when it
agrees). Each directional analyst's lean is a vote: BULLISH -> buy, BEARISH -> sell, NEUTRAL ->
no vote. The risk officer never votes a direction, so "buy or sell only when at least two of the
three agree on the direction" means that the bull and the bear vote the same way. The committee's
three rules as written (:data:`COMMITTEE_RULES`):

=  ==============================  ===========  =================  ==============  ==============
#  votes (bull, bear)              risk         condition          signal          rule id
=  ==============================  ===========  =================  ==============  ==============
1  any                             HIGH         -                  hold            high-risk
2  the same (buy+buy, sell+sell)   LOW, MEDIUM  -                  that direction  agree
3  split (one buy, one sell)       MEDIUM       strengths differ   the stronger's  split-stronger
3  split (one buy, one sell)       MEDIUM       equal strengths    hold            split-even
2  split (one buy, one sell)       LOW          -                  hold            split-low
2  one votes, the other NEUTRAL    LOW, MEDIUM  -                  hold            one-sided-held
2  both NEUTRAL                    LOW, MEDIUM  -                  hold            no-lean
=  ==============================  ===========  =================  ==============  ==============

Two further rules go beyond the committee's three; each is off unless the server is started
with it (:class:`JudgeRules`, ``arena signal-server --split-at-low-risk --lone-analyst``):

* ``split_at_low`` - a split at LOW risk goes to the stronger argument too (equal strengths:
  hold), as at MEDIUM: rule ids ``split-stronger`` and ``split-even`` instead of ``split-low``;
* ``lone_analyst`` - one analyst voting while the other is NEUTRAL is followed when its strength
  is at least :data:`ONE_SIDED_LOW` at LOW risk, :data:`ONE_SIDED_MEDIUM` at MEDIUM (``one-sided``),
  else hold (``one-sided-weak``), instead of ``one-sided-held``.

The rows are tried in order, so HIGH risk holds before any vote is counted. The judge's prompt
lists the same rules (:func:`rules_text`). :func:`verdict` applies the table to the parsed
answers and the judge's: the table's signal always wins; when the judge said otherwise the
verdict is ``overruled`` and its comment names both signals ("the judge said buy; the rules say
hold (HIGH RISK)"); when the judge's answer could not be read the comment says so and
``overruled`` stays False (there was nothing to overrule).

:func:`rule_analysts` is an offline committee (no model, no API key): deterministic texts in
exactly the formats above, computed from a brief of indicators (:func:`arena.doors.brief.brief`),
so the server runs without an LLM. Its bull builds the strongest bullish case it can from the
brief and its bear the strongest bearish case, each from its own list of arguments
(:func:`bullish_case`, :func:`bearish_case`), so the two disagree where the brief is mixed.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from arena.core.errors import UnusableInput

BUY, SELL, HOLD = "buy", "sell", "hold"
SIGNALS = (BUY, SELL, HOLD)
MIN_STRENGTH, MAX_STRENGTH = 1, 10
ONE_SIDED_LOW, ONE_SIDED_MEDIUM = 6, 8  # a lone vote's strength needed at LOW / MEDIUM risk
RISK_HIGH, RISK_MEDIUM = 0.05, 0.02  # offline risk officer: volatility / close above these
MIN_CASE = 2  # arguments an offline analyst needs before it leans either way
CONCEDE = 2  # an offline analyst concedes when the other side has more than this many times its
MAX_JUDGE_CHARS = 4000  # a judge's answer longer than this is not the object asked for

#: every rule id of the table, with the label the verdict's comment shows
RULES: dict[str, str] = {
    "high-risk": "HIGH RISK",
    "agree": "bull and bear agree",
    "split-stronger": "split, the stronger argument wins",
    "split-even": "split at equal strength",
    "split-low": "split at LOW risk, no two agree",
    "one-sided-held": "one analyst leans alone, no two agree",
    "one-sided": "one analyst leans, strongly enough",
    "one-sided-weak": "one analyst leans, too weakly",
    "no-lean": "neither analyst leans",
}

OPINION_LINE = "LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>"
RISK_LINE = "RISK: LOW|MEDIUM|HIGH"
#: a strength in words, on the 1-10 scale of the analysts' line ("-ly" forms read the same)
STRENGTH_WORDS: dict[str, int] = {"very weak": 2, "slight": 2, "weak": 3, "mild": 3,
                                  "moderate": 5, "medium": 5, "strong": 8, "very strong": 9,
                                  "overwhelming": 10}
LEVEL_WORDS: dict[str, str] = {"low": "LOW", "medium": "MEDIUM", "moderate": "MEDIUM",
                               "high": "HIGH"}
JUDGE_FORMAT = '{"signal": "buy"|"sell"|"hold", "comment": "..."}'

_DECOR = r"[*_`\s]*"  # markdown emphasis or spaces around a label's value
_NOT_ALTERNATIVES = r"(?![ \t]*[|/][ \t]*[A-Za-z])"  # "LOW|MEDIUM|HIGH" echoed from the prompt
_LEAN = re.compile(rf"\bLEAN{_DECOR}[:=]{_DECOR}(BULLISH|BEARISH|NEUTRAL)\b"
                   rf"[*_`\s,;|/-]*STRENGTH{_DECOR}[:=]{_DECOR}([+-]?\d+(?:[.,]\d+)?)", re.I)
_LEAN_WORD = re.compile(r"\bLEAN\b[^\n]*", re.I)
_LEVEL_BEFORE = r"(?<!low )(?<!medium )(?<!moderate )(?<!high )(?<!low-)(?<!medium-)(?<!high-)"
_RISK = re.compile(rf"{_LEVEL_BEFORE}\bRISK{_DECOR}[:=]{_DECOR}(LOW|MEDIUM|MODERATE|HIGH)\b"
                   rf"{_NOT_ALTERNATIVES}", re.I)
_NEGATED = r"(?<!\bnot )(?<!\bnot a )(?<!\bno )(?<!n't )(?<!never )"  # "not a high risk" names none
_ECHOED = r"(?<![|/] )(?<![|/])"  # "LOW RISK / MEDIUM RISK / HIGH RISK" echoed from a prompt
_RISK_PROSE = re.compile(
    rf"{_NEGATED}{_ECHOED}\b(?P<a>low|medium|moderate|high)[ \t]*-?[ \t]*risk\b"
    rf"{_NOT_ALTERNATIVES}"
    rf"|\brisk(?:[ \t]+(?:level|rating|verdict|is))+{_DECOR}[:=]?{_DECOR}"
    rf"(?P<b>low|medium|moderate|high)\b(?![ \t]*-?[ \t]*risk\b){_NOT_ALTERNATIVES}", re.I)
_SCALE = r"very[ \t]+strong(?:ly)?|very[ \t]+weak(?:ly)?|overwhelming(?:ly)?|strong(?:ly)?|" \
         r"moderate(?:ly)?|medium|mild(?:ly)?|weak(?:ly)?|slight(?:ly)?"
_LEAN_PROSE = re.compile(rf"{_NEGATED}\b(?:(?P<before>{_SCALE})[ \t]+)?"
                         rf"(?P<lean>bullish|bearish|neutral)\b{_NOT_ALTERNATIVES}", re.I)
_INLINE = r"[*_` \t]*"  # markdown emphasis or spaces, on the same line
_STRENGTH_AFTER = re.compile(
    rf"{_INLINE}[,;:\u2013\u2014-]?[ \t]*(?:with[ \t]+(?:an?[ \t]+)?)?"
    rf"(?P<paren>\()?{_INLINE}"
    rf"(?P<label>(?:strength|conviction|confidence){_INLINE}(?:of|is)?{_INLINE}[:=]?{_INLINE})?"
    rf"(?:(?P<num>[+-]?\d+(?:[.,]\d+)?)(?:[ \t]*(?:/|out[ \t]+of)[ \t]*(?P<den>\d+))?"
    rf"|(?P<word>{_SCALE})\b)", re.I)
_PHRASE_END = re.compile(r"[ \t*_`]*(?:[).,;!]|$)", re.M)
_FENCE = re.compile(r"\A```[A-Za-z]*[ \t]*\n(?P<body>.*?)\n?```\Z", re.S)


class Lean(StrEnum):
    BULLISH = "BULLISH"
    BEARISH = "BEARISH"
    NEUTRAL = "NEUTRAL"


class Risk(StrEnum):
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"


@dataclass(frozen=True)
class Opinion:
    """A directional analyst's answer: its honest lean, how strong (1-10), and the full text."""

    role: str
    lean: Lean
    strength: int
    text: str


@dataclass(frozen=True)
class RiskView:
    """The risk officer's answer: the level and the full text."""

    level: Risk
    text: str


@dataclass(frozen=True)
class JudgeAnswer:
    """The judge's answer as read: its ``signal`` and ``comment``, or - ``signal`` None - the
    ``problem`` that kept it from being read (what the repair names)."""

    signal: str | None
    comment: str = ""
    problem: str = ""

    @property
    def readable(self) -> bool:
        return self.signal is not None


@dataclass(frozen=True)
class JudgeRules:
    """Which rules the table enforces: the committee's three always; the two beyond them only
    when switched on (module docstring)."""

    split_at_low: bool = False
    lone_analyst: bool = False

    @property
    def extras(self) -> tuple[str, ...]:
        """The names of the rules beyond the committee's that are on."""
        return tuple(name for name in ("split_at_low", "lone_analyst") if getattr(self, name))


COMMITTEE_RULES = JudgeRules()


@dataclass(frozen=True)
class Verdict:
    """The committee's signal (``buy``/``sell``/``hold``) and the rule of the table behind it.

    ``judge_signal`` is what the judge said (None: its answer could not be read); ``overruled``
    is True when the judge gave a signal and the table's differs.
    """

    signal: str
    rule: str
    judge_signal: str | None
    overruled: bool
    comment: str


class VerdictError(UnusableInput, ValueError):
    """An analyst's answer without its parseable final line (the message names the role)."""


# ------------------------------------------------------------------------------------ parsing
def parse_opinion(role: str, text: str) -> Opinion:
    """The ``LEAN: ... STRENGTH: n`` line of a directional analyst's answer (the last one wins),
    else its lean and strength in prose (:func:`prose_opinion`).

    :class:`VerdictError` when there is neither, or the strength is not a whole number 1..10.
    """
    matches = list(_LEAN.finditer(text or ""))
    if not matches:
        prose = prose_opinion(role, text or "")
        if prose is not None:
            return prose
        raise VerdictError(f"{role}: the answer has no final line {OPINION_LINE!r} and no lean "
                           f"with a strength in words (bullish, strength 7/10){_hint(text)}")
    lean, raw = matches[-1].groups()
    if not re.fullmatch(r"[+-]?\d+", raw):
        raise VerdictError(f"{role}: STRENGTH must be a whole number from {MIN_STRENGTH} to "
                           f"{MAX_STRENGTH}, got {raw}")
    strength = int(raw)
    if not MIN_STRENGTH <= strength <= MAX_STRENGTH:
        raise VerdictError(f"{role}: STRENGTH must be from {MIN_STRENGTH} to {MAX_STRENGTH}, "
                           f"got {strength}")
    return Opinion(role=role, lean=Lean(lean.upper()), strength=strength, text=text)


def _hint(text: str | None) -> str:
    """Where an unreadable directional answer came close: a lean named without a strength, or
    the last line mentioning LEAN."""
    bare = [m.group("lean").lower() for m in _LEAN_PROSE.finditer(text or "")]
    if bare:
        return f"; it names a lean ({bare[-1]}) but no strength from 1 to 10"
    near = _LEAN_WORD.findall(text or "")
    return f"; the last line mentioning LEAN was {near[-1].strip()[:80]!r}" if near else ""


def _scale_word(word: str) -> int:
    """A strength word's place on the 1-10 scale (:data:`STRENGTH_WORDS`)."""
    key = " ".join(word.lower().split())
    return STRENGTH_WORDS.get(key) or STRENGTH_WORDS[key.removesuffix("ly")]


def _scaled(raw: str, denominator: str | None) -> int | str:
    """A number as a strength from 1 to 10 - a fraction scaled to tenths, rounded half up - or
    the problem with it."""
    value = float(raw.replace(",", "."))
    if denominator is None:
        if not re.fullmatch(r"[+-]?\d+", raw) or not MIN_STRENGTH <= value <= MAX_STRENGTH:
            return f"STRENGTH must be a whole number from {MIN_STRENGTH} to {MAX_STRENGTH}, " \
                   f"got {raw}"
        return int(value)
    out_of = int(denominator)
    if out_of < 2 or not 0 <= value <= out_of:
        return f"a strength of {raw}/{denominator} is not a share of a scale"
    return max(MIN_STRENGTH, min(MAX_STRENGTH, math.floor(value * 10 / out_of + 0.5)))


def _strength_after(text: str, end: int) -> int | str | None:
    """The strength that follows a lean word ending at ``end`` (or the problem with it), None
    when none does: a bare number is a strength only labelled, in brackets or as a fraction; a
    word only labelled, in brackets or ending the phrase."""
    found = _STRENGTH_AFTER.match(text, end)
    if found is None:
        return None
    marked = bool(found.group("label") or found.group("paren"))
    if found.group("word"):
        if not marked and not _PHRASE_END.match(text, found.end()):
            return None
        return _scale_word(found.group("word"))
    if found.group("den") is None and not marked:
        return None
    return _scaled(found.group("num"), found.group("den"))


def prose_opinion(role: str, text: str) -> Opinion | None:
    """A directional analyst's lean and strength in its own words (module docstring), or None
    when its answer names no lean with a strength. :class:`VerdictError` when its phrases name
    two different leans, or the last one's strength is out of range."""
    readings: list[tuple[Lean, int | str]] = []
    for found in _LEAN_PROSE.finditer(text):
        before = found.group("before")
        strength = _scale_word(before) if before else _strength_after(text, found.end())
        if strength is not None:
            readings.append((Lean(found.group("lean").upper()), strength))
    if not readings:
        return None
    if len({lean for lean, _ in readings}) > 1:
        named = ", ".join(f"{lean.value.lower()} {strength}" for lean, strength in readings
                          if isinstance(strength, int))
        raise VerdictError(f"{role}: the answer names more than one lean ({named}); end it with "
                           f"one line {OPINION_LINE!r}")
    lean, strength = readings[-1]
    if isinstance(strength, str):
        raise VerdictError(f"{role}: {strength}")
    return Opinion(role=role, lean=lean, strength=strength, text=text)


def parse_risk(text: str) -> RiskView:
    """The ``RISK: LOW|MEDIUM|HIGH`` line of the risk officer's answer (the last one wins), else
    its level in prose (:func:`prose_risk`)."""
    matches = list(_RISK.finditer(text or ""))
    if not matches:
        prose = prose_risk(text or "")
        if prose is None:
            raise VerdictError(f"risk: the answer has no final line {RISK_LINE!r} and names no "
                               "level in words (MEDIUM RISK)")
        return prose
    return RiskView(level=Risk(LEVEL_WORDS[matches[-1].group(1).lower()]), text=text)


def prose_risk(text: str) -> RiskView | None:
    """The risk officer's level in its own words (``MEDIUM RISK: ATR14 normal``, ``the risk is
    high``), or None when it names none. :class:`VerdictError` when it names two levels."""
    levels = [LEVEL_WORDS[(found.group("a") or found.group("b")).lower()]
              for found in _RISK_PROSE.finditer(text)]
    if not levels:
        return None
    if len(set(levels)) > 1:
        named = ", ".join(dict.fromkeys(levels))
        raise VerdictError(f"risk: the answer names more than one level ({named}); end it with "
                           f"one line {RISK_LINE!r}")
    return RiskView(level=Risk(levels[-1]), text=text)


def read_panel(answers: Mapping[str, str]) -> tuple[Opinion, Opinion, RiskView]:
    """The bull's, the bear's and the risk officer's answers as read (:class:`VerdictError`
    naming the first that cannot be)."""
    return (parse_opinion("bull", answers["bull"]), parse_opinion("bear", answers["bear"]),
            parse_risk(answers["risk"]))


def unreadable(role: str, text: str) -> str | None:
    """What keeps an analyst's answer from being read (the role not repeated), or None."""
    try:
        parse_risk(text) if role == "risk" else parse_opinion(role, text)
    except VerdictError as exc:
        return str(exc).removeprefix(f"{role}: ")
    return None


def analyst_repair(role: str, problem: str) -> str:
    """The one follow-up that sends an unreadable analyst's answer back: the problem, and the
    final line its role ends with."""
    line, example = ((RISK_LINE, "RISK: MEDIUM") if role == "risk"
                     else (OPINION_LINE, "LEAN: BULLISH STRENGTH: 6"))
    return (f"Your answer could not be read: {problem}.\n\n"
            "Send your answer again in full, and end it with exactly one final line, nothing "
            f"after it:\n{line}\nFor example:\n{example}")


def read_judge(text: str | None) -> JudgeAnswer:
    """The judge's answer: one JSON object ``{"signal": "buy"|"sell"|"hold", "comment": text}``,
    alone or inside one markdown code fence (the signal's case does not matter; other keys are
    ignored). Never raises: an answer that is not that object comes back with ``signal`` None
    and its ``problem``, in words a model can act on."""
    raw = (text or "").strip()
    if not raw:
        return JudgeAnswer(None, problem="the answer is empty")
    if len(raw) > MAX_JUDGE_CHARS:
        return JudgeAnswer(None, problem=f"the answer is {len(raw):,} characters long, not one "
                                         "short JSON object")
    if raw.startswith("```"):
        fenced = _FENCE.match(raw)
        if fenced is None or "```" in fenced.group("body"):
            return JudgeAnswer(None, problem="the answer must be one JSON object, alone or "
                                             "inside one code fence")
        raw = fenced.group("body").strip()
    if not raw.startswith("{"):
        return JudgeAnswer(None, problem="the answer must start with '{': the JSON object "
                                         "only, no text before it")
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        if "Extra data" in str(exc):
            return JudgeAnswer(None, problem="there is text after the JSON object")
        return JudgeAnswer(None, problem=f"the answer is not valid JSON ({exc})")
    except RecursionError:
        return JudgeAnswer(None, problem="the JSON is nested too deeply")
    signal, comment = payload.get("signal"), payload.get("comment")
    if not isinstance(signal, str) or signal.strip().lower() not in SIGNALS:
        shown = "missing" if signal is None else repr(signal)[:40]
        return JudgeAnswer(None, problem=f'"signal" must be "buy", "sell" or "hold" '
                                         f"(it is {shown})")
    if not isinstance(comment, str):
        shown = "missing" if comment is None else f"{type(comment).__name__}, not text"
        return JudgeAnswer(None, problem=f'"comment" must be text ({shown})')
    return JudgeAnswer(signal.strip().lower(), comment.strip())


def judge_json(signal: str, comment: str) -> str:
    """A judge's answer in its format (the offline judge's, and the examples')."""
    return json.dumps({"signal": signal, "comment": comment}, ensure_ascii=False)


# ------------------------------------------------------------------------------------ the table
def vote(lean: Lean) -> str | None:
    """A lean as a vote: BULLISH -> buy, BEARISH -> sell, NEUTRAL -> None."""
    return {Lean.BULLISH: BUY, Lean.BEARISH: SELL}.get(Lean(lean))


def decide(bull: Opinion, bear: Opinion, risk: RiskView,
           rules: JudgeRules = COMMITTEE_RULES) -> tuple[str, str]:
    """The table of the module docstring under ``rules``: ``(signal, rule id)``."""
    level = Risk(risk.level)
    if level is Risk.HIGH:
        return HOLD, "high-risk"
    (v1, s1), (v2, s2) = [(vote(o.lean), o.strength) for o in (bull, bear)]
    if v1 is not None and v1 == v2:
        return v1, "agree"
    if v1 is not None and v2 is not None:  # one buy, one sell
        if level is Risk.LOW and not rules.split_at_low:
            return HOLD, "split-low"
        if s1 == s2:
            return HOLD, "split-even"
        return (v1 if s1 > s2 else v2), "split-stronger"
    if v1 is None and v2 is None:
        return HOLD, "no-lean"
    if not rules.lone_analyst:
        return HOLD, "one-sided-held"
    direction, strength = (v1, s1) if v1 is not None else (v2, s2)
    if strength >= _lone_needs(level):
        return direction, "one-sided"
    return HOLD, "one-sided-weak"


def _lone_needs(level: Risk) -> int:
    return ONE_SIDED_LOW if level is Risk.LOW else ONE_SIDED_MEDIUM


def rules_text(rules: JudgeRules = COMMITTEE_RULES) -> str:
    """The rules of :func:`decide` under ``rules``, numbered, for the judge's prompt."""
    split_risk = "LOW or MEDIUM" if rules.split_at_low else "MEDIUM"
    lines = [
        "RISK: HIGH - hold, whatever the analysts say.",
        "Both analysts lean the same way - follow them (both BULLISH: buy; both BEARISH: "
        "sell): at least two of the three agree on the direction (the risk officer never votes "
        "one).",
        f"The analysts disagree (one BULLISH, one BEARISH) and RISK is {split_risk} - follow "
        "the stronger argument (the higher STRENGTH); at equal strength, hold.",
    ]
    if rules.lone_analyst:
        lines.append(f"Only one analyst leans (the other is NEUTRAL) - follow it at LOW risk if "
                     f"its STRENGTH is {ONE_SIDED_LOW} or more, at MEDIUM risk if it is "
                     f"{ONE_SIDED_MEDIUM} or more; otherwise hold.")
    held = ["the analysts disagree at LOW risk"] if not rules.split_at_low else []
    if not rules.lone_analyst:
        held.append("only one analyst leans")
    held.append("neither leans")
    lines.append("Otherwise - " + ", ".join(held) + " - hold: no two of the three agree.")
    return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))


def explain(bull: Opinion, bear: Opinion, risk: RiskView, signal: str, rule: str) -> str:
    """One sentence saying why the table gave ``signal`` under ``rule``."""
    b, r = f"bull {bull.lean} {bull.strength}", f"bear {bear.lean} {bear.strength}"
    views = f"{b}, {r}, risk {risk.level}"
    if rule == "high-risk":
        return f"Hold: the risk officer rates the risk HIGH ({b}, {r})."
    if rule == "agree":
        return f"{signal.capitalize()}: the bull and the bear agree ({views})."
    if rule == "split-stronger":
        return f"{signal.capitalize()}: the analysts split and the stronger argument wins ({views})."
    if rule == "split-even":
        return f"Hold: the analysts split with equal strength ({views})."
    if rule == "split-low":
        return f"Hold: the analysts split at LOW risk and no two agree ({views})."
    if rule == "one-sided-held":
        return f"Hold: only one analyst leans and no two agree ({views})."
    if rule == "one-sided":
        return f"{signal.capitalize()}: one analyst leans, strongly enough at {risk.level} risk " \
               f"({views})."
    if rule == "one-sided-weak":
        return f"Hold: only one analyst leans, below the strength {_lone_needs(Risk(risk.level))}" \
               f" needed at {risk.level} risk ({views})."
    return f"Hold: neither analyst leans either way ({views})."


def verdict(bull: Opinion, bear: Opinion, risk: RiskView, judge: JudgeAnswer,
            rules: JudgeRules = COMMITTEE_RULES) -> Verdict:
    """The table's decision, with the judge's signal and comment alongside.

    The table wins. When the judge agrees, the comment is the judge's (or the table's reason if
    the judge wrote none); when it differs or could not be read, the comment says so first.
    """
    signal, rule = decide(bull, bear, risk, rules)
    label = RULES[rule]
    if judge.signal == signal:
        comment = judge.comment or explain(bull, bear, risk, signal, rule)
        return Verdict(signal, rule, judge.signal, False, comment)
    if judge.signal is None:
        comment = f"the judge's answer could not be read ({judge.problem}); the rules say " \
                  f"{signal} ({label})"
        return Verdict(signal, rule, None, False, comment)
    comment = f"the judge said {judge.signal}; the rules say {signal} ({label})"
    if judge.comment:
        comment += f". Judge's comment: {judge.comment}"
    return Verdict(signal, rule, judge.signal, True, comment)


# ----------------------------------------------------------------------- offline analyst set
def _number(brief: Mapping[str, object], key: str) -> float | None:
    """A finite number from the brief, or None (missing, None, NaN, not a number, a flag)."""
    value = brief.get(key)
    if value is None or isinstance(value, str | bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _fmt(value: float) -> str:
    return f"{value:,.2f}" if abs(value) >= 1000 else f"{value:.6g}"


def _numbers(brief: Mapping[str, object], *keys: str) -> list[float] | None:
    """The brief's values of ``keys``, or None when any is missing."""
    values = [_number(brief, key) for key in keys]
    return None if any(v is None for v in values) else values  # type: ignore[return-value]


def _candle(brief: Mapping[str, object]) -> tuple[int, float, float, float] | None:
    """The last candle: direction (+1, -1, 0), body, upper wick, lower wick."""
    values = _numbers(brief, "candle_direction", "candle_body", "candle_upper_wick",
                      "candle_lower_wick")
    if values is None:
        return None
    direction, body, upper, lower = values
    return int(direction), body, upper, lower


def _moving_averages(brief: Mapping[str, object], above: bool) -> list[str]:
    """The close against its 20/50/200-bar SMAs (strictly above or below), and the three
    stacked the same way."""
    close = _number(brief, "close")
    found = []
    word = "above" if above else "below"
    for n in (20, 50, 200):
        ma = _number(brief, f"ma_{n}")
        if close is not None and ma is not None and (close > ma if above else close < ma):
            found.append(f"the close {_fmt(close)} is {word} its {n}-bar SMA {_fmt(ma)}")
    stack = _numbers(brief, "ma_20", "ma_50", "ma_200")
    if stack is not None:
        short, mid, long = stack
        if (short > mid > long) if above else (short < mid < long):
            found.append(f"the 20-, 50- and 200-bar SMAs are stacked {'upward' if above else 'downward'}"
                         f" ({_fmt(short)}, {_fmt(mid)}, {_fmt(long)})")
    return found


def _momentum(brief: Mapping[str, object], positive: bool) -> list[str]:
    found = []
    for n in (5, 10, 20):
        m = _number(brief, f"momentum_{n}")
        if m is not None and (m > 0 if positive else m < 0):
            found.append(f"{n}-bar momentum is {'positive' if positive else 'negative'} "
                         f"({m:+.2%})")
    return found


def _volume_surge(brief: Mapping[str, object], direction: int) -> list[str]:
    candle, ratio = _candle(brief), _number(brief, "volume_ratio_20")
    if candle is None or ratio is None or candle[0] != direction or ratio < 1.5:
        return []
    return [f"volume is {ratio:.1f}x its 20-bar mean on {'an up' if direction > 0 else 'a down'}"
            " candle"]


def bullish_case(brief: Mapping[str, object]) -> list[str]:
    """Every bullish argument the brief supports, strongest kind first: the trend (the close
    above its 20/50/200-bar SMAs, the three stacked upward, the 9-bar EMA above the 21-bar),
    positive 5/10/20-bar momentum, an RSI(14) from 50 to 70 (room to rise) or an RSI(7) above an
    RSI(14) under 40 (turning up out of oversold), the stochastic's %K above its %D under 20, an
    up candle off the lower Bollinger band, volume of 1.5x its mean or more on an up candle, a
    lower wick of twice the body or more (buyers rejected the lows). Missing values argue
    nothing."""
    found = _moving_averages(brief, above=True)
    emas = _numbers(brief, "ema_9", "ema_21")
    if emas is not None and emas[0] > emas[1]:
        found.append(f"the 9-bar EMA {_fmt(emas[0])} is above the 21-bar EMA {_fmt(emas[1])}")
    found += _momentum(brief, positive=True)
    rsi = _numbers(brief, "rsi_7", "rsi_14")
    if rsi is not None:
        short, mid = rsi
        if 50 <= mid <= 70:
            found.append(f"RSI(14) {mid:.1f} is firm with room to rise (50 to 70)")
        elif mid < 40 and short > mid:
            found.append(f"RSI(7) {short:.1f} is above RSI(14) {mid:.1f}, under 40: turning up "
                         "out of oversold")
    stoch = _numbers(brief, "stoch_k_14", "stoch_d_14")
    if stoch is not None and stoch[0] > stoch[1] and stoch[1] < 20:
        found.append(f"the stochastic turns up from oversold (%K {stoch[0]:.1f} above %D "
                     f"{stoch[1]:.1f}, under 20)")
    candle, zone = _candle(brief), brief.get("bb_zone_20")
    if candle is not None and candle[0] > 0 and zone in ("lower", "below lower"):
        found.append(f"an up candle off the lower Bollinger band (the close sits {zone})")
    found += _volume_surge(brief, +1)
    if candle is not None and candle[3] > 0 and candle[3] >= 2 * candle[1]:
        found.append(f"a lower wick of {_fmt(candle[3])} against a body of {_fmt(candle[1])}: "
                     "buyers rejected the lows")
    return found


def bearish_case(brief: Mapping[str, object]) -> list[str]:
    """Every bearish argument the brief supports, strongest kind first: the trend (the close
    below its 20/50/200-bar SMAs, the three stacked downward, the close below the 55-bar EMA),
    negative 5/10/20-bar momentum, a 5-bar momentum turned negative inside a rising 20-bar one
    (the trend tiring), an RSI(14) above 70 (overbought) or under 50 with the RSI(7) below it
    (weak and falling), the stochastic's %K below its %D above 80, a down candle or a long upper
    wick at the upper Bollinger band (rejected there), volume of 1.5x its mean or more on a down
    candle, an upper wick of twice the body or more (sellers capped the high). Missing values
    argue nothing."""
    found = _moving_averages(brief, above=False)
    close, ema = _number(brief, "close"), _number(brief, "ema_55")
    if close is not None and ema is not None and close < ema:
        found.append(f"the close {_fmt(close)} is below the 55-bar EMA {_fmt(ema)}")
    found += _momentum(brief, positive=False)
    fading = _numbers(brief, "momentum_5", "momentum_20")
    if fading is not None and fading[0] < 0 < fading[1]:
        found.append(f"5-bar momentum turned negative ({fading[0]:+.2%}) inside a rising 20-bar "
                     f"one ({fading[1]:+.2%}): the trend is tiring")
    rsi = _numbers(brief, "rsi_7", "rsi_14")
    if rsi is not None:
        short, mid = rsi
        if mid > 70:
            found.append(f"RSI(14) {mid:.1f} is overbought (above 70)")
        elif mid < 50 and short < mid:
            found.append(f"RSI(14) {mid:.1f} is weak and RSI(7) {short:.1f} falls below it")
    stoch = _numbers(brief, "stoch_k_14", "stoch_d_14")
    if stoch is not None and stoch[0] < stoch[1] and stoch[1] > 80:
        found.append(f"the stochastic turns down from overbought (%K {stoch[0]:.1f} below %D "
                     f"{stoch[1]:.1f}, above 80)")
    candle, zone = _candle(brief), brief.get("bb_zone_20")
    long_upper = candle is not None and candle[2] > 0 and candle[2] >= 2 * candle[1]
    if candle is not None and zone in ("upper", "above upper") and (candle[0] < 0 or long_upper):
        found.append(f"rejected at the upper Bollinger band (the close sits {zone}, "
                     f"{'a long upper wick' if long_upper else 'a down candle'})")
    found += _volume_surge(brief, -1)
    if candle is not None and long_upper:
        found.append(f"an upper wick of {_fmt(candle[2])} against a body of {_fmt(candle[1])}: "
                     "sellers capped the high")
    return found


def lean_of(mine: int, theirs: int, own: Lean, other: Lean) -> tuple[Lean, int]:
    """An offline analyst's honest lean and strength from its side's ``mine`` arguments and the
    other side's ``theirs``: its own way while it holds at least one argument for every
    :data:`CONCEDE` of theirs, the other way (it concedes) once theirs outnumber that; a lean
    needs :data:`MIN_CASE` arguments, else NEUTRAL. The strength is the lean's side's count of
    arguments (NEUTRAL: its own), from 1 to 10."""
    if CONCEDE * mine >= theirs:
        lean, count = (own if mine >= MIN_CASE else Lean.NEUTRAL), mine
    else:
        lean, count = (other if theirs >= MIN_CASE else Lean.NEUTRAL), theirs
    if lean is Lean.NEUTRAL:
        count = mine
    return lean, max(MIN_STRENGTH, min(MAX_STRENGTH, count))


def _analyst(side: str, symbol: str, brief: Mapping[str, object]) -> str:
    """The offline bull (``side`` "bull") or bear: its side's case in full, what stands against
    it, and its honest lean (:func:`lean_of`)."""
    bullish = side == "bull"
    bulls, bears = bullish_case(brief), bearish_case(brief)
    mine, theirs = (bulls, bears) if bullish else (bears, bulls)
    own, other = (Lean.BULLISH, Lean.BEARISH) if bullish else (Lean.BEARISH, Lean.BULLISH)
    lean, strength = lean_of(len(mine), len(theirs), own, other)
    word = "bullish" if bullish else "bearish"
    lines = [f"The {word} case for {symbol}: {len(mine)} argument(s)."]
    lines += [f"- {arg}." for arg in mine] or [f"- No indicator in the brief supports a {word} "
                                                f"view."]
    if theirs:
        lines.append(f"Against it ({len(theirs)}): " + "; ".join(theirs) + ".")
    if lean is own:
        lines.append(f"Honestly, the data lean {word}.")
    elif lean is other:
        lines.append(f"Honestly, the other side's case is more than {CONCEDE} times mine: I "
                     "concede it.")
    else:
        lines.append(f"Honestly, too little is in the brief for a lean (a lean needs "
                     f"{MIN_CASE} arguments).")
    lines.append(f"LEAN: {lean} STRENGTH: {strength}")
    return "\n".join(lines)


def _risk_officer(symbol: str, brief: Mapping[str, object]) -> str:
    """The offline risk officer: the 14-bar ATR (else the 20-bar std) as a share of the close."""
    close = _number(brief, "close")
    ratio, source = None, ""
    for key, name in (("atr_14", "14-bar ATR"), ("std_20", "20-bar standard deviation")):
        value = _number(brief, key)
        if value is not None and close is not None and close > 0:
            ratio, source = abs(value) / close, name
            break
    if ratio is None:
        level = Risk.MEDIUM
        lines = [f"Volatility of {symbol} is unknown (no ATR or standard deviation with a "
                 f"price in the brief), so caution: medium risk."]
    else:
        level = (Risk.HIGH if ratio > RISK_HIGH else Risk.MEDIUM if ratio > RISK_MEDIUM
                 else Risk.LOW)
        lines = [f"The {source} of {symbol} is {ratio:.2%} of the price ({level.lower()} risk: "
                 f"above {RISK_HIGH:.0%} is high, above {RISK_MEDIUM:.0%} medium)."]
    bb = _number(brief, "bb_position_20")
    if bb is not None and not 0 <= bb <= 1:
        lines.append(f"The price is outside its Bollinger band (position {bb:.2f}).")
    rsi = _number(brief, "rsi_14")
    if rsi is not None and not 30 <= rsi <= 70:
        lines.append(f"RSI {rsi:.1f} is at an extreme.")
    volume = _number(brief, "volume_ratio_20")
    if volume is not None and volume >= 2:
        lines.append(f"Volume is {volume:.1f} times its 20-bar average.")
    lines.append(f"RISK: {level}")
    return "\n".join(lines)


def rule_analysts(brief: Mapping[str, object], symbol: str,
                  rules: JudgeRules = COMMITTEE_RULES) -> dict[str, str]:
    """The offline committee's answers for ``symbol``: texts for "bull", "bear", "risk" and
    "judge" in the formats of the signal templates, computed from ``brief`` (the keys of
    :func:`arena.doors.brief.brief`; any may be missing or None). Deterministic.

    The bull lists :func:`bullish_case`, the bear :func:`bearish_case`, each weighing its own
    case against the other's (:func:`lean_of`). The risk officer rates the ATR (else the
    standard deviation) against the close: HIGH above 5%, MEDIUM above 2% or unknown, else LOW.
    The judge states the table's own decision under ``rules``, as its JSON object.
    """
    texts = {"bull": _analyst("bull", symbol, brief), "bear": _analyst("bear", symbol, brief),
             "risk": _risk_officer(symbol, brief)}
    bull, bear = parse_opinion("bull", texts["bull"]), parse_opinion("bear", texts["bear"])
    risk = parse_risk(texts["risk"])
    signal, rule = decide(bull, bear, risk, rules)
    texts["judge"] = judge_json(signal, explain(bull, bear, risk, signal, rule))
    return texts
