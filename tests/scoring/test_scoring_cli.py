"""`arena score`, `arena luck`, `arena rules` as documented (JSON numbers are fractions)."""

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from arena.cli import main

GOOG = Path(__file__).resolve().parents[1] / "fixtures" / "prices" / "GOOG.csv"


@pytest.fixture
def files(tmp_path):
    prices = tmp_path / "prices.csv"
    pd.DataFrame({"timestamp": pd.date_range("2025-01-01", periods=5, freq="D", tz="UTC")
                  .strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "open": 100.0, "high": [101, 111, 101, 121, 131], "low": 99.0,
                  "close": [100.0, 110.0, 99.0, 118.8, 118.8], "volume": 1.0}).to_csv(prices, index=False)
    positions = tmp_path / "w.csv"
    positions.write_text("timestamp,position\n2025-01-01T00:00:00Z,1\n2025-01-03T00:00:00Z,-0.5\n")
    return prices, positions


def test_score_json_contract(files, capsys):
    prices, positions = files
    assert main(["score", "--prices", str(prices), "--positions", str(positions),
                 "--cost-rate", "0.001", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # +1 held over bars 0-2 (+10%, -10%), -0.5 from bar 2 on (+20% then flat)
    expected = 0.999 * 1.1 * 0.9 * (1 - 0.001 * 1.5) * (1 - 0.5 * 0.2) - 1
    assert math.isclose(out["return"], expected, rel_tol=1e-12)
    assert out["turnover"] == 2.5 and out["valid_share"] == 1.0 and out["fees"] > 0


def test_luck_json_contract_with_an_entrant(capsys):
    goog_positions = Path(GOOG).with_name("goog_buy_and_hold.csv")
    assert goog_positions.exists()
    assert main(["luck", "--prices", str(GOOG), "--players", "4000", "--seed", "5",
                 "--entrant", str(goog_positions), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["players"] == 4000 and set(out["quantiles"]) == {"0.05", "0.25", "0.5", "0.75", "0.95"}
    assert out["ceiling"] == out["quantiles"]["0.95"] and out["cost_rate"] == 0.0002
    # buy-and-hold of GOOG 2004-2013 (+700%) beats every zero-skill player: capped rank score
    assert out["entrant_return"] > 6 and out["percentile"] == 1.0
    assert math.isclose(out["rank_score"], math.log10(4001))


def test_luck_same_seed_same_numbers(capsys):
    args = ["luck", "--prices", str(GOOG), "--players", "2000", "--seed", "9", "--json"]
    main(args)
    first = json.loads(capsys.readouterr().out)
    main(args)
    assert json.loads(capsys.readouterr().out) == first


def test_scoring_commands_refuse_bad_files(tmp_path, files, capsys):
    prices, _ = files
    bad = tmp_path / "bad.csv"
    bad.write_text("timestamp,position\n2030-01-01T00:00:00Z,1\n")
    assert main(["score", "--prices", str(prices), "--positions", str(bad)]) == 2
    assert "not bars of the price file" in capsys.readouterr().err
    assert main(["luck", "--prices", str(tmp_path / "missing.csv")]) == 2
    html = tmp_path / "page.csv"
    html.write_text("<html><body>blocked</body></html>")
    assert main(["luck", "--prices", str(html)]) == 2


def test_rules_table_json_contract(capsys):
    assert main(["rules", "--prices", str(GOOG), "--start", "2012-03-01", "--players", "3000",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = {r["rule"]: r for r in out["rules"]}
    assert len([r for r in out["rules"] if r["kind"] == "rule"]) == 13
    assert {r["rule"] for r in out["rules"] if r["kind"] == "baseline"} == \
        {"buy_and_hold", "volatility_targeting", "random"}
    ranks = sorted(r["rank"] for r in out["rules"] if r["kind"] == "rule")
    assert ranks[0] == 1 and ranks[-1] <= 13
    bh = rows["buy_and_hold"]
    # buy and hold from the first displayed bar: the price ratio, minus one entry cost
    goog = pd.read_csv(GOOG)
    shown = goog[goog.timestamp >= "2012-03-01"].close.to_numpy()
    assert math.isclose(bh["return"], (1 - 0.0002) * shown[-1] / shown[0] - 1, rel_tol=1e-12)
    assert bh["turnover"] == 1.0 and 0 <= bh["percentile"] <= 1
    assert out["luck"]["players"] == 3000 and out["grid"] == "1d" and out["calendar"] == "XNYS"


def test_a_failed_self_check_stops_scoring(monkeypatch, files, capsys):
    from arena.scoring import self_check

    monkeypatch.setattr(self_check, "_CHECKED", False)
    monkeypatch.setattr(self_check, "_cases", lambda: [("costs reduce the return", False)])
    prices, positions = files
    assert main(["score", "--prices", str(prices), "--positions", str(positions)]) == 1
    err = capsys.readouterr().err
    assert "self-check failed, scoring stopped: costs reduce the return" in err


@pytest.mark.parametrize("args,message", [
    (["luck", "--cost-rate", "-0.5"], "fraction"),
    (["rules", "--start", "sometime"], "not a date"),
])
def test_scoring_arguments_are_checked(args, message, capsys):
    assert main([args[0], "--prices", str(GOOG), *args[1:], "--players", "100"]) == 2
    assert message in capsys.readouterr().err


def test_an_infinite_position_is_refused(files, tmp_path, capsys):
    prices, _ = files
    bad = tmp_path / "inf.csv"
    bad.write_text("timestamp,position\n2025-01-01T00:00:00Z,inf\n")
    assert main(["score", "--prices", str(prices), "--positions", str(bad)]) == 2
    assert "not a time and a number" in capsys.readouterr().err
