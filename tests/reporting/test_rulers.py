"""Rulers apart from rivals, on boards written by hand: the house rules keep their rows, but the
leaderboard's order, the terminal, the table artifact and the season report list the contestants
first, ranked among themselves, and the rulers apart, labelled and not ranked; "the best" is the
best contestant even when a ruler did better, and a season of house rules only says it has no
contestant. ``tests/pipeline/test_season_marts.py`` checks the same on marts dbt built."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from arena.cli._render import print_leaderboard
from arena.reporting.leaderboard import (
    artifact_rows,
    bands,
    best_contestant,
    best_ruler,
    json_rows,
    sorted_board,
    summary_line,
    terminal_bands,
)
from arena.reporting.season import ReportError, season_report
from tests.reporting.tiny_marts import tiny_marts

NAN = float("nan")


@pytest.fixture
def board() -> pd.DataFrame:
    """Three contestants (two share place 2) and three rulers, not in order; the ruler
    equal-weight did better than every contestant, as the mart gives it: a ruler's place null."""
    return pd.DataFrame({
        "place": [None, 2, None, 1, 2, None],
        "contestant": ["momentum", "gamma", "equal-weight", "alpha", "beta", "random"],
        "role": ["ruler", "contestant", "ruler", "contestant", "contestant", "ruler"],
        "market": ["SYNTHETIC"] * 6,
        "total_return": [-0.0146, -0.005, 0.0523, 0.01, -0.005, 0.001],
        "zero_skill_percentile": [0.436, 0.48, 0.797, 0.61, 0.48, 0.52],
        "rank_score": [0.249, 0.284, 0.6925, 0.4089, 0.284, 0.3188],
        "skill_percentile": [0.5, NAN, 0.9, 0.75, 0.25, 0.5],  # gamma opened no position
        "sharpe": [-0.39, NAN, 4.83, 1.5, -0.2, 0.1],
        "max_drawdown": [0.0575, 0.01, 0.0224, 0.02, 0.015, 0.03],
        "round_trips": [3, 0, 0, 1, 2, 1],
        "win_rate": [0.3333, NAN, NAN, 1.0, 0.5, 0.0],
        "fills": [24, 0, 9, 2, 4, 6],
        "excess_vs_btc": [-0.02, -0.01, 0.04, 0.005, -0.01, 0.0],
        "excess_vs_spy": [-0.01, 0.0, 0.05, 0.01, 0.0, 0.001],
        "excess_vs_universe": [-0.015, -0.005, 0.045, 0.005, -0.005, 0.0],
        "cost_usd": [0.0, 0.5, 0.0, 1.25, NAN, 0.0],
    })


def test_the_contestants_come_first_ranked_and_the_rulers_apart_by_return(board):
    ordered = sorted_board(board)
    assert list(ordered["contestant"]) == ["alpha", "beta", "gamma",
                                           "equal-weight", "random", "momentum"]
    assert list(ordered["role"]) == ["contestant"] * 3 + ["ruler"] * 3
    assert ordered["place"].tolist()[:3] == [1, 2, 2] and ordered["place"].iloc[3:].isna().all()
    (first, rivals), (second, rulers) = bands(board)
    assert (first, list(rivals["contestant"])) == ("contestant", ["alpha", "beta", "gamma"])
    assert (second, list(rulers["contestant"])) == ("ruler", ["equal-weight", "random", "momentum"])


def test_the_best_is_the_best_contestant_even_when_a_ruler_did_better(board):
    assert best_contestant(board)["contestant"] == "alpha"
    assert best_ruler(board)["contestant"] == "equal-weight"
    assert summary_line(board) == ("best contestant: alpha, +1.00% (luck pct 61.0%, skill pct 75.0%); "
                                   "best ruler: equal-weight, +5.23%")


def test_a_season_of_house_rules_only_has_no_best_contestant(board):
    rulers = board[board["role"] == "ruler"]
    assert best_contestant(rulers) is None
    assert [role for role, rows in bands(rulers) if len(rows)] == ["ruler"]
    assert summary_line(rulers) == ("no contestant played this season, only the house rules "
                                    "(rulers); best ruler: equal-weight, +5.23%")
    assert summary_line(board[board["role"] == "contestant"]) == \
        "best contestant: alpha, +1.00% (luck pct 61.0%, skill pct 75.0%)"


def test_a_board_that_cannot_tell_contestants_from_rulers_is_refused(board):
    with pytest.raises(KeyError, match="role"):
        sorted_board(board.drop(columns="role"))
    marts = tiny_marts()
    with pytest.raises(ReportError, match=r"leaderboard\.role"):
        season_report({**marts, "leaderboard": marts["leaderboard"].drop(columns="role")})


def test_the_terminal_shows_the_best_contestant_then_each_band_under_its_title(board, capsys):
    columns, shown = terminal_bands(board)
    assert [c.key for c in columns][:3] == ["place", "contestant", "total_return"]
    assert [role for role, _ in shown] == ["contestant", "ruler"]
    assert [row[:3] for row in shown[1][1]] == [["–", "equal-weight", "+5.23%"],
                                                ["–", "random", "+0.10%"],
                                                ["–", "momentum", "-1.46%"]]
    print_leaderboard(board)
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert lines == [
        "",
        "best contestant: alpha, +1.00% (luck pct 61.0%, skill pct 75.0%); best ruler: "
        "equal-weight, +5.23%",
        "",
        "contestants",
        "#  contestant    return  luck pct  rank score  skill pct  Sharpe  max DD  fills  calls $",
        "1  alpha         +1.00%     61.0%        0.41      75.0%    1.50   2.00%      2  $1.2500",
        "2  beta          -0.50%     48.0%        0.28      25.0%   -0.20   1.50%      4        –",
        "2  gamma         -0.50%     48.0%        0.28          –       –   1.00%      0  $0.5000",
        "",
        "rulers: the house rules, the yardstick beside the contestants (not ranked)",
        "#  ruler         return  luck pct  rank score  skill pct  Sharpe  max DD  fills  calls $",
        "–  equal-weight  +5.23%     79.7%        0.69      90.0%    4.83   2.24%      9  $0.0000",
        "–  random        +0.10%     52.0%        0.32      50.0%    0.10   3.00%      6  $0.0000",
        "–  momentum      -1.46%     43.6%        0.25      50.0%   -0.39   5.75%     24  $0.0000",
    ]


def test_the_terminal_of_house_rules_only_says_there_is_no_contestant(board, capsys):
    print_leaderboard(board[board["role"] == "ruler"])
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert lines[:5] == [
        "",
        "no contestant played this season, only the house rules (rulers); best ruler: "
        "equal-weight, +5.23%",
        "",
        "rulers: the house rules, the yardstick beside the contestants (not ranked)",
        "#  ruler         return  luck pct  rank score  skill pct  Sharpe  max DD  fills  calls $",
    ]
    assert [line.split()[1] for line in lines[5:]] == ["equal-weight", "random", "momentum"]
    assert not any(re.match(r"\d+ ", line) for line in lines)  # no ruler is ranked


def test_the_artifact_and_the_json_list_contestants_then_rulers_with_their_role(board):
    rows = artifact_rows(board)
    assert json.loads(json.dumps(rows, allow_nan=False)) == rows
    assert [(r["contestant"], r["role"], r["place"]) for r in rows] == [
        ("alpha", "contestant", 1), ("beta", "contestant", 2), ("gamma", "contestant", 2),
        ("equal-weight", "ruler", None), ("random", "ruler", None), ("momentum", "ruler", None)]
    assert type(rows[0]["place"]) is int
    full = json_rows(board)
    assert json.loads(json.dumps(full, allow_nan=False)) == full
    assert [r["contestant"] for r in full] == [r["contestant"] for r in rows]
    assert full[1]["cost_usd"] is None and full[2]["sharpe"] is None


def _text(html: str, section: str) -> str:
    """A section's text, tags dropped and white space folded."""
    body = html.split(f'<section id="{section}">', 1)[1].split("</section>", 1)[0]
    return " ".join(re.sub(r"<[^>]+>", " ", body).split())


def _rows(html: str, caption: str) -> list[str]:
    """The first cell's text of each row of the leaderboard table under ``caption``."""
    body = html.split('<section id="leaderboard">', 1)[1].split("</section>", 1)[0]
    table = body.split(f"<caption>{caption}</caption>", 1)[1].split("</table>", 1)[0]
    return [" ".join(re.sub(r"<[^>]+>", " ", row).split()[:2])
            for row in table.split("<tbody>", 1)[1].split("</tr>")[:-1]]


def test_the_report_names_the_best_contestant_and_shows_the_better_ruler_apart():
    """The house rule momentum did better (+6.00%) than the one contestant, alpha (+5.23%):
    alpha leads, momentum is named as the best ruler, ahead of every contestant."""
    marts = tiny_marts()
    marts["leaderboard"] = marts["leaderboard"].assign(total_return=[0.0523, 0.06])
    html = season_report(marts)
    summary = _text(html, "summary")
    assert summary.startswith("Summary alpha leads the contestants after 2 cycles "
                              "(2026-10-01 to 2026-10-02) with +5.23%, at the 79.7% percentile")
    assert ("The best of the house rules, which play beside them as rulers (the yardstick, not "
            "ranked), was momentum with +6.00%: more than any contestant. 1 contestant, 1 ruler,"
            ) in summary
    assert _rows(html, "Contestants") == ["1 alpha"]
    assert _rows(html, "Rulers: the house rules, the yardstick beside the contestants "
                       "(not ranked)") == ["momentum +6.00%"]
    # a section per contestant, then one per ruler, each marked
    assert html.index('id="contestant-alpha"') < html.index('<section id="rulers">') < \
        html.index('id="contestant-momentum"')
    assert "alpha <small>#1, roster</small>" in html
    assert "momentum <small>ruler, roster</small>" in html


def test_the_report_of_house_rules_only_says_there_is_no_contestant():
    marts = tiny_marts()
    marts["leaderboard"] = marts["leaderboard"].assign(role="ruler", place=None)
    html = season_report(marts)
    summary = _text(html, "summary")
    assert summary.startswith("Summary No contestant played this season, only the house rules: "
                              "they play as rulers")
    assert "the best of them was alpha with +5.23%" in summary and "leads" not in summary
    assert "0 contestants, 2 rulers" in summary
    assert _rows(html, "Contestants") == ["no contestant"]  # the empty table's one cell
    assert "no contestant played this season: only the house rules below, as rulers" in html
    assert "No contestant played this season: the house rules' sections are under Rulers." \
        in _text(html, "contestants")


def test_a_house_rule_is_a_ruler_by_its_entry_and_by_its_recorded_calls():
    """The two ways the role is told agree: the roster entry's own decision, and the model label
    a ruler's calls are recorded under (which the leaderboard mart reads with the same pattern);
    every other kind, and a contestant without any call, is a contestant
    (``tests/reporting/test_roles.py`` holds the house variants and ``role:``)."""
    from arena.agents.factory import build_contestant
    from arena.agents.house import house_label
    from arena.agents.roster import HOUSE_STRATEGIES, load_roster, parse_roster
    from arena.core.resources import DBT_PROJECT
    from arena.reporting.roles import (
        CONTESTANT,
        RULER,
        RULER_LABEL,
        role_of,
        role_of_calls,
        role_of_kind,
    )

    shipped = [spec for spec in load_roster() if spec.kind == "house"]
    assert shipped and {role_of(spec) for spec in shipped} == {RULER}
    assert {role_of_kind(spec.kind) for spec in shipped} == {RULER}
    assert {role_of_calls([build_contestant(spec).label]) for spec in shipped} == {RULER}
    assert {role_of_calls([house_label(s, None)]) for s in HOUSE_STRATEGIES} == {RULER}
    for kind in ("llm", "debate", "researcher", "reverse", "replay", "entrant"):
        assert role_of_kind(kind) == CONTESTANT
    others = parse_roster("contestants:\n  - {name: m, kind: llm, model: openai/x, "
                          "api_key_env: K}\n  - {name: r, kind: reverse, mirror_of: m}\n")
    assert {role_of(spec) for spec in others} == {CONTESTANT}
    for models in (["openai/gpt-4o-mini"], ["reverse/worst"], ["replay/x"], ["entrant/inbox"], []):
        assert role_of_calls(models) == CONTESTANT
    sql = (DBT_PROJECT / "models" / "marts" / "leaderboard.sql").read_text(encoding="utf-8")
    assert f"bool_or(regexp_full_match(model, '{RULER_LABEL}')) as house_rule" in sql
