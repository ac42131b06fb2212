"""A contest's rules (:mod:`arena.pipeline.contest`) and ``arena contest init`` (issue 45, item
1): the fees its tracks and zero-skill players pay, its eligibility and prizes, and the check that
refuses assets whose daily returns are more than weakly correlated."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from arena.cli import main
from arena.data.lake import Lake
from arena.pipeline.contest import (
    FINCHAL_DAYS,
    MIN_OVERLAP,
    Contest,
    ContestError,
    check_correlations,
    finchal,
    prizes_by_place,
)
from arena.pipeline.season_config import SeasonConfigError, find_season, make_season
from arena.pipeline.season_tables import asset_tracks
from tests.pipeline.test_track_window import END, START, hand_built  # noqa: F401 (a fixture)


def test_finchal_is_the_documents_contest():
    contest = finchal(["NVDA", "BTC"], fees={"NVDA": 0.0001})
    assert contest.fees == {"NVDA": 0.0001, "BTC": 0.0006}
    assert (contest.eligibility, contest.max_correlation, FINCHAL_DAYS) == (0.70, 0.70, 122)
    assert contest.prizes == {"NVDA": (500.0,), "BTC": (500.0,)} and contest.prize_pool == 1000
    assert finchal(["ETH"]).fees == {"ETH": 0.0006}  # outside FINCHAL: its calendar's rate


@pytest.mark.parametrize(("field", "value", "named"), [
    ("fees", {"BTC": 0.5}, "fees: BTC: 0.5 is not a rate"),
    ("eligibility", 0.0, "eligibility must be a share in (0, 1]"),
    ("prizes", {"ETH": (10.0,)}, "prizes: ETH is not an asset of the contest"),
    ("prizes", {"BTC": (-1.0,)}, "a prize cannot be negative"),
    ("max_correlation", 1.5, "max_correlation must be in (0, 1]"),
])
def test_rules_that_cannot_be_played_are_named(field, value, named):
    rules = {"fees": {"BTC": 0.0006}, field: value}
    with pytest.raises(ContestError, match=re.escape(named)):
        Contest(**rules)


def test_a_contest_asset_must_be_a_season_symbol():
    with pytest.raises(SeasonConfigError, match="contest assets outside the season's symbols: "
                                                "NVDA"):
        make_season("2026-08-24", 3, ["BTC"], contest=finchal(["BTC", "NVDA"]))


def test_prizes_follow_places_and_ties_share_the_places_they_take():
    assert prizes_by_place([2, 1, None, 3], [500.0, 200.0, 100.0]) == [200.0, 500.0, 0.0, 100.0]
    assert prizes_by_place([1, 1, 3, None], [500.0, 200.0, 100.0]) == [350.0, 350.0, 100.0, 0.0]
    assert prizes_by_place([1, 2, 2, 2], [500.0, 200.0]) == [500.0, 200 / 3, 200 / 3, 200 / 3]
    assert prizes_by_place([1, 1], [500.0]) == [250.0, 250.0]


def _closes(returns: dict[str, np.ndarray], start: str = "2023-01-02") -> dict[str, pd.Series]:
    days = pd.date_range(start, periods=len(next(iter(returns.values()))) + 1, freq="D",
                         tz="UTC")
    return {s: pd.Series(100.0 * np.cumprod(np.r_[1.0, 1.0 + r]), index=days)
            for s, r in returns.items()}


def test_the_check_refuses_a_pair_either_way_and_an_asset_without_history():
    """A's returns, B = 2A (correlation exactly 1), C = -A (exactly -1), D independent."""
    rng = np.random.default_rng(3)
    a, d = rng.normal(0, 0.01, 200), rng.normal(0, 0.01, 200)
    check = check_correlations(_closes({"A": a, "B": 2 * a, "C": -a, "D": d}),
                               ["A", "B", "C", "D"], 0.7)
    assert check.matrix.loc["A", "B"] == pytest.approx(1.0, abs=1e-12)
    assert check.matrix.loc["A", "C"] == pytest.approx(-1.0, abs=1e-12)
    assert abs(check.matrix.loc["A", "D"]) < 0.2
    assert [(x, y) for x, y, _ in check.too_close] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert not check.passed and "A and C correlate -1.000" in check.refusal()
    short = check_correlations(_closes({"A": a, "D": d})
                               | {"E": _closes({"E": d[:MIN_OVERLAP - 2]})["E"]},
                               ["A", "D", "E"], 0.7)
    assert short.too_short == ("E",) and not short.too_close and not short.unmeasured
    assert "E has fewer than 60 daily returns" in short.refusal()
    apart = _closes({"A": a}) | {"F": _closes({"F": d}, start="2023-06-01")["F"]}
    disjoint = check_correlations(apart, ["A", "F"], 0.7)  # 200 days each, 48 in common
    assert disjoint.unmeasured == (("A", "F"),) and not disjoint.passed
    assert check_correlations(_closes({"A": a, "D": d}), ["A", "D"], 0.7).passed


def test_init_refuses_correlated_assets_with_the_matrix_and_writes_nothing(tmp_path, capsys):
    lake = tmp_path / "lake"
    code = main(["contest", "init", "--start", "2026-08-24", "--assets", "NVDA,SPY,BTC",
                 "--max-correlation", "0.5", "--lake", str(lake)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err
    assert "NVDA and SPY correlate +0.5" in err and "(above 0.5 in absolute value" in err
    assert "NVDA    SPY    BTC" in err  # the matrix
    assert find_season(Lake(lake)) is None


def test_init_writes_the_contest_season_with_its_matrix(tmp_path, capsys):
    lake = Lake(tmp_path / "lake")
    args = ["contest", "init", "--start", "2026-08-24", "--assets", "NVDA,BTC,ETH", "--fee",
            "ETH=0.0005", "--prizes", "500,200", "--lake", str(lake.root)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "122 days from 2026-08-24 to 2026-12-23" in out and "ETH 0.05%" in out
    assert "prizes 2,100 USD in all" in out and "NVDA     1.00" in out
    config = find_season(lake)
    assert config.days == 122 and config.symbols == ("NVDA", "BTC", "ETH")
    rules = config.contest
    assert rules.fees == {"NVDA": 0.0002, "BTC": 0.0006, "ETH": 0.0005}
    assert rules.prizes["ETH"] == (500.0, 200.0) and set(rules.correlations) == {
        "NVDA|BTC", "NVDA|ETH", "BTC|ETH"}
    assert all(abs(c) <= 0.7 for c in rules.correlations.values())
    assert [(a.symbol, a.cost_rate) for a in config.universe()] == [
        ("BTC", 0.0006), ("ETH", 0.0005), ("NVDA", 0.0002)]
    saved = json.loads((lake.root / "season" / "season.json").read_text())
    assert saved["contest"]["name"] == "FINCHAL"
    assert main(args) == 0  # the same contest again: a no-op
    capsys.readouterr()
    other = [a if a != "500,200" else "100" for a in args]
    assert main(other) == 2  # another contest in the same lake
    assert "holds season" in capsys.readouterr().err


@pytest.mark.parametrize("option", [["--fee", "ETH"], ["--fee", "ETH=x"], ["--prizes", "a"],
                                    ["--eligibility", "0"], ["--max-correlation", "2"]])
def test_a_wrong_option_is_one_line(option, tmp_path, capsys):
    code = main(["contest", "init", "--start", "2026-08-24", "--assets", "BTC,ETH", *option,
                 "--lake", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in out + err and len(err.strip().splitlines()) == 1


def test_a_track_and_its_players_pay_the_contests_fee(hand_built, universe):  # noqa: F811
    """Long 1.0 from before the season on the hand-built ETH path (100 -> 102): one entry, so
    the fee is the contest's rate, and the players that place it pay it too."""
    eth = universe.with_cost_rates({"ETH": 0.0005})["ETH"]
    row, = asset_tracks(hand_built, "synthetic", eth, START, END,
                        {"x": [(START - pd.Timedelta(hours=1), {"ETH": 1.0})]}, eligibility=1.0)
    assert (row["cost_rate"], row["fees"]) == (0.0005, pytest.approx(0.0005, rel=1e-12))
    assert row["return"] == pytest.approx(0.9995 * 1.02 - 1, rel=1e-12)
    assert row["eligible"]
    late, = asset_tracks(hand_built, "synthetic", eth, START, END,
                         {"x": [(START + pd.Timedelta(minutes=30), {"ETH": 1.0})]},
                         eligibility=0.7)
    assert late["coverage"] == pytest.approx(2 / 3) and not late["eligible"]
