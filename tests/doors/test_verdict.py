"""The signal server's verdict: parsing the committee's final lines, the decision table of SPEC §6
in code, the judge overruled, the signal_* templates, and the offline analyst set."""

from __future__ import annotations

import math

import pytest

from arena.doors.verdict import (
    BRIEF_KEYS,
    RULES,
    Lean,
    Opinion,
    Risk,
    RiskView,
    Verdict,
    VerdictError,
    brief_text,
    decide,
    parse_judge,
    parse_opinion,
    parse_risk,
    rule_analysts,
    verdict,
)
from arena.market.prompts import PromptError, Prompts

B, S, N = Lean.BULLISH, Lean.BEARISH, Lean.NEUTRAL
L, M, H = Risk.LOW, Risk.MEDIUM, Risk.HIGH


def committee(bull: tuple[Lean, int], bear: tuple[Lean, int], risk: Risk):
    return (Opinion("bull", bull[0], bull[1], "bull text"),
            Opinion("bear", bear[0], bear[1], "bear text"), RiskView(risk, "risk text"))


# ----------------------------------------------------------------------------- the table
TABLE = [
    # bull, bear, risk -> signal, rule
    ((B, 10), (B, 10), H, "hold", "high-risk"),
    ((B, 9), (S, 2), H, "hold", "high-risk"),
    ((S, 9), (S, 9), H, "hold", "high-risk"),
    ((B, 2), (B, 1), L, "buy", "agree"),
    ((B, 3), (B, 4), M, "buy", "agree"),
    ((S, 5), (S, 7), M, "sell", "agree"),
    ((S, 2), (S, 9), L, "sell", "agree"),  # the bull concedes the bear's case
    ((B, 7), (S, 4), L, "buy", "split-stronger"),
    ((B, 3), (S, 8), M, "sell", "split-stronger"),
    ((S, 6), (B, 5), M, "sell", "split-stronger"),  # each states an honest lean
    ((B, 5), (S, 5), M, "hold", "split-even"),
    ((B, 9), (S, 9), L, "hold", "split-even"),
    ((B, 6), (N, 3), L, "buy", "one-sided"),
    ((N, 1), (S, 6), L, "sell", "one-sided"),
    ((B, 5), (N, 3), L, "hold", "one-sided-weak"),
    ((N, 8), (S, 5), L, "hold", "one-sided-weak"),
    ((B, 8), (N, 3), M, "buy", "one-sided"),
    ((N, 2), (S, 10), M, "sell", "one-sided"),
    ((B, 7), (N, 3), M, "hold", "one-sided-weak"),
    ((N, 5), (S, 6), M, "hold", "one-sided-weak"),
    ((N, 10), (N, 10), L, "hold", "no-lean"),
    ((N, 1), (N, 1), M, "hold", "no-lean"),
]


@pytest.mark.parametrize(("bull", "bear", "risk", "signal", "rule"), TABLE,
                         ids=[f"{r}-{b[0]}{b[1]}-{e[0]}{e[1]}-{k}" for b, e, k, _, r in TABLE])
def test_decision_table(bull, bear, risk, signal, rule):
    assert decide(*committee(bull, bear, risk)) == (signal, rule)


def test_the_table_reaches_every_rule():
    assert {row[-1] for row in TABLE} == set(RULES)


def test_strength_does_not_matter_when_they_agree_or_risk_is_high():
    for s in range(1, 11):
        assert decide(*committee((B, s), (B, 11 - s), M)) == ("buy", "agree")
        assert decide(*committee((B, s), (N, s), H)) == ("hold", "high-risk")


# ----------------------------------------------------------------------------- parsing
@pytest.mark.parametrize(("text", "lean", "strength"), [
    ("The trend is up.\nLEAN: BULLISH STRENGTH: 7", B, 7),
    ("lean: bearish strength: 3", S, 3),
    ("Lean: Neutral Strength: 10\n", N, 10),
    ("Summary...\n**LEAN:** Bullish **STRENGTH:** 8\n\nThanks.", B, 8),
    ("My final answer - LEAN: BEARISH STRENGTH: 6 (the rally is tired)", S, 6),
    ("LEAN: BULLISH, STRENGTH: 4/10", B, 4),
    ("LEAN: BULLISH STRENGTH: 9\nOn reflection the data are weak.\nLEAN: BEARISH STRENGTH: 2", S, 2),
    ("Format: LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>\nLEAN: NEUTRAL STRENGTH: 1", N, 1),
])
def test_parse_opinion(text, lean, strength):
    opinion = parse_opinion("bull", text)
    assert (opinion.role, opinion.lean, opinion.strength, opinion.text) == \
        ("bull", lean, strength, text)
    assert isinstance(opinion.lean, Lean)


@pytest.mark.parametrize("role", ["bull", "bear"])
@pytest.mark.parametrize("text", [
    "", "I am bullish, strength 7.", "LEAN: BULLISH", "STRENGTH: 7",
    "LEAN: UP STRENGTH: 7", "LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>"])
def test_an_opinion_without_its_line_names_the_role(role, text):
    with pytest.raises(VerdictError, match=rf"^{role}: .*LEAN") as info:
        parse_opinion(role, text)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("strength", ["0", "11", "-3", "7.5", "100"])
def test_a_strength_outside_one_to_ten_is_an_error(strength):
    with pytest.raises(VerdictError, match=rf"^bear: STRENGTH .*{strength}"):
        parse_opinion("bear", f"Weak.\nLEAN: BEARISH STRENGTH: {strength}")


def test_the_last_lean_line_counts_even_if_its_strength_is_bad():
    with pytest.raises(VerdictError, match="11"):
        parse_opinion("bull", "LEAN: BULLISH STRENGTH: 5\nLEAN: BULLISH STRENGTH: 11")


@pytest.mark.parametrize(("text", "level"), [
    ("Volatility is tame.\nRISK: LOW", L),
    ("risk: medium", M),
    ("**RISK:** High", H),
    ("RISK: LOW\nEarnings tomorrow, so:\nRISK: HIGH", H),
    ("Levels: RISK: LOW|MEDIUM|HIGH\nRISK: MEDIUM", M),
])
def test_parse_risk(text, level):
    view = parse_risk(text)
    assert (view.level, view.text) == (level, text)


@pytest.mark.parametrize("text", ["", "HIGH RISK", "RISK: LOW|MEDIUM|HIGH",
                                  "LEAN: BULLISH STRENGTH: 8", "RISK: EXTREME"])
def test_a_risk_view_without_its_line_is_an_error(text):
    with pytest.raises(VerdictError, match=r"^risk: .*RISK:"):
        parse_risk(text)


@pytest.mark.parametrize(("text", "expected"), [
    ("Both agree.\nSIGNAL: BUY\nCOMMENT: Trend and momentum agree.", ("buy", "Trend and momentum agree.")),
    ("signal: sell\ncomment: weak.", ("sell", "weak.")),
    ("**SIGNAL:** Hold\n**COMMENT:** Too volatile.", ("hold", "Too volatile.")),
    ("SIGNAL: BUY\nSIGNAL: HOLD\nCOMMENT: first\nCOMMENT: second", ("hold", "second")),
    ("SIGNAL: BUY|SELL|HOLD\nCOMMENT: <one sentence>\nSIGNAL: SELL", ("sell", "<one sentence>")),
    ("SIGNAL: HOLD", ("hold", "")),
    ("I would buy this.\nCOMMENT: looks good", (None, "looks good")),
    ("", (None, "")),
    (None, (None, "")),
])
def test_parse_judge(text, expected):
    assert parse_judge(text) == expected


# ----------------------------------------------------------------------------- the verdict
def test_the_judge_agreeing_keeps_its_comment():
    v = verdict(*committee((B, 7), (B, 5), L), "Fine.\nSIGNAL: BUY\nCOMMENT: Trend is up.")
    assert v == Verdict("buy", "agree", "buy", False, "Trend is up.")


def test_the_judge_agreeing_without_a_comment_gets_the_tables_reason():
    v = verdict(*committee((B, 5), (S, 5), M), "SIGNAL: HOLD")
    assert (v.signal, v.rule, v.overruled) == ("hold", "split-even", False)
    assert "equal strength" in v.comment


@pytest.mark.parametrize(("bull", "bear", "risk", "judge", "signal", "label"), [
    ((B, 9), (B, 8), H, "buy", "hold", "HIGH RISK"),
    ((B, 5), (N, 3), L, "buy", "hold", RULES["one-sided-weak"]),
    ((B, 3), (S, 8), M, "hold", "sell", RULES["split-stronger"]),
    ((S, 7), (S, 7), L, "buy", "sell", RULES["agree"]),
])
def test_a_judge_breaking_the_rules_is_overruled(bull, bear, risk, judge, signal, label):
    text = f"Reasoning.\nSIGNAL: {judge.upper()}\nCOMMENT: My call."
    v = verdict(*committee(bull, bear, risk), text)
    assert (v.signal, v.judge_signal, v.overruled) == (signal, judge, True)
    assert v.comment.startswith(f"the judge said {judge}; the rules say {signal} ({label})")
    assert "My call." in v.comment


def test_an_unparseable_judge_leaves_the_table_to_decide():
    for text in ("I think we should buy, strongly.", "", None):
        v = verdict(*committee((S, 8), (S, 6), M), text)
        assert (v.signal, v.rule, v.judge_signal, v.overruled) == ("sell", "agree", None, False)
        assert v.comment.startswith("the judge gave no signal; the rules say sell")


# ----------------------------------------------------------------------------- templates
BRIEF = "Close: 101.5\nRSI (14): 61.2"
FINAL = {"signal_bull": "LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>",
         "signal_bear": "LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>",
         "signal_risk": "RISK: LOW|MEDIUM|HIGH",
         "signal_judge": "SIGNAL: BUY|SELL|HOLD"}


@pytest.mark.parametrize("name", ["signal_bull", "signal_bear", "signal_risk"])
def test_the_analyst_templates_render(name):
    prompts = Prompts()
    assert prompts.fields(name) == ["symbol", "brief"]
    text = prompts.render(name, symbol="ACME", brief=BRIEF)
    assert "ACME" in text and BRIEF in text
    assert FINAL[name] in text
    assert "{{" not in text and "{#" not in text
    with pytest.raises(PromptError, match="brief"):
        prompts.render(name, symbol="ACME")


def test_the_templates_examples_parse_as_their_roles_answers():
    """The example final line each template shows is one the parser accepts."""
    prompts = Prompts()
    assert parse_opinion("bull", prompts.render("signal_bull", symbol="X", brief="")).lean is B
    assert parse_opinion("bear", prompts.render("signal_bear", symbol="X", brief="")).lean is S
    assert parse_risk(prompts.render("signal_risk", symbol="X", brief="")).level is M
    judge = prompts.render("signal_judge", symbol="X", brief="", bull="", bear="", risk="")
    assert parse_judge(judge)[0] == "hold"


def test_the_judge_template_renders_the_three_opinions():
    prompts = Prompts()
    assert set(prompts.fields("signal_judge")) == {"symbol", "brief", "bull", "bear", "risk"}
    text = prompts.render("signal_judge", symbol="ACME", brief=BRIEF, bull="BULL-OPINION",
                          bear="BEAR-OPINION", risk="RISK-OPINION")
    for part in ("ACME", BRIEF, "BULL-OPINION", "BEAR-OPINION", "RISK-OPINION",
                 FINAL["signal_judge"], "COMMENT:", "RISK: HIGH"):
        assert part in text
    assert text.index("BULL-OPINION") < text.index("BEAR-OPINION") < text.index("RISK-OPINION")
    with pytest.raises(PromptError, match="risk"):
        prompts.render("signal_judge", symbol="ACME", brief=BRIEF, bull="a", bear="b")


def test_the_chat_template_renders_with_or_without_a_symbol():
    prompts = Prompts()
    assert set(prompts.fields("signal_chat")) == {"symbol", "brief"}
    assert "ACME" in prompts.render("signal_chat", symbol="ACME", brief=BRIEF)
    empty = prompts.render("signal_chat", symbol="", brief="")
    assert "{{" not in empty and "trader" in empty


# ----------------------------------------------------------------------------- offline analysts
BULLISH = {"close": 120.0, "ma_20": 115.0, "ma_50": 110.0, "ma_200": 100.0, "above_ma_20": True,
           "above_ma_50": True, "above_ma_200": True, "rsi_14": 62.0, "momentum_10": 0.04,
           "momentum_20": 0.09, "bb_position_20": 0.8, "atr_14": 1.8, "std_20": 2.0,
           "volume_ratio_20": 1.3}
BEARISH = {"close": 80.0, "ma_20": 85.0, "ma_50": 90.0, "ma_200": 100.0, "above_ma_20": False,
           "above_ma_50": False, "above_ma_200": False, "rsi_14": 38.0, "momentum_10": -0.05,
           "momentum_20": -0.11, "bb_position_20": 0.15, "atr_14": 1.2, "std_20": 1.5,
           "volume_ratio_20": 1.1}
VOLATILE = {**BULLISH, "atr_14": 9.6, "std_20": 10.0, "bb_position_20": 1.2, "rsi_14": 76.0}


def offline(brief, symbol="ACME"):
    texts = rule_analysts(brief, symbol)
    assert set(texts) == {"bull", "bear", "risk", "judge"}
    bull, bear = parse_opinion("bull", texts["bull"]), parse_opinion("bear", texts["bear"])
    risk = parse_risk(texts["risk"])
    return texts, bull, bear, risk, verdict(bull, bear, risk, texts["judge"])


def test_a_clearly_bullish_brief_buys():
    texts, bull, bear, risk, v = offline(BULLISH)
    assert (bull.lean, bull.strength) == (B, 10)
    assert bear.lean is B  # the bear concedes honestly
    assert risk.level is L  # ATR 1.5% of the close
    assert (v.signal, v.rule, v.judge_signal, v.overruled) == ("buy", "agree", "buy", False)
    assert "ACME" in texts["bull"] and "above its 200-day MA" in texts["bull"]


def test_a_clearly_bearish_brief_sells():
    texts, bull, bear, risk, v = offline(BEARISH)
    assert (bear.lean, bear.strength) == (S, 10)
    assert bull.lean is S
    assert risk.level is L
    assert (v.signal, v.rule, v.judge_signal, v.overruled) == ("sell", "agree", "sell", False)
    assert "below its 50-day MA" in texts["bear"]


def test_a_high_volatility_brief_holds():
    texts, bull, _bear, risk, v = offline(VOLATILE)
    assert bull.lean is B  # still an uptrend ...
    assert risk.level is H  # ... but ATR is 8% of the close
    assert (v.signal, v.rule, v.judge_signal, v.overruled) == ("hold", "high-risk", "hold", False)
    assert "8.00%" in texts["risk"] and "Bollinger" in texts["risk"]
    assert "LEAN" not in texts["risk"] and "BUY" not in texts["risk"]


@pytest.mark.parametrize(("atr", "std", "level"), [
    (1.0, None, L), (2.4, None, L), (2.5, None, M), (6.0, None, M), (6.1, None, H),
    (None, 3.0, M), (None, 7.0, H), (None, None, M),
])
def test_the_offline_risk_officer_reads_atr_then_std(atr, std, level):
    brief = {**BULLISH, "close": 120.0, "atr_14": atr, "std_20": std}
    assert parse_risk(rule_analysts(brief, "X")["risk"]).level is level


def test_a_mixed_brief_follows_the_table():
    mixed = {**BULLISH, "above_ma_20": False, "above_ma_50": False, "rsi_14": 45.0,
             "momentum_10": -0.01}  # bullish: 200-day MA, momentum_20; bearish: the other four
    _, bull, bear, _, v = offline(mixed)
    assert (bull.lean, bear.lean, bear.strength) == (S, S, 7)
    assert (v.signal, v.rule) == ("sell", "agree")
    split = {**mixed, "above_ma_50": True}  # 3 bullish, 3 bearish: nobody leans
    _, bull, bear, _, v = offline(split)
    assert (bull.lean, bear.lean, v.signal, v.rule) == (N, N, "hold", "no-lean")


def test_each_offline_answer_ends_with_its_line():
    texts = rule_analysts(BULLISH, "ACME")
    assert texts["bull"].splitlines()[-1] == "LEAN: BULLISH STRENGTH: 10"
    assert texts["bear"].splitlines()[-1].startswith("LEAN: BULLISH STRENGTH: ")
    assert texts["risk"].splitlines()[-1] == "RISK: LOW"
    assert texts["judge"].splitlines()[-2:][0] == "SIGNAL: BUY"
    assert texts["judge"].splitlines()[-1].startswith("COMMENT: ")


def test_the_offline_analysts_survive_missing_values_and_are_deterministic():
    empty = dict.fromkeys(BRIEF_KEYS)
    _texts, bull, bear, risk, v = offline(empty)
    assert (bull.lean, bear.lean, risk.level) == (N, N, M)
    assert (v.signal, v.rule, v.overruled) == ("hold", "no-lean", False)
    assert offline({})[4] == v
    nan = {**BULLISH, "rsi_14": math.nan, "above_ma_20": None}  # flag derived from close vs MA
    assert rule_analysts(nan, "ACME") == rule_analysts(dict(nan), "ACME")
    assert parse_opinion("bull", rule_analysts(nan, "ACME")["bull"]).strength == 10


def test_brief_text_lists_every_indicator():
    text = brief_text({**BULLISH, "rsi_14": None, "above_ma_50": None}, "ACME")
    assert text.splitlines()[0] == "Symbol: ACME"
    assert "RSI (14): n/a" in text and "Close: 120" in text
    assert "Above 50-day MA: yes" in text  # derived from close 120 > MA 110
    assert len(text.splitlines()) == len(BRIEF_KEYS) + 1
