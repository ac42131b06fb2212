"""`arena check`: the engine's acceptance interface, as a user runs it."""

import json
from pathlib import Path

import numpy as np
import pytest

from arena.cli import main

CHECK = Path(__file__).resolve().parents[1] / "fixtures" / "check"
ARGS = ["check", "--state", str(CHECK / "state.json"), "--answer", str(CHECK / "answer.json"),
        "--prices", str(CHECK / "prices.json")]


def test_check_example_from_the_readme(capsys):
    """Saturday: the ETH trim and the SOL open execute, the AAPL short is refused."""
    assert main([*ARGS, "--at", "2025-11-29T16:00:00Z", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["parsed"] and [f["symbol"] for f in out["fills"]] == ["ETH", "SOL"]
    close, open_ = out["fills"]
    assert np.isclose(close["realised_pnl"], 50.0) and np.isclose(close["fee"], 1.05)
    assert np.isclose(open_["notional"], 0.25 * 10_096.95)
    assert [(r["symbol"], r["code"]) for r in out["rejections"]] == [("AAPL", "not_tradeable_today")]
    assert np.isclose(out["state"]["cash"], 6_520.1925625, atol=1e-6)
    assert np.isclose(out["equity"], 10_094.4264375, atol=1e-6)
    assert out["repair"]["needed"] and out["repair"]["new_position_slots"] == 0
    assert out["state"]["opened_this_cycle"] == ["SOL"]


def test_check_on_a_weekday_accepts_everything_but_the_second_open(capsys):
    assert main([*ARGS, "--at", "2025-11-26T16:00:00Z"]) == 1
    text = capsys.readouterr().out
    assert "REJECT  decision 2 open_short AAPL: new_position_limit" in text
    assert "FILL    open  long  SOL" in text


def test_check_reports_an_unparseable_answer(tmp_path, capsys):
    bad = tmp_path / "answer.txt"
    bad.write_text("I think ETH looks great, buy it!")
    args = [*ARGS[:4], str(bad), *ARGS[5:], "--at", "2025-11-26T16:00:00Z", "--json"]
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    assert not out["parsed"] and "start with '{'" in out["parse_error"]
    assert out["repair"]["needed"] and out["repair_prompt"].startswith("Your answer could not")


@pytest.mark.parametrize("state,prices,message", [
    ('{"cash": "lots"}', '{"ETH": 1}', "cash"),
    ('{"cash": 1, "positions": [{"symbol": "FOO", "side": "long", "quantity": 1, '
     '"entry_price": 1}]}', '{"FOO": 1}', "unknown symbol FOO"),
    ('{"cash": 1, "positions": [{"symbol": "ETH", "side": "up", "quantity": 1, '
     '"entry_price": 1}]}', '{"ETH": 1}', "side"),
    ('{"cash": 1, "positions": [{"symbol": "ETH", "side": "long", "quantity": 1, '
     '"entry_price": 1}]}', '{"SOL": 1}', "no price for held ETH"),
    ('{"cash": 1}', '{"ETH": -3}', "not a positive finite number"),
    ('{"cash": 1}', '{"ETH": 1' + '0' * 400 + '}', "not a positive finite number"),
    ("not json", '{"ETH": 1}', "not JSON"),
])
def test_unusable_inputs_exit_2_naming_the_problem(tmp_path, capsys, state, prices, message):
    (tmp_path / "s.json").write_text(state)
    (tmp_path / "p.json").write_text(prices)
    args = ["check", "--state", str(tmp_path / "s.json"), "--answer", str(CHECK / "answer.json"),
            "--prices", str(tmp_path / "p.json"), "--at", "2025-11-26T16:00:00Z"]
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_a_clean_answer_exits_0(tmp_path, capsys):
    answer = tmp_path / "a.json"
    answer.write_text(json.dumps({"reasoning": "hold", "decisions": [
        {"action": "hold", "symbol": "ETH", "invalidation_price": 2900}]}))
    args = [*ARGS[:4], str(answer), *ARGS[5:], "--at", "2025-11-26T16:00:00Z", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["holds"] == [0] and out["state"]["positions"][0]["invalidation_price"] == 2900
