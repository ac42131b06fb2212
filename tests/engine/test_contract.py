"""The decision contract's parser: what is accepted, what is refused and why."""

import json

import pytest

from arena.engine.contract import MAX_ANSWER_CHARS, parse_answer

GOOD = {
    "reasoning": "Risk-on in crypto; stay out of stocks.",
    "market_context": {"overall_sentiment": "bullish", "key_factors": ["ETF flows"]},
    "decisions": [{"action": "open_long", "symbol": "ETH", "percent_of_equity": 20,
                   "invalidation_price": 2800.5, "confidence": 0.85, "thesis": "t",
                   "invalidation": "i", "rationale": "r"}],
}
TEXT = json.dumps(GOOD)


@pytest.mark.parametrize("raw", [
    TEXT,
    f"  {TEXT}\n",
    f"```json\n{TEXT}\n```",
    f"```\n{TEXT}\n```",
    json.dumps(GOOD, indent=2),
])
def test_accepted_forms(raw):
    parsed = parse_answer(raw)
    assert parsed.ok
    d = parsed.answer.decisions[0]
    assert (d.action, d.symbol, d.percent_of_equity, d.confidence) == ("open_long", "ETH", 20, 0.85)
    assert parsed.answer.market_context.overall_sentiment == "bullish"


@pytest.mark.parametrize("raw,reason", [
    ("", "empty"),
    (f"Here is my decision:\n{TEXT}", "start with '{'"),
    (f"{TEXT}\nHope this helps!", "text after the JSON"),
    (TEXT + TEXT, "text after the JSON"),
    (f"```json\n{TEXT}\n```\n```json\n{TEXT}\n```", "one markdown code fence"),
    (f"```json\n{TEXT}\n``` and some prose", "one markdown code fence"),
    (TEXT.replace("0.85", "NaN"), "NaN"),
    (TEXT.replace("0.85", "Infinity"), "Infinity"),
    (TEXT.replace("0.85", "1e999"), "finite"),
    (TEXT.replace("0.85", '"0.85"'), 'expected a number, got the string "0.85"'),
    (TEXT.replace('"ETH"', "42"), "decisions[0].symbol"),
    (TEXT.replace('"decisions": [', '"decisions": {"x": ').replace("}]}", "}}}"), "decisions"),
    (json.dumps({"decisions": []}), "reasoning: required field is missing"),
    (json.dumps([GOOD]), "start with '{'"),
    ("{" + '"reasoning": "r", ' * 3, "not valid JSON"),
    ("{" * 100_000, "not valid JSON"),
    ("x" * (MAX_ANSWER_CHARS + 1), "characters long"),
    (TEXT.replace("0.85", "true"), "valid number"),
    (TEXT.replace('"bullish"', '"euphoric"'), "overall_sentiment"),
])
def test_refused_forms_name_the_problem(raw, reason):
    parsed = parse_answer(raw)
    assert not parsed.ok
    assert reason in parsed.reason


def test_ten_megabytes_of_text_is_a_failure_not_a_crash():
    parsed = parse_answer("{" + " " * 10_000_000 + "}")
    assert not parsed.ok and "10,000,002 characters" in parsed.reason


def test_unknown_fields_are_ignored_and_recorded():
    payload = {**GOOD, "mood": "great", "decisions": [{**GOOD["decisions"][0], "leverage": 5}]}
    parsed = parse_answer(json.dumps(payload))
    assert parsed.ok
    assert parsed.ignored_fields == ("answer.mood", "decisions[0].leverage")


def test_rules_are_not_syntax():
    """Out-of-range values and unknown actions parse; the validator rejects them one by one."""
    payload = {"reasoning": "r", "decisions": [{"action": "buy", "symbol": "FOO",
                                                "confidence": 0.1, "percent_of_equity": 500}]}
    parsed = parse_answer(json.dumps(payload))
    assert parsed.ok and parsed.answer.decisions[0].action == "buy"


def test_not_text_is_a_failure():
    assert not parse_answer(None).ok  # type: ignore[arg-type]


def test_a_lone_surrogate_is_refused_before_it_reaches_a_log():
    parsed = parse_answer(TEXT.replace('"ETH"', '"\ud800"'))
    assert not parsed.ok and "not valid Unicode" in parsed.reason
