"""The signal server's verdict: parse the committee's answers and decide buy, sell or hold in code.

A trading terminal asks for a debate on one symbol. A bullish analyst, a bearish analyst and a
risk officer read the same brief of indicators in parallel (templates ``signal_bull``,
``signal_bear``, ``signal_risk`` in ``models/prompts``), then a judge sees the brief and the three
opinions (``signal_judge``). Every answer ends with a line this module parses:

* bull and bear: ``LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>`` (:func:`parse_opinion`) -
  each argues its side but states its honest lean, so a bull may lean BEARISH;
* risk officer: ``RISK: LOW|MEDIUM|HIGH`` (:func:`parse_risk`), never a direction;
* judge: ``SIGNAL: BUY|SELL|HOLD`` and ``COMMENT: <one sentence>`` (:func:`parse_judge`).

Parsing is case-insensitive, tolerates text around the line (markdown bold, a leading phrase)
and takes the last matching line when there are several. An analyst's answer without its line,
or with a strength outside 1..10, raises :class:`VerdictError` naming the role and what is
missing; a judge without a signal is not an error (the table decides anyway).

The judge rules of SPEC §6, enforced by :func:`decide` (the judge's own signal only counts when
it agrees). Each directional analyst's lean is a vote: BULLISH -> buy, BEARISH -> sell,
NEUTRAL -> no vote. The risk officer never votes a direction, so the arena's "buy or sell only
when at least two of three agree" means here that the bull and the bear vote the same way.

=  ==============================  ===========  =================  ==============  ==============
#  votes (bull, bear)              risk         condition          signal          rule id
=  ==============================  ===========  =================  ==============  ==============
1  any                             HIGH         -                  hold            high-risk
2  the same (buy+buy, sell+sell)   LOW, MEDIUM  -                  that direction  agree
3  split (one buy, one sell)       LOW, MEDIUM  strengths differ   the stronger's  split-stronger
3  split (one buy, one sell)       LOW, MEDIUM  equal strengths    hold            split-even
4  one votes, the other NEUTRAL    LOW          its strength >= 6  its vote        one-sided
4  one votes, the other NEUTRAL    LOW          its strength <= 5  hold            one-sided-weak
4  one votes, the other NEUTRAL    MEDIUM       its strength >= 8  its vote        one-sided
4  one votes, the other NEUTRAL    MEDIUM       its strength <= 7  hold            one-sided-weak
5  both NEUTRAL                    LOW, MEDIUM  -                  hold            no-lean
=  ==============================  ===========  =================  ==============  ==============

The rows are tried in order, so HIGH risk holds before any vote is counted. :func:`verdict`
applies the table to the parsed answers and the judge's text: the table's signal always wins;
when the judge said otherwise the verdict is ``overruled`` and its comment names both signals
("the judge said buy; the rules say hold (HIGH RISK)"); when the judge gave no parseable signal
the comment says so and ``overruled`` stays False (there was nothing to overrule).

:func:`rule_analysts` is an offline committee (no model, no API key): deterministic texts in
exactly the formats above, computed from a brief of indicators, so the server runs without an
LLM. :func:`brief_text` renders such a brief as the ``{{ brief }}`` text of the templates.
"""

from __future__ import annotations

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

#: every rule id of the table, with the label the verdict's comment shows
RULES: dict[str, str] = {
    "high-risk": "HIGH RISK",
    "agree": "bull and bear agree",
    "split-stronger": "split, the stronger argument wins",
    "split-even": "split at equal strength",
    "one-sided": "one analyst leans, strongly enough",
    "one-sided-weak": "one analyst leans, too weakly",
    "no-lean": "neither analyst leans",
}

OPINION_LINE = "LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>"
RISK_LINE = "RISK: LOW|MEDIUM|HIGH"
SIGNAL_LINE = "SIGNAL: BUY|SELL|HOLD"

_DECOR = r"[*_`\s]*"  # markdown emphasis or spaces around a label's value
_NOT_ALTERNATIVES = r"(?![ \t]*[|/][ \t]*[A-Za-z])"  # "LOW|MEDIUM|HIGH" echoed from the prompt
_LEAN = re.compile(rf"\bLEAN{_DECOR}[:=]{_DECOR}(BULLISH|BEARISH|NEUTRAL)\b"
                   rf"[*_`\s,;|/-]*STRENGTH{_DECOR}[:=]{_DECOR}([+-]?\d+(?:[.,]\d+)?)", re.I)
_LEAN_WORD = re.compile(r"\bLEAN\b[^\n]*", re.I)
_RISK = re.compile(rf"\bRISK{_DECOR}[:=]{_DECOR}(LOW|MEDIUM|HIGH)\b{_NOT_ALTERNATIVES}", re.I)
_SIGNAL = re.compile(rf"\bSIGNAL{_DECOR}[:=]{_DECOR}(BUY|SELL|HOLD)\b{_NOT_ALTERNATIVES}", re.I)
_COMMENT = re.compile(rf"\bCOMMENT{_DECOR}[:=][*_` \t]*([^\n]*)", re.I)


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
class Verdict:
    """The committee's signal (``buy``/``sell``/``hold``) and the rule of the table behind it.

    ``judge_signal`` is what the judge said (None: no parseable signal); ``overruled`` is True
    when the judge gave a signal and the table's differs.
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
    """The ``LEAN: ... STRENGTH: n`` line of a directional analyst's answer (the last one wins).

    :class:`VerdictError` when there is none, or its strength is not a whole number 1..10.
    """
    matches = list(_LEAN.finditer(text or ""))
    if not matches:
        near = _LEAN_WORD.findall(text or "")
        hint = f"; the last line mentioning LEAN was {near[-1].strip()[:80]!r}" if near else ""
        raise VerdictError(f"{role}: the answer has no final line {OPINION_LINE!r}{hint}")
    lean, raw = matches[-1].groups()
    if not re.fullmatch(r"[+-]?\d+", raw):
        raise VerdictError(f"{role}: STRENGTH must be a whole number from {MIN_STRENGTH} to "
                           f"{MAX_STRENGTH}, got {raw}")
    strength = int(raw)
    if not MIN_STRENGTH <= strength <= MAX_STRENGTH:
        raise VerdictError(f"{role}: STRENGTH must be from {MIN_STRENGTH} to {MAX_STRENGTH}, "
                           f"got {strength}")
    return Opinion(role=role, lean=Lean(lean.upper()), strength=strength, text=text)


def parse_risk(text: str) -> RiskView:
    """The ``RISK: LOW|MEDIUM|HIGH`` line of the risk officer's answer (the last one wins)."""
    matches = list(_RISK.finditer(text or ""))
    if not matches:
        raise VerdictError(f"risk: the answer has no final line {RISK_LINE!r}")
    return RiskView(level=Risk(matches[-1].group(1).upper()), text=text)


def parse_judge(text: str | None) -> tuple[str | None, str]:
    """The judge's signal (``buy``/``sell``/``hold``, None if there is no ``SIGNAL:`` line) and
    comment (the last ``COMMENT:`` line, ``""`` if none). Never raises."""
    text = text or ""
    signals = _SIGNAL.findall(text)
    comments = [c.strip().strip("*_`").strip() for c in _COMMENT.findall(text)]
    comments = [c for c in comments if c]
    return (signals[-1].lower() if signals else None), (comments[-1] if comments else "")


# ------------------------------------------------------------------------------------ the table
def vote(lean: Lean) -> str | None:
    """A lean as a vote: BULLISH -> buy, BEARISH -> sell, NEUTRAL -> None."""
    return {Lean.BULLISH: BUY, Lean.BEARISH: SELL}.get(Lean(lean))


def decide(bull: Opinion, bear: Opinion, risk: RiskView) -> tuple[str, str]:
    """The table of the module docstring: ``(signal, rule id)``."""
    level = Risk(risk.level)
    if level is Risk.HIGH:
        return HOLD, "high-risk"
    votes = [(vote(o.lean), o.strength) for o in (bull, bear)]
    (v1, s1), (v2, s2) = votes
    if v1 is not None and v1 == v2:
        return v1, "agree"
    if v1 is not None and v2 is not None:  # one buy, one sell
        if s1 == s2:
            return HOLD, "split-even"
        return (v1 if s1 > s2 else v2), "split-stronger"
    if v1 is None and v2 is None:
        return HOLD, "no-lean"
    direction, strength = (v1, s1) if v1 is not None else (v2, s2)
    needed = ONE_SIDED_LOW if level is Risk.LOW else ONE_SIDED_MEDIUM
    if strength >= needed:
        return direction, "one-sided"
    return HOLD, "one-sided-weak"


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
    if rule == "one-sided":
        return f"{signal.capitalize()}: one analyst leans, strongly enough at {risk.level} risk " \
               f"({views})."
    if rule == "one-sided-weak":
        needed = ONE_SIDED_LOW if Risk(risk.level) is Risk.LOW else ONE_SIDED_MEDIUM
        return f"Hold: only one analyst leans, below the strength {needed} needed at " \
               f"{risk.level} risk ({views})."
    return f"Hold: neither analyst leans either way ({views})."


def verdict(bull: Opinion, bear: Opinion, risk: RiskView, judge_text: str | None) -> Verdict:
    """The table's decision, with the judge's signal and comment alongside.

    The table wins. When the judge agrees, the comment is the judge's (or the table's reason if
    the judge wrote none); when it differs or gave no signal, the comment says so first.
    """
    signal, rule = decide(bull, bear, risk)
    judge_signal, judge_comment = parse_judge(judge_text)
    label = RULES[rule]
    if judge_signal == signal:
        comment = judge_comment or explain(bull, bear, risk, signal, rule)
        return Verdict(signal, rule, judge_signal, False, comment)
    if judge_signal is None:
        comment = f"the judge gave no signal; the rules say {signal} ({label})"
    else:
        comment = f"the judge said {judge_signal}; the rules say {signal} ({label})"
    if judge_comment:
        comment += f". Judge's comment: {judge_comment}"
    return Verdict(signal, rule, judge_signal, judge_signal is not None, comment)


# ----------------------------------------------------------------------- offline analyst set
BRIEF_KEYS = ("close", "ma_20", "ma_50", "ma_200", "above_ma_20", "above_ma_50", "above_ma_200",
              "rsi_14", "momentum_10", "momentum_20", "bb_position_20", "atr_14", "std_20",
              "volume_ratio_20")
_LABELS = {"close": "Close", "ma_20": "20-day MA", "ma_50": "50-day MA", "ma_200": "200-day MA",
           "above_ma_20": "Above 20-day MA", "above_ma_50": "Above 50-day MA",
           "above_ma_200": "Above 200-day MA", "rsi_14": "RSI (14)",
           "momentum_10": "Momentum (10)", "momentum_20": "Momentum (20)",
           "bb_position_20": "Bollinger position (20; 0 = lower band, 1 = upper)",
           "atr_14": "ATR (14)", "std_20": "Std dev (20)",
           "volume_ratio_20": "Volume / 20-day average"}


def _number(brief: Mapping[str, object], key: str) -> float | None:
    """A finite number from the brief, or None (missing, None, NaN, not a number)."""
    value = brief.get(key)
    if value is None or isinstance(value, str):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _above(brief: Mapping[str, object], n: int) -> bool | None:
    """Whether the close is above its ``n``-day MA: the brief's flag, else close vs MA."""
    flag = brief.get(f"above_ma_{n}")
    if flag is not None and not (isinstance(flag, float) and math.isnan(flag)):
        return bool(flag)
    close, ma = _number(brief, "close"), _number(brief, f"ma_{n}")
    return None if close is None or ma is None else close > ma


def _fmt(value: float) -> str:
    return f"{value:,.2f}" if abs(value) >= 1000 else f"{value:.6g}"


def brief_text(brief: Mapping[str, object], symbol: str | None = None) -> str:
    """The brief as the templates' ``{{ brief }}`` text: one ``label: value`` line per key."""
    lines = [f"Symbol: {symbol}"] if symbol else []
    for key in BRIEF_KEYS:
        if key.startswith("above_ma_"):
            flag = _above(brief, int(key.rsplit("_", 1)[1]))
            shown = "n/a" if flag is None else ("yes" if flag else "no")
        else:
            number = _number(brief, key)
            shown = "n/a" if number is None else _fmt(number)
        lines.append(f"{_LABELS[key]}: {shown}")
    return "\n".join(lines)


def _conditions(brief: Mapping[str, object]) -> list[tuple[str, str, bool | None]]:
    """The checks both offline analysts score: (bullish wording, bearish wording, outcome).

    Outcome True: the bullish condition holds; False: the bearish one does; None: neither (the
    value is missing, or in between - RSI outside 30..70, momentum exactly 0).
    """
    checks: list[tuple[str, str, bool | None]] = []
    close = _number(brief, "close")
    for n in (20, 50, 200):
        ma = _number(brief, f"ma_{n}")
        level = f" ({_fmt(close)} vs {_fmt(ma)})" if close is not None and ma is not None else ""
        checks.append((f"the price is above its {n}-day MA{level}",
                       f"the price is below its {n}-day MA{level}", _above(brief, n)))
    rsi = _number(brief, "rsi_14")
    rsi_side = None if rsi is None else (True if 50 <= rsi <= 70 else
                                         False if 30 <= rsi < 50 else None)
    shown = "n/a" if rsi is None else f"{rsi:.1f}"
    checks.append((f"RSI {shown} is in the healthy 50-70 zone",
                   f"RSI {shown} is weak, between 30 and 50", rsi_side))
    for n in (10, 20):
        m = _number(brief, f"momentum_{n}")
        side = None if m is None or m == 0 else m > 0
        shown = "n/a" if m is None else f"{m:+.4g}"
        checks.append((f"{n}-day momentum is positive ({shown})",
                       f"{n}-day momentum is negative ({shown})", side))
    return checks


def _strength(points: int, evaluable: int) -> int:
    if evaluable == 0:
        return MIN_STRENGTH
    return max(MIN_STRENGTH, min(MAX_STRENGTH, int(10 * points / evaluable + 0.5)))


def _analyst(side: str, symbol: str, brief: Mapping[str, object]) -> str:
    """The offline bull (``side`` "bull") or bear: argue its side, state the honest lean.

    It leans its own way when its points outnumber the other side's, concedes the other way when
    the other side holds a majority of the evaluable checks, and is NEUTRAL otherwise.
    """
    checks = _conditions(brief)
    bullish = side == "bull"
    evaluable = sum(1 for *_, outcome in checks if outcome is not None)
    mine = [(b if bullish else s) for b, s, o in checks if o is not None and o == bullish]
    theirs = [(s if bullish else b) for b, s, o in checks if o is not None and o != bullish]
    own, other = (Lean.BULLISH, Lean.BEARISH) if bullish else (Lean.BEARISH, Lean.BULLISH)
    if len(mine) > len(theirs):
        lean, strength = own, _strength(len(mine), evaluable)
    elif 2 * len(theirs) > evaluable:
        lean, strength = other, _strength(len(theirs), evaluable)
    else:
        lean, strength = Lean.NEUTRAL, _strength(len(mine), evaluable)
    word = "bullish" if bullish else "bearish"
    lines = [f"The {word} case for {symbol}: {len(mine)} of {evaluable} checks support it."]
    lines += [f"- {arg}." for arg in mine] or [f"- No indicator in the brief supports a {word} "
                                                f"view."]
    if theirs:
        lines.append("Against it: " + "; ".join(theirs) + ".")
    if evaluable < len(checks):
        lines.append(f"{len(checks) - evaluable} of {len(checks)} checks could not be scored "
                     f"(missing or neutral values).")
    if lean is own:
        lines.append(f"Honestly, the data lean {word}.")
    elif lean is other:
        lines.append(f"Honestly, the data do not support a {word} view: I concede the other side.")
    else:
        lines.append(f"Honestly, the {word} case is thin: no clear lean.")
    lines.append(f"LEAN: {lean} STRENGTH: {strength}")
    return "\n".join(lines)


def _risk_officer(symbol: str, brief: Mapping[str, object]) -> str:
    """The offline risk officer: the 14-day ATR (else the 20-day std) as a share of the close."""
    close = _number(brief, "close")
    ratio, source = None, ""
    for key, name in (("atr_14", "14-day ATR"), ("std_20", "20-day standard deviation")):
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
        lines.append(f"Volume is {volume:.1f} times its 20-day average.")
    lines.append(f"RISK: {level}")
    return "\n".join(lines)


def rule_analysts(brief: Mapping[str, float | bool | None], symbol: str) -> dict[str, str]:
    """The offline committee's answers for ``symbol``: texts for "bull", "bear", "risk" and
    "judge" in the formats of the signal templates, computed from ``brief`` (keys
    :data:`BRIEF_KEYS`; any may be missing or None). Deterministic.

    Each analyst scores six checks (above the 20/50/200-day MAs, RSI 50-70 for the bull or 30-50
    for the bear, positive or negative 10/20-day momentum); its strength is the share of the
    evaluable checks on its side, scaled to 1..10. The risk officer rates the ATR (else the
    standard deviation) against the close: HIGH above 5%, MEDIUM above 2% or unknown, else LOW.
    The judge states the table's own decision.
    """
    texts = {"bull": _analyst("bull", symbol, brief), "bear": _analyst("bear", symbol, brief),
             "risk": _risk_officer(symbol, brief)}
    bull, bear = parse_opinion("bull", texts["bull"]), parse_opinion("bear", texts["bear"])
    risk = parse_risk(texts["risk"])
    signal, rule = decide(bull, bear, risk)
    texts["judge"] = (f"Applying the committee's rules to {symbol}.\n"
                      f"SIGNAL: {signal.upper()}\n"
                      f"COMMENT: {explain(bull, bear, risk, signal, rule)}")
    return texts
