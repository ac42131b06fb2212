"""The season report leaves a rule without enough history out of the heatmap and the luck
table's best rule, and says why in the rules section (issue 27, item 1)."""

from __future__ import annotations

import re

import pandas as pd

from arena.reporting.season import insufficient_rules, season_report
from tests.reporting.tiny_marts import NAN, tiny_marts


def _marts() -> dict[str, pd.DataFrame]:
    """ETH with buy and hold scored and two rules its 60 bars before the season do not cover:
    the 200-day average (199 bars) and 12-month momentum (365)."""
    marts = tiny_marts()
    marts["reference_rules"] = pd.DataFrame({
        "symbol": ["ETH"] * 3, "rule": ["buy_and_hold", "above_ma200", "absolute_momentum_12m"],
        "kind": ["rule"] * 3, "total_return": [0.05, NAN, NAN], "turnover": [1.0, NAN, NAN],
        "fees": [0.001, NAN, NAN], "percentile": [0.8, NAN, NAN],
        "rank_score": [0.7, NAN, NAN], "rank_among_rules": [1.0, NAN, NAN],
        "beats_luck_ceiling": [False, None, None],
        "status": ["scored", "insufficient_history", "insufficient_history"],
        "history_bars": [60, 60, 60], "needed_bars": [0, 199, 365]})
    return marts


def test_the_rules_without_history_are_listed_with_what_they_need():
    assert insufficient_rules(_marts()["reference_rules"]) == [
        {"rule": "above_ma200", "assets": 1, "symbols": "ETH", "needed": 199, "fewest": 60},
        {"rule": "absolute_momentum_12m", "assets": 1, "symbols": "ETH", "needed": 365,
         "fewest": 60}]


def test_the_report_says_why_and_draws_no_cell_for_them():
    html = season_report(_marts())
    rules = html[html.index("Reference rules: rank score per asset and rule"):]
    heatmap = rules[:rules.index("</svg>")]
    assert "buy_and_hold" in heatmap
    assert "above_ma200" not in heatmap and "absolute_momentum_12m" not in heatmap
    text = re.sub(r"<[^>]+>", " ", rules)
    text = re.sub(r"\s+", " ", text)
    assert "marked insufficient history, left out of the ranks and the heatmap" in text
    assert "above_ma200 on 1 asset (ETH): needs 199 bars, the shortest history has 60" in text
    assert "insufficient: 60 bars before the season, the rule needs 365" in text


def test_a_rule_without_history_is_never_the_best_rule():
    marts = _marts()
    marts["reference_rules"].loc[1, "total_return"] = 0.5  # even a stray number is not read
    html = season_report(marts)
    luck = html[html.index("best rule"):]
    row = luck[luck.index("<td>ETH</td>"):]
    row = row[:row.index("</tr>")]
    assert "buy_and_hold" in row and "above_ma200" not in row
