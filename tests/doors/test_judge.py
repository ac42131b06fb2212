"""The signal server's verdict: parsing the committee's answers (the analysts' final lines, the
judge's JSON object), the decision table of the committee's rules in code (and the two rules
beyond them, off by default), the judge overruled, the signal_* templates, and the offline
analysts who argue their sides."""

from __future__ import annotations

import json
import math

import pytest

from arena.doors.judge import (
    COMMITTEE_RULES,
    RULES,
    JudgeAnswer,
    JudgeRules,
    Lean,
    Opinion,
    Risk,
    RiskView,
    Verdict,
    VerdictError,
    bearish_case,
    bullish_case,
    decide,
    lean_of,
    parse_opinion,
    parse_risk,
    read_judge,
    rule_analysts,
    rules_text,
    verdict,
)
from arena.market.prompts import PromptError, Prompts

B, S, N = Lean.BULLISH, Lean.BEARISH, Lean.NEUTRAL
L, M, H = Risk.LOW, Risk.MEDIUM, Risk.HIGH
SPLIT_LOW, LONE = JudgeRules(split_at_low=True), JudgeRules(lone_analyst=True)
BOTH = JudgeRules(split_at_low=True, lone_analyst=True)


def committee(bull: tuple[Lean, int], bear: tuple[Lean, int], risk: Risk):
    return (Opinion("bull", bull[0], bull[1], "bull text"),
            Opinion("bear", bear[0], bear[1], "bear text"), RiskView(risk, "risk text"))


# ----------------------------------------------------------------------------- the table
# the committee's rules as written: HIGH risk holds; buy or sell only when two of three agree
# (the risk officer never votes a direction: the bull and the bear); a split at MEDIUM risk goes
# to the stronger argument; everything else holds
TABLE = [
    # bull, bear, risk -> signal, rule
    ((B, 10), (B, 10), H, "hold", "high-risk"),
    ((B, 9), (S, 2), H, "hold", "high-risk"),
    ((S, 9), (S, 9), H, "hold", "high-risk"),
    ((B, 2), (B, 1), L, "buy", "agree"),
    ((B, 3), (B, 4), M, "buy", "agree"),
    ((S, 5), (S, 7), M, "sell", "agree"),
    ((S, 2), (S, 9), L, "sell", "agree"),  # the bull concedes the bear's case
    ((B, 3), (S, 8), M, "sell", "split-stronger"),
    ((S, 6), (B, 5), M, "sell", "split-stronger"),  # each states an honest lean
    ((B, 7), (S, 4), M, "buy", "split-stronger"),
    ((B, 5), (S, 5), M, "hold", "split-even"),
    ((B, 7), (S, 4), L, "hold", "split-low"),  # the stronger argument is a MEDIUM-risk rule
    ((B, 9), (S, 9), L, "hold", "split-low"),
    ((B, 10), (N, 3), L, "hold", "one-sided-held"),  # a lone analyst is not two of three
    ((N, 1), (S, 10), M, "hold", "one-sided-held"),
    ((N, 10), (N, 10), L, "hold", "no-lean"),
    ((N, 1), (N, 1), M, "hold", "no-lean"),
]

# the two rules beyond the committee's, each switched on: only their rows change
EXTRAS = [
    (SPLIT_LOW, (B, 7), (S, 4), L, "buy", "split-stronger"),
    (SPLIT_LOW, (B, 4), (S, 7), L, "sell", "split-stronger"),
    (SPLIT_LOW, (B, 9), (S, 9), L, "hold", "split-even"),
    (SPLIT_LOW, (B, 10), (N, 3), L, "hold", "one-sided-held"),
    (LONE, (B, 7), (S, 4), L, "hold", "split-low"),
    (LONE, (B, 6), (N, 3), L, "buy", "one-sided"),
    (LONE, (N, 1), (S, 6), L, "sell", "one-sided"),
    (LONE, (B, 5), (N, 3), L, "hold", "one-sided-weak"),
    (LONE, (N, 8), (S, 5), L, "hold", "one-sided-weak"),
    (LONE, (B, 8), (N, 3), M, "buy", "one-sided"),
    (LONE, (N, 2), (S, 10), M, "sell", "one-sided"),
    (LONE, (B, 7), (N, 3), M, "hold", "one-sided-weak"),
    (LONE, (B, 10), (N, 3), H, "hold", "high-risk"),
    (BOTH, (B, 7), (S, 4), L, "buy", "split-stronger"),
    (BOTH, (N, 1), (S, 6), L, "sell", "one-sided"),
    (BOTH, (N, 5), (N, 5), L, "hold", "no-lean"),
]


@pytest.mark.parametrize(("bull", "bear", "risk", "signal", "rule"), TABLE,
                         ids=[f"{r}-{b[0]}{b[1]}-{e[0]}{e[1]}-{k}" for b, e, k, _, r in TABLE])
def test_decision_table(bull, bear, risk, signal, rule):
    assert decide(*committee(bull, bear, risk)) == (signal, rule)
    assert decide(*committee(bull, bear, risk), COMMITTEE_RULES) == (signal, rule)


@pytest.mark.parametrize(("rules", "bull", "bear", "risk", "signal", "rule"), EXTRAS,
                         ids=[f"{'+'.join(x.extras)}-{r}-{b[0]}{b[1]}-{e[0]}{e[1]}-{k}"
                              for x, b, e, k, _, r in EXTRAS])
def test_the_rules_beyond_the_committees_change_only_their_rows(rules, bull, bear, risk, signal,
                                                                rule):
    assert decide(*committee(bull, bear, risk), rules) == (signal, rule)


def test_the_committees_rules_are_the_default_and_follow_no_lone_or_low_risk_split():
    assert JudgeRules() == COMMITTEE_RULES and COMMITTEE_RULES.extras == ()
    for s1 in range(1, 11):
        for s2 in range(1, 11):
            assert decide(*committee((B, s1), (S, s2), L)) == ("hold", "split-low")
            assert decide(*committee((B, s1), (N, s2), L))[0] == "hold"
            assert decide(*committee((N, s1), (S, s2), M))[0] == "hold"


def test_the_tables_reach_every_rule():
    assert {row[-1] for row in TABLE} | {row[-1] for row in EXTRAS} == set(RULES)


def test_strength_does_not_matter_when_they_agree_or_risk_is_high():
    for rules in (COMMITTEE_RULES, BOTH):
        for s in range(1, 11):
            assert decide(*committee((B, s), (B, 11 - s), M), rules) == ("buy", "agree")
            assert decide(*committee((B, s), (N, s), H), rules) == ("hold", "high-risk")


def test_the_judges_rules_text_lists_the_rules_in_force():
    default = rules_text()
    assert default.splitlines()[0] == "1. RISK: HIGH - hold, whatever the analysts say."
    assert "at least two of the three agree on the direction" in default
    assert "RISK is MEDIUM - follow the stronger argument" in default
    assert default.splitlines()[-1] == ("4. Otherwise - the analysts disagree at LOW risk, only "
                                        "one analyst leans, neither leans - hold: no two of the "
                                        "three agree.")
    assert "LOW or MEDIUM" not in default and "STRENGTH is 6" not in default
    assert "RISK is LOW or MEDIUM - follow the stronger" in rules_text(SPLIT_LOW)
    lone = rules_text(LONE)
    assert "follow it at LOW risk if its STRENGTH is 6 or more, at MEDIUM risk if it is 8" in lone
    assert lone.splitlines()[-1] == ("5. Otherwise - the analysts disagree at LOW risk, neither "
                                     "leans - hold: no two of the three agree.")
    assert rules_text(BOTH).splitlines()[-1] == \
        "5. Otherwise - neither leans - hold: no two of the three agree."


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
    "", "I am bullish.", "LEAN: BULLISH", "STRENGTH: 7",
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


@pytest.mark.parametrize("text", ["", "HIGH ATR", "RISK: LOW|MEDIUM|HIGH",
                                  "LEAN: BULLISH STRENGTH: 8", "RISK: EXTREME"])
def test_a_risk_view_without_its_line_is_an_error(text):
    with pytest.raises(VerdictError, match=r"^risk: .*RISK:"):
        parse_risk(text)


# ----------------------------------------------------------------------------- the judge
@pytest.mark.parametrize(("text", "signal", "comment"), [
    ('{"signal": "buy", "comment": "Trend and momentum agree."}', "buy",
     "Trend and momentum agree."),
    ('  {"signal":"SELL","comment":" weak. "}\n', "sell", "weak."),
    ('```json\n{"signal": "hold", "comment": "Too volatile."}\n```', "hold", "Too volatile."),
    ('```\n{"signal": "Hold", "comment": ""}```', "hold", ""),
    ('{"signal": "buy", "comment": "ok", "confidence": 0.7}', "buy", "ok"),  # others ignored
])
def test_read_judge(text, signal, comment):
    assert read_judge(text) == JudgeAnswer(signal, comment)
    assert read_judge(text).readable


@pytest.mark.parametrize(("text", "problem"), [
    ("", "the answer is empty"),
    (None, "the answer is empty"),
    ("SIGNAL: BUY\nCOMMENT: the old lines", "must start with '{'"),
    ('I would buy. {"signal": "buy", "comment": "x"}', "must start with '{'"),
    ('{"signal": "buy", "comment": "x"} and that is final', "text after the JSON object"),
    ('{"signal": "buy", "comment": "x"}\n{"signal": "sell", "comment": "y"}',
     "text after the JSON object"),
    ('{"signal": "buy", "comment": }', "not valid JSON"),
    ('```json\n{"signal": "buy", "comment": "x"}\n```\n```\n{}\n```', "inside one code fence"),
    ('["buy", "fine"]', "must start with '{'"),
    ('{"comment": "no signal"}', '"signal" must be "buy", "sell" or "hold" (it is missing)'),
    ('{"signal": "long", "comment": "x"}', "(it is 'long')"),
    ('{"signal": 1, "comment": "x"}', "(it is 1)"),
    ('{"signal": "buy"}', '"comment" must be text (missing)'),
    ('{"signal": "buy", "comment": 5}', '"comment" must be text (int, not text)'),
    ("{" + "x" * 5000 + "}", "5,002 characters long"),
])
def test_an_unreadable_judge_answer_names_its_problem(text, problem):
    read = read_judge(text)
    assert read.signal is None and not read.readable
    assert problem in read.problem


def test_the_judge_agreeing_keeps_its_comment():
    v = verdict(*committee((B, 7), (B, 5), L), read_judge('{"signal": "buy", "comment": "Up."}'))
    assert v == Verdict("buy", "agree", "buy", False, "Up.")


def test_the_judge_agreeing_without_a_comment_gets_the_tables_reason():
    v = verdict(*committee((B, 5), (S, 5), M), JudgeAnswer("hold", ""))
    assert (v.signal, v.rule, v.overruled) == ("hold", "split-even", False)
    assert "equal strength" in v.comment


@pytest.mark.parametrize(("bull", "bear", "risk", "judge", "signal", "label"), [
    ((B, 9), (B, 8), H, "buy", "hold", "HIGH RISK"),
    ((B, 7), (S, 4), L, "buy", "hold", RULES["split-low"]),  # the stronger: MEDIUM risk only
    ((B, 9), (N, 3), L, "buy", "hold", RULES["one-sided-held"]),
    ((B, 3), (S, 8), M, "hold", "sell", RULES["split-stronger"]),
    ((S, 7), (S, 7), L, "buy", "sell", RULES["agree"]),
])
def test_a_judge_breaking_the_rules_is_overruled(bull, bear, risk, judge, signal, label):
    v = verdict(*committee(bull, bear, risk), JudgeAnswer(judge, "My call."))
    assert (v.signal, v.judge_signal, v.overruled) == (signal, judge, True)
    assert v.comment == f"the judge said {judge}; the rules say {signal} ({label}). " \
                        "Judge's comment: My call."


def test_an_extra_rule_switched_on_is_the_tables_too():
    v = verdict(*committee((B, 7), (S, 4), L), JudgeAnswer("buy", "Bull is stronger."),
                SPLIT_LOW)
    assert (v.signal, v.rule, v.overruled, v.comment) == \
        ("buy", "split-stronger", False, "Bull is stronger.")


def test_an_unreadable_judge_leaves_the_table_to_decide():
    for text in ("I think we should buy, strongly.", "", None):
        v = verdict(*committee((S, 8), (S, 6), M), read_judge(text))
        assert (v.signal, v.rule, v.judge_signal, v.overruled) == ("sell", "agree", None, False)
        assert v.comment.startswith("the judge's answer could not be read (")
        assert v.comment.endswith("); the rules say sell (bull and bear agree)")


# ----------------------------------------------------------------------------- templates
BRIEF = "bars: 60, last close 101.5\nRSI (Wilder): 7 64.0, 14 61.2, 21 58.8"
FINAL = {"signal_bull": "LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>",
         "signal_bear": "LEAN: BULLISH|BEARISH|NEUTRAL STRENGTH: <1-10>",
         "signal_risk": "RISK: LOW|MEDIUM|HIGH"}
JSON_FORMAT = '{"signal": "buy"|"sell"|"hold", "comment": "<why, for the trader, at most 150 ' \
              'characters>"}'


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


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_the_templates_examples_parse_as_their_roles_answers():
    """The example final line each template shows is one the reader accepts."""
    prompts = Prompts()
    assert parse_opinion("bull", prompts.render("signal_bull", symbol="X", brief="")).lean is B
    assert parse_opinion("bear", prompts.render("signal_bear", symbol="X", brief="")).lean is S
    assert parse_risk(prompts.render("signal_risk", symbol="X", brief="")).level is M
    judge = prompts.render("signal_judge", symbol="X", brief="", bull="", bear="", risk="",
                           judge_rules=rules_text())
    assert read_judge(last_line(judge)).signal == "hold"
    single = prompts.render("signal_analyst", symbol="X", brief="")
    assert read_judge(last_line(single)).signal == "buy"


def test_the_judge_template_asks_for_the_json_object_under_the_rules_in_force():
    prompts = Prompts()
    assert set(prompts.fields("signal_judge")) == {"symbol", "brief", "bull", "bear", "risk",
                                                   "judge_rules"}
    text = prompts.render("signal_judge", symbol="ACME", brief=BRIEF, bull="BULL-OPINION",
                          bear="BEAR-OPINION", risk="RISK-OPINION", judge_rules=rules_text())
    for part in ("ACME", BRIEF, "BULL-OPINION", "BEAR-OPINION", "RISK-OPINION", rules_text(),
                 JSON_FORMAT, "one JSON object and nothing else"):
        assert part in text
    assert "SIGNAL:" not in text and "COMMENT:" not in text
    assert text.index("BULL-OPINION") < text.index("BEAR-OPINION") < text.index("RISK-OPINION")
    assert rules_text(LONE) in prompts.render("signal_judge", symbol="A", brief="", bull="",
                                              bear="", risk="", judge_rules=rules_text(LONE))
    with pytest.raises(PromptError, match="risk"):
        prompts.render("signal_judge", symbol="ACME", brief=BRIEF, bull="a", bear="b",
                       judge_rules="")


def test_the_repair_and_single_analyst_templates():
    prompts = Prompts()
    assert prompts.fields("signal_repair") == ["problem"]
    repair = prompts.render("signal_repair", problem="there is text after the JSON object")
    assert "could not be read: there is text after the JSON object." in repair
    assert JSON_FORMAT in repair
    assert prompts.fields("signal_analyst") == ["symbol", "brief"]
    single = prompts.render("signal_analyst", symbol="ACME", brief=BRIEF)
    assert BRIEF in single and JSON_FORMAT in single


def test_the_chat_template_renders_with_or_without_a_symbol():
    prompts = Prompts()
    assert set(prompts.fields("signal_chat")) == {"symbol", "brief", "judge_rules"}
    text = prompts.render("signal_chat", symbol="ACME", brief=BRIEF, judge_rules=rules_text())
    assert "ACME" in text and rules_text() in text
    empty = prompts.render("signal_chat", symbol="", brief="", judge_rules=rules_text())
    assert "{{" not in empty and "trader" in empty


# ----------------------------------------------------------------------------- offline analysts
# every key the brief has (arena.doors.brief), values read as a terminal's series would give them
UPTREND = {"bars": 250, "close": 120.0, "ma_5": 119.0, "ma_10": 118.0, "ma_20": 115.0,
           "ma_50": 110.0, "ma_100": 105.0, "ma_200": 100.0, "above_ma_20": True,
           "above_ma_50": True, "above_ma_200": True, "ema_9": 119.0, "ema_21": 116.0,
           "ema_55": 112.0, "rsi_7": 64.0, "rsi_14": 62.0, "rsi_21": 60.0, "stoch_k_14": 75.0,
           "stoch_d_14": 70.0, "atr_14": 1.8, "atr_21": 1.7, "std_10": 1.5, "std_20": 2.0,
           "bb_mid_20": 115.0, "bb_upper_20": 121.0, "bb_lower_20": 109.0,
           "bb_position_20": 0.8, "bb_zone_20": "upper", "momentum_5": 0.02,
           "momentum_10": 0.04, "momentum_20": 0.09, "candle_body": 1.0,
           "candle_upper_wick": 0.2, "candle_lower_wick": 0.3, "candle_direction": 1,
           "volume_ratio_20": 1.3}
DOWNTREND = {**UPTREND, "close": 80.0, "ma_20": 85.0, "ma_50": 90.0, "ma_200": 100.0,
             "above_ma_20": False, "above_ma_50": False, "above_ma_200": False, "ema_9": 81.0,
             "ema_21": 84.0, "ema_55": 88.0, "rsi_7": 36.0, "rsi_14": 38.0, "stoch_k_14": 25.0,
             "stoch_d_14": 30.0, "atr_14": 1.2, "bb_position_20": 0.15, "bb_zone_20": "lower",
             "momentum_5": -0.02, "momentum_10": -0.05, "momentum_20": -0.11,
             "candle_direction": -1, "volume_ratio_20": 1.1}
# an uptrend that tires: the close still above its averages, but RSI overbought, the stochastic
# turning down high up, a long upper wick at the upper band, five-bar momentum turned negative
TIRING = {**UPTREND, "rsi_7": 69.0, "rsi_14": 72.0, "stoch_k_14": 85.0, "stoch_d_14": 90.0,
          "candle_body": 0.5, "candle_upper_wick": 1.5, "candle_lower_wick": 0.1,
          "momentum_5": -0.01, "volume_ratio_20": 1.6, "atr_14": 3.0}
VOLATILE = {**UPTREND, "atr_14": 9.6, "std_20": 10.0, "bb_position_20": 1.2,
            "bb_zone_20": "above upper", "rsi_14": 76.0}


def offline(brief, symbol="ACME", rules=COMMITTEE_RULES):
    texts = rule_analysts(brief, symbol, rules)
    assert set(texts) == {"bull", "bear", "risk", "judge"}
    bull, bear = parse_opinion("bull", texts["bull"]), parse_opinion("bear", texts["bear"])
    risk = parse_risk(texts["risk"])
    return texts, bull, bear, risk, verdict(bull, bear, risk, read_judge(texts["judge"]), rules)


def test_each_side_lists_its_own_arguments():
    assert bullish_case(UPTREND) == [
        "the close 120 is above its 20-bar SMA 115", "the close 120 is above its 50-bar SMA 110",
        "the close 120 is above its 200-bar SMA 100",
        "the 20-, 50- and 200-bar SMAs are stacked upward (115, 110, 100)",
        "the 9-bar EMA 119 is above the 21-bar EMA 116",
        "5-bar momentum is positive (+2.00%)", "10-bar momentum is positive (+4.00%)",
        "20-bar momentum is positive (+9.00%)",
        "RSI(14) 62.0 is firm with room to rise (50 to 70)"]
    assert bearish_case(UPTREND) == []
    assert bearish_case(TIRING) == [
        "5-bar momentum is negative (-1.00%)",
        "5-bar momentum turned negative (-1.00%) inside a rising 20-bar one (+9.00%): the trend "
        "is tiring",
        "RSI(14) 72.0 is overbought (above 70)",
        "the stochastic turns down from overbought (%K 85.0 below %D 90.0, above 80)",
        "rejected at the upper Bollinger band (the close sits upper, a long upper wick)",
        "an upper wick of 1.5 against a body of 0.5: sellers capped the high"]
    assert len(bullish_case(TIRING)) == 8  # no 5-bar momentum, no RSI 50-70; volume 1.6x up
    assert "volume is 1.6x its 20-bar mean on an up candle" in bullish_case(TIRING)
    assert len(bearish_case(DOWNTREND)) == 9 and bullish_case(DOWNTREND) == []
    assert "RSI(14) 38.0 is weak and RSI(7) 36.0 falls below it" in bearish_case(DOWNTREND)
    assert "the close 80 is below the 55-bar EMA 88" in bearish_case(DOWNTREND)


def test_the_reversal_arguments_of_each_side():
    bounce = {**DOWNTREND, "candle_direction": 1, "candle_body": 0.4, "candle_lower_wick": 1.0,
              "rsi_7": 41.0, "rsi_14": 35.0, "stoch_k_14": 18.0, "stoch_d_14": 12.0,
              "volume_ratio_20": 2.0}
    assert bullish_case(bounce) == [
        "RSI(7) 41.0 is above RSI(14) 35.0, under 40: turning up out of oversold",
        "the stochastic turns up from oversold (%K 18.0 above %D 12.0, under 20)",
        "an up candle off the lower Bollinger band (the close sits lower)",
        "volume is 2.0x its 20-bar mean on an up candle",
        "a lower wick of 1 against a body of 0.4: buyers rejected the lows"]
    dump = {**UPTREND, "candle_direction": -1, "volume_ratio_20": 1.5}
    assert "volume is 1.5x its 20-bar mean on a down candle" in bearish_case(dump)
    assert "rejected at the upper Bollinger band (the close sits upper, a down candle)" in \
        bearish_case(dump)


@pytest.mark.parametrize(("mine", "theirs", "lean", "strength"), [
    (9, 0, B, 9), (5, 10, B, 5), (5, 11, S, 10), (4, 9, S, 9), (2, 4, B, 2), (1, 2, N, 1),
    (1, 3, S, 3), (0, 1, N, 1), (0, 0, N, 1), (12, 3, B, 10)])
def test_an_offline_analyst_leans_its_own_way_until_outnumbered_twice(mine, theirs, lean,
                                                                       strength):
    assert lean_of(mine, theirs, B, S) == (lean, strength)


def test_a_clear_uptrend_buys_with_both_agreeing():
    texts, bull, bear, risk, v = offline(UPTREND)
    assert (bull.lean, bull.strength, bear.lean, bear.strength) == (B, 9, B, 9)  # bear concedes
    assert risk.level is L  # ATR 1.5% of the close
    assert (v.signal, v.rule, v.judge_signal, v.overruled) == ("buy", "agree", "buy", False)
    assert "the close 120 is above its 200-bar SMA 100." in texts["bull"]
    assert "I concede it" in texts["bear"]


def test_a_clear_downtrend_sells_with_both_agreeing():
    texts, bull, bear, risk, v = offline(DOWNTREND)
    assert (bull.lean, bull.strength, bear.lean, bear.strength) == (S, 9, S, 9)
    assert risk.level is L
    assert (v.signal, v.rule, v.judge_signal, v.overruled) == ("sell", "agree", "sell", False)
    assert "below its 50-bar SMA" in texts["bear"]


def test_a_tiring_uptrend_splits_the_analysts():
    """Eight bullish arguments against six bearish ones: each argues its own side; at MEDIUM
    risk the stronger (the bull) wins, at LOW risk the committee's rules hold."""
    texts, bull, bear, risk, v = offline(TIRING)
    assert (bull.lean, bull.strength, bear.lean, bear.strength) == (B, 8, S, 6)
    assert risk.level is M  # ATR 3.0 is 2.5% of the close
    assert (v.signal, v.rule, v.overruled) == ("buy", "split-stronger", False)
    assert texts["bear"].splitlines()[-2:] == ["Honestly, the data lean bearish.",
                                               "LEAN: BEARISH STRENGTH: 6"]
    low = {**TIRING, "atr_14": 1.8}
    assert offline(low)[4].rule == "split-low" and offline(low)[4].signal == "hold"
    assert offline(low, rules=SPLIT_LOW)[4].signal == "buy"


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
    brief = {**UPTREND, "close": 120.0, "atr_14": atr, "std_20": std}
    assert parse_risk(rule_analysts(brief, "X")["risk"]).level is level


def test_each_offline_answer_ends_with_its_line_and_the_judge_answers_json():
    texts = rule_analysts(UPTREND, "ACME")
    assert texts["bull"].splitlines()[-1] == "LEAN: BULLISH STRENGTH: 9"
    assert texts["bear"].splitlines()[-1] == "LEAN: BULLISH STRENGTH: 9"
    assert texts["risk"].splitlines()[-1] == "RISK: LOW"
    assert json.loads(texts["judge"]) == {
        "signal": "buy",
        "comment": "Buy: the bull and the bear agree (bull BULLISH 9, bear BULLISH 9, risk LOW)."}


def test_the_offline_analysts_survive_missing_values_and_are_deterministic():
    _texts, bull, bear, risk, v = offline({})
    assert (bull.lean, bear.lean, risk.level) == (N, N, M)
    assert (v.signal, v.rule, v.overruled) == ("hold", "no-lean", False)
    assert offline(dict.fromkeys(UPTREND))[4] == v
    nan = {**UPTREND, "rsi_14": math.nan, "ma_20": None, "bb_zone_20": None}
    assert rule_analysts(nan, "ACME") == rule_analysts(dict(nan), "ACME")
    assert len(bullish_case(nan)) == 6  # no 20-bar SMA, no stack, no RSI
