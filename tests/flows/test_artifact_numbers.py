"""A table artifact's numbers are rounded as the reports write them (the season flow's and the
cycle flow's tests read real artifacts back from the server)."""

from __future__ import annotations

import math

from arena.flows.artifacts import decimals, rounded, rounded_rows


def test_each_kind_keeps_the_decimals_the_report_shows():
    assert {k: decimals(k) for k in ("return", "share", "drawdown", "score", "usd", "money",
                                     "int", "seconds", "num", "text")} == {
        "return": 4, "share": 3, "drawdown": 4, "score": 2, "usd": 4, "money": 2, "int": 0,
        "seconds": 2, "num": None, "text": None}


def test_a_number_is_rounded_and_nothing_else_is_touched():
    assert rounded(-0.0038222065569272212, "return") == -0.0038
    assert rounded(0.5376020021010439, "score") == 0.54
    assert rounded(0.7100000000000001, "share") == 0.71
    assert repr(rounded(-0.00001, "return")) == "0.0"  # never "-0.0"
    assert rounded(12.6, "int") == 13 and isinstance(rounded(12.6, "int"), int)
    assert rounded(None, "return") is None and rounded(True, "score") is True
    assert rounded("ETH", "return") == "ETH" and rounded(math.nan, "return") is None
    rows = [{"contestant": "a", "cost_usd": 0.000123456, "latency_s": 1.23456, "fills": 2}]
    assert rounded_rows(rows, {"cost_usd": "usd", "latency_s": "seconds"}) == [
        {"contestant": "a", "cost_usd": 0.0001, "latency_s": 1.23, "fills": 2}]
