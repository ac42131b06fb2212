import json

from arena.agents.reverse import mirror_answer
from arena.engine.contract import parse_answer

PRICES = {"ETH": 2_000.0, "SOL": 100.0}


def test_mirrors_sides_and_reflects_levels():
    raw = json.dumps({"reasoning": "bullish", "decisions": [
        {"action": "open_long", "symbol": "ETH", "percent_of_equity": 20, "confidence": 0.9,
         "invalidation_price": 1_900, "thesis": "t", "invalidation": "i"},
        {"action": "hold", "symbol": "SOL", "invalidation_price": 120},
        {"action": "close", "symbol": "ADA"}]})
    mirrored = parse_answer(mirror_answer(raw, PRICES)).answer
    eth, sol, ada = mirrored.decisions
    assert (eth.action, eth.invalidation_price, eth.percent_of_equity) == ("open_short", 2_100, 20)
    assert (sol.action, sol.invalidation_price) == ("hold", 80)
    assert ada.action == "close" and mirrored.reasoning.startswith("Mirror image")


def test_mirroring_twice_is_the_identity():
    raw = json.dumps({"reasoning": "r", "decisions": [
        {"action": "open_short", "symbol": "SOL", "percent_of_equity": 30, "confidence": 0.85,
         "invalidation_price": 110, "thesis": "t", "invalidation": "i"}]})
    twice = parse_answer(mirror_answer(mirror_answer(raw, PRICES), PRICES)).answer
    assert twice.decisions == parse_answer(raw).answer.decisions


def test_an_unparseable_answer_passes_through():
    assert mirror_answer("no idea", PRICES) == "no idea"


def test_a_mirrored_level_is_rounded_once_at_the_source():
    """The cycle price a level is mirrored around may differ in its last bits between CPU
    families (NumPy's vectorised exp): the level written into the answer's text is rounded to
    8 decimals, so the same season writes the same text on any machine."""
    raw = json.dumps({"reasoning": "r", "decisions": [
        {"action": "open_long", "symbol": "ETH", "percent_of_equity": 20, "confidence": 0.9,
         "invalidation_price": 1_900.123456789, "thesis": "t", "invalidation": "i"}]})
    for price in (2_000.0000000000002, 1_999.9999999999998):  # the same price, last bits apart
        text = mirror_answer(raw, {"ETH": price})
        assert '"invalidation_price": 2099.87654321' in text
    # a level the mirror would put below zero goes just above it, never to zero
    deep = json.dumps({"reasoning": "r", "decisions": [
        {"action": "open_short", "symbol": "SOL", "percent_of_equity": 20, "confidence": 0.9,
         "invalidation_price": 0.5, "thesis": "t", "invalidation": "i"}]})
    [sol] = parse_answer(mirror_answer(deep, {"SOL": 0.0001})).answer.decisions
    assert sol.action == "open_long" and sol.invalidation_price == 1e-8
