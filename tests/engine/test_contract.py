"""The decision contract's parser: what is accepted, what is refused and why.

Only an answer that is not one JSON object with a ``decisions`` list fails as a whole; a bad
field inside one decision fails that decision alone; a missing reasoning is only noted.
"""

import json

import pytest

from arena.core.text import is_storable
from arena.engine.contract import (
    MAX_ANSWER_CHARS,
    Answer,
    Decision,
    MalformedDecision,
    parse_answer,
)

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
    (TEXT.replace('"decisions": [', '"decisions": {"x": ').replace("}]}", "}}}"),
     '"decisions" must be a list, not an object'),
    (json.dumps({"reasoning": "r"}), 'no "decisions" list'),
    (json.dumps({"reasoning": "r", "decisions": None}), '"decisions" must be a list, not null'),
    (json.dumps([GOOD]), "start with '{'"),
    ("{" + '"reasoning": "r", ' * 3, "not valid JSON"),
    ("{" * 100_000, "not valid JSON"),
    ("x" * (MAX_ANSWER_CHARS + 1), "characters long"),
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


@pytest.mark.parametrize("field,raw_value,code,words", [
    ("confidence", '"0.85"', "bad_field_type", 'confidence must be a number, not the string "0.85"'),
    ("confidence", "NaN", "bad_field_type", "confidence must be a finite number, not NaN"),
    ("confidence", "Infinity", "bad_field_type", "confidence must be a finite number, not Infinity"),
    ("confidence", "1e999", "bad_field_type", "confidence must be a finite number, not Infinity"),
    ("confidence", "true", "bad_field_type", "confidence must be a number, not a boolean true"),
    ("percent_of_equity", '"20"', "bad_field_type", 'percent_of_equity must be a number'),
    ("symbol", "42", "bad_field_type", "symbol must be text, not a number 42"),
    ("thesis", '["a", "b"]', "bad_field_type", "thesis must be text, not a list"),
], ids=lambda v: str(v)[:20])
def test_a_wrongly_typed_field_fails_its_decision_alone(field, raw_value, code, words):
    bad = json.dumps({**GOOD["decisions"][0], "symbol": "SOL", field: "@@"}).replace('"@@"', raw_value)
    raw = json.dumps({**GOOD, "decisions": [GOOD["decisions"][0], "@@"]}).replace('"@@"', bad)
    parsed = parse_answer(raw)
    assert parsed.ok, parsed
    good, malformed = parsed.answer.decisions
    assert isinstance(good, Decision) and good.symbol == "ETH"
    assert isinstance(malformed, MalformedDecision)
    assert (malformed.code, malformed.fields) == (code, (field,))
    assert words in malformed.problem
    assert malformed.action == "open_long" and malformed.symbol == ("" if field == "symbol" else "SOL")


def test_missing_action_and_symbol_are_missing_fields_named_together():
    parsed = parse_answer(json.dumps({"decisions": [{"percent_of_position": "x"}]}))
    [d] = parsed.answer.decisions
    assert d.code == "missing_field" and d.fields == ("action", "symbol", "percent_of_position")
    assert "action is missing" in d.problem and "symbol is missing" in d.problem


@pytest.mark.parametrize("item,kind", [("close ETH", "text"), (None, "null"), ([1], "a list"),
                                       (3, "a number")])
def test_a_decision_that_is_not_an_object_fails_alone(item, kind):
    parsed = parse_answer(json.dumps({"decisions": [item, GOOD["decisions"][0]]}))
    bad, good = parsed.answer.decisions
    assert bad.code == "bad_field_type" and f"decision 0 is {kind}, not an object" in bad.problem
    assert bad.action == bad.symbol == "" and bad.as_json() == item
    assert isinstance(good, Decision)


def test_missing_reasoning_and_market_context_are_noted_not_fatal():
    parsed = parse_answer(json.dumps({"decisions": []}))
    assert parsed.ok and parsed.answer.decisions == () and parsed.answer.reasoning is None
    assert parsed.notes == ("reasoning is missing", "market_context is missing")


def test_a_malformed_market_context_is_noted_and_ignored():
    parsed = parse_answer(TEXT.replace('"bullish"', '"euphoric"'))
    assert parsed.ok and parsed.answer.market_context is None
    assert any("overall_sentiment" in n and "ignored" in n for n in parsed.notes)
    parsed = parse_answer(json.dumps({**GOOD, "reasoning": 5, "market_context": "calm"}))
    assert parsed.answer.reasoning is None and parsed.answer.market_context is None
    assert parsed.notes == ("reasoning is a number, not text: ignored",
                            "market_context is text, not an object: ignored")


def test_an_escaped_lone_surrogate_is_cleaned_and_noted():
    """Valid ASCII JSON whose thesis holds half an emoji: the decision stands, its text is
    storable (U+FFFD in place of the half), and the note names the field."""
    raw = TEXT.replace('"thesis": "t"', '"thesis": "to the moon \\ud83d"')
    assert "\\ud83d" in raw and raw.isascii()
    parsed = parse_answer(raw)
    assert parsed.ok
    [d] = parsed.answer.decisions
    assert d.thesis == "to the moon \ufffd" and is_storable(d.thesis)
    assert any("decisions[0].thesis" in n and "U+FFFD" in n for n in parsed.notes)


def test_a_raw_lone_surrogate_is_cleaned_and_a_symbol_holding_one_is_unknown():
    """What an HTTP client hands over when the model sent half an emoji: the character itself."""
    raw = TEXT.replace('"ETH"', '"ETH\ud83d"').replace('"r"}', '"r \ud83d"}')
    assert not is_storable(raw)
    parsed = parse_answer(raw)
    assert parsed.ok
    [d] = parsed.answer.decisions
    assert d.symbol == "ETH\ufffd" and d.rationale == "r \ufffd"
    assert any("decisions[0].symbol" in n for n in parsed.notes)


def test_an_escaped_surrogate_pair_is_the_emoji_it_encodes():
    parsed = parse_answer(TEXT.replace('"thesis": "t"', '"thesis": "\\ud83d\\ude80"'))
    assert parsed.answer.decisions[0].thesis == "\U0001F680" and parsed.notes == ()


def test_answer_of_round_trips_through_as_json():
    payload = {"reasoning": "r", "decisions": [GOOD["decisions"][0], {"action": "hold"}]}
    answer = Answer.of(payload)
    again = Answer.of(answer.as_json())
    assert again == answer
    with pytest.raises(ValueError, match="decisions"):
        Answer.of({"reasoning": "r"})


@pytest.mark.parametrize("levels", [29, 40, 600, 5_000])
def test_deep_nesting_fails_the_answer_and_never_raises(levels):
    """Regression: 600 levels of lists in one field (1.2 KB) once raised RecursionError from the
    parser, so the contestant's cycle was lost instead of repaired."""
    raw = ('{"decisions": [{"action": "hold", "symbol": "ETH", "x": ' + "[" * levels
           + "]" * levels + "}]}")
    parsed = parse_answer(raw)
    if levels == 29:  # 3 + 29 = 32 levels: the limit itself is fine
        assert parsed.ok and parsed.ignored_fields == ("decisions[0].x",)
    else:
        assert not parsed.ok and "nested" in parsed.reason


def test_a_number_too_large_is_named():
    parsed = parse_answer(json.dumps({"decisions": [{"action": "add", "symbol": "ETH",
                                                     "confidence": 10**400}]}))
    [d] = parsed.answer.decisions
    assert d.code == "bad_field_type" and "confidence is a number too large" in d.problem
