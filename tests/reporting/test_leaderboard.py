"""The leaderboard's columns, defined once (arena.reporting.leaderboard): the report's table, the
terminal's rows and the table artifact's rows, pinned on a board written by hand."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from arena.reporting.leaderboard import (
    LEADERBOARD,
    TERMINAL,
    _json_value,
    artifact_rows,
    sorted_board,
    terminal_rows,
)
from arena.reporting.season import season_report
from tests.reporting.tiny_marts import tiny_marts

NAN = float("nan")
T0 = pd.Timestamp("2026-10-01 16:00", tz="UTC")
KEYS = ["place", "contestant", "total_return", "zero_skill_percentile", "rank_score",
        "skill_percentile", "sharpe",
        "max_drawdown", "round_trips", "win_rate", "fills", "excess_vs_btc", "excess_vs_spy",
        "excess_vs_universe", "cost_usd"]


@pytest.fixture
def board() -> pd.DataFrame:
    """Four contestants, not in order: two share place 2, one has no Sharpe and no cost, one
    a Sharpe and a return that round to zero from below."""
    return pd.DataFrame({
        "place": [3, 2, 1, 2],
        "contestant": ["zeta", "gamma", "alpha", "beta"],
        "role": ["contestant"] * 4,
        "market": ["SYNTHETIC"] * 4,
        "total_return": [-0.00004, 0.0123, 0.0523, 0.0123],
        "zero_skill_percentile": [0.5, 0.61, 0.797, 0.61],
        "rank_score": [0.30103, 0.4089, 0.6925, 0.4089],
        "skill_percentile": [NAN, 0.25, 0.9, 0.625],  # zeta opened no position: none
        "sharpe": [-0.001, 1.5, NAN, 2.25],
        "max_drawdown": [0.0, 0.0345, 0.0123, 0.01],
        "round_trips": [0, 2, 1, 3],
        "win_rate": [NAN, 0.5, 1.0, 0.6666],
        "fills": [0, 4, 2, 7],
        "excess_vs_btc": [-0.02, 0.01, 0.04, 0.01],
        "excess_vs_spy": [-0.01, 0.0, 0.05, 0.0],
        "excess_vs_universe": [-0.015, 0.005, 0.045, 0.005],
        "cost_usd": [0.0, 0.01234, NAN, 1.5],
        "final_equity": [9_999.6, 10_123.0, 10_523.0, 10_123.0],  # not a leaderboard column
        "first_cycle_at": [T0] * 4,
    })


def test_the_columns_are_the_reports_in_order_and_the_terminal_shows_ten():
    assert [c.key for c in LEADERBOARD] == KEYS
    assert [c.header for c in LEADERBOARD] == [
        "#", "contestant", "return", "luck pct", "rank score", "skill pct", "Sharpe", "max DD",
        "closed trips", "win rate", "fills", "vs BTC", "vs SPY", "vs universe", "calls $"]
    assert TERMINAL == ("place", "contestant", "total_return", "zero_skill_percentile",
                        "rank_score", "skill_percentile", "sharpe", "max_drawdown", "fills",
                        "cost_usd")


def test_the_board_is_ordered_by_place_then_contestant(board):
    ordered = sorted_board(board)
    assert list(ordered["contestant"]) == ["alpha", "beta", "gamma", "zeta"]
    assert list(ordered.index) == [0, 1, 2, 3]
    assert list(board["contestant"]) == ["zeta", "gamma", "alpha", "beta"]  # not sorted in place


def test_the_terminal_writes_each_cell_the_reports_way(board):
    columns, rows = terminal_rows(board)
    assert [c.key for c in columns] == list(TERMINAL)
    assert [c.header for c in columns] == ["#", "contestant", "return", "luck pct", "rank score",
                                           "skill pct", "Sharpe", "max DD", "fills", "calls $"]
    assert rows == [
        ["1", "alpha", "+5.23%", "79.7%", "0.69", "90.0%", "–", "1.23%", "2", "–"],
        ["2", "beta", "+1.23%", "61.0%", "0.41", "62.5%", "2.25", "1.00%", "7", "$1.5000"],
        ["2", "gamma", "+1.23%", "61.0%", "0.41", "25.0%", "1.50", "3.45%", "4", "$0.0123"],
        ["3", "zeta", "0.00%", "50.0%", "0.30", "–", "0.00", "0.00%", "0", "$0.0000"],
    ]
    assert not any(re.fullmatch(r"[-+]0\.0+%?", cell) for row in rows for cell in row)


def test_the_artifact_rows_are_the_boards_values_json_safe(board):
    rows = artifact_rows(board)
    assert [list(r) for r in rows] == [["market", "role", *KEYS]] * 4
    text = json.dumps(rows, allow_nan=False)  # no NaN, no numpy scalar, no Timestamp
    assert json.loads(text) == rows
    assert [r["contestant"] for r in rows] == ["alpha", "beta", "gamma", "zeta"]
    alpha, beta, gamma, zeta = rows
    assert alpha == {"market": "SYNTHETIC", "role": "contestant", "place": 1, "contestant": "alpha",
                     "total_return": 0.0523, "zero_skill_percentile": 0.797,
                     "rank_score": 0.6925, "skill_percentile": 0.9, "sharpe": None,
                     "max_drawdown": 0.0123,
                     "round_trips": 1, "win_rate": 1.0, "fills": 2, "excess_vs_btc": 0.04,
                     "excess_vs_spy": 0.05, "excess_vs_universe": 0.045, "cost_usd": None}
    assert zeta["win_rate"] is None and zeta["cost_usd"] == 0.0 and zeta["sharpe"] == -0.001
    assert zeta["skill_percentile"] is None
    assert (beta["place"], gamma["place"]) == (2, 2) and type(beta["place"]) is int
    assert type(beta["sharpe"]) is float and type(beta["fills"]) is int
    by_name = board.set_index("contestant")
    for row in rows:
        for key in KEYS[2:]:
            value = by_name.loc[row["contestant"], key]
            assert row[key] == (None if pd.isna(value) else value), (row["contestant"], key)


def test_an_artifact_row_refuses_a_board_without_a_leaderboard_column(board):
    with pytest.raises(KeyError, match="cost_usd"):
        artifact_rows(board.drop(columns="cost_usd"))


@pytest.mark.parametrize(("value", "json_value"), [
    (np.int64(7), 7), (np.float64(0.25), 0.25), (np.bool_(True), True), ("x", "x"),
    (pd.Timestamp("2026-10-01 16:00", tz="UTC"), "2026-10-01T16:00:00+00:00"),
    (pd.NaT, None), (pd.NA, None), (None, None), (NAN, None), (float("inf"), None),
    (np.float32("nan"), None),
])
def test_an_artifact_value_is_a_json_value(value, json_value):
    out = _json_value(value)
    assert out == json_value and type(out) is type(json_value)


class _Headers(HTMLParser):
    """The header cells of each table under ``<section id="leaderboard">``, by its caption."""

    def __init__(self) -> None:
        super().__init__()
        self.section, self.cell, self.caption, self.headers = None, None, "", {}

    def handle_starttag(self, tag, attrs):
        if tag == "section":
            self.section = dict(attrs).get("id")
        if self.section == "leaderboard" and tag in ("caption", "th"):
            self.cell = tag
            if tag == "caption":
                self.caption = ""
            else:
                self.headers.setdefault(self.caption, []).append("")

    def handle_endtag(self, tag):
        self.cell = None if tag == self.cell else self.cell

    def handle_data(self, data):
        if self.cell == "caption":
            self.caption += data
        elif self.cell == "th":
            self.headers[self.caption][-1] += data


def _report_headers(html: str) -> dict[str, list[str]]:
    parser = _Headers()
    parser.feed(html)
    return parser.headers


RULERS = "Rulers: the house rules, the yardstick beside the contestants (not ranked)"


def test_the_reports_leaderboard_is_these_columns():
    """The contestants' table has every column; the rulers' has no place and names its rows
    rulers."""
    headers = [c.header for c in LEADERBOARD]
    assert _report_headers(season_report(tiny_marts())) == {
        "Contestants": headers, RULERS: ["ruler", *headers[2:]]}
    # a contestant that entered late: the report says so in an entry column after the name
    late = _report_headers(season_report(tiny_marts(late=True)))
    assert late == {"Contestants": ["#", "contestant", "entry", *headers[2:]],
                    RULERS: ["ruler", "entry", *headers[2:]]}
