"""Every number a command takes - ports, seeds, counts of players, days and calls, durations - is
range-checked where the command line is read (issue 44): its lowest and highest values pass, and
anything else (one below, one above, a huge number, no number at all) is one line on stderr
naming the option and its range, exit 2, before any work. Seen before: ``arena web --port
99999`` listened on 34463, ``arena ingest --seed -1`` and ``arena season publish --players
1000000000000`` ended in tracebacks (the second after trying to allocate 7.28 TiB),
``arena signal-server --daily-calls -5`` was accepted."""

from __future__ import annotations

from pathlib import Path

import cyclopts
import pytest

from arena.cli import app, main
from arena.cli._options import (
    DAY_SECONDS,
    MAX_DAILY_CALLS,
    MAX_DAYS,
    MAX_PLAYERS,
    MAX_PORT,
    MAX_SEED,
)

GOOG = str(Path(__file__).parent / "fixtures" / "prices" / "GOOG.csv")
LAKE = ["--lake", "LAKE"]  # a lake the test names (it must not come to exist)
PRICED = ["--prices", GOOG]
STORED = ["--store", "LAKE"]  # the signal server's store, in the same place
# (the command, the arguments it needs besides, the option, its lowest and highest value)
WHOLE = [
    (["ingest"], LAKE, "--seed", 0, MAX_SEED),
    (["season", "init"], LAKE, "--days", 1, MAX_DAYS),
    (["season", "init"], LAKE, "--seed", 0, MAX_SEED),
    (["season", "publish"], LAKE, "--players", 1, MAX_PLAYERS),
    (["replay"], ["--start", "2026-10-01", *LAKE], "--days", 1, MAX_DAYS),
    (["replay"], ["--start", "2026-10-01", *LAKE], "--seed", 0, MAX_SEED),
    (["replay"], ["--start", "2026-10-01", *LAKE], "--players", 1, MAX_PLAYERS),
    (["demo"], LAKE, "--days", 1, MAX_DAYS),
    (["demo"], LAKE, "--seed", 0, MAX_SEED),
    (["demo"], LAKE, "--players", 1, MAX_PLAYERS),
    (["luck"], PRICED, "--players", 1, MAX_PLAYERS),
    (["luck"], PRICED, "--seed", 0, MAX_SEED),
    (["rules"], PRICED, "--players", 1, MAX_PLAYERS),
    (["rules"], PRICED, "--seed", 0, MAX_SEED),
    (["mcp"], LAKE, "--port", 1, MAX_PORT),
    (["web"], LAKE, "--port", 1, MAX_PORT),
    (["signal-server"], STORED, "--port", 1, MAX_PORT),
    (["signal-server"], STORED, "--daily-calls", 1, MAX_DAILY_CALLS),
]
DURATIONS = [(["season", "init"], LAKE, "--call-timeout"),
             (["season", "init"], LAKE, "--cycle-deadline")]


def _ids(case: tuple) -> str:
    return f"{' '.join(case[0])} {case[2]}"


def _parsed(tokens: list[str]) -> dict:
    """What the command line binds, the command not run."""
    _, bound, _ = app.parse_args(tokens, exit_on_error=False, print_error=False)
    return dict(bound.arguments)


@pytest.mark.parametrize("case", WHOLE, ids=_ids)
def test_the_lowest_and_highest_values_pass_and_one_beyond_does_not(case):
    command, needed, option, low, high = case
    key = option.removeprefix("--").replace("-", "_")
    for value in (low, high):
        assert _parsed([*command, *needed, option, str(value)])[key] == value
    for value in (low - 1, high + 1):
        with pytest.raises(cyclopts.ValidationError):
            _parsed([*command, *needed, option, str(value)])


def _refused(capsys, tmp_path, command: list[str], tokens: list[str]) -> str:
    """Run ``command`` with ``tokens`` (its lake or store one that does not exist); the one line
    it refused them with."""
    lake = tmp_path / "lake"
    assert main([*command, *(str(lake) if t == "LAKE" else t for t in tokens)]) == 2, tokens
    captured = capsys.readouterr()
    err = captured.err
    assert "Traceback" not in err and "Traceback" not in captured.out, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"arena {' '.join(command)}: "), err
    assert not lake.exists(), "nothing may be done"
    return err


@pytest.mark.parametrize("case", WHOLE, ids=_ids)
def test_a_value_beyond_the_range_is_one_line_naming_the_option_and_its_range(
        case, capsys, tmp_path):
    command, needed, option, low, high = case
    name = "arena " + " ".join(command)
    for value in (str(low - 1), str(high + 1), "1" + "0" * 30, "9" * 5000, "many", "", "1.5"):
        err = _refused(capsys, tmp_path, command, [*needed, option, value])
        assert err.startswith(f"{name}: {option} must be "), err
        assert f"at least {low:,} and at most {high:,}" in err, err
        assert len(err) < 300, err  # a 5,000-digit value is cut


@pytest.mark.parametrize("case", DURATIONS, ids=_ids)
def test_a_duration_is_above_zero_and_at_most_a_day(case, capsys, tmp_path):
    command, needed, option = case
    key = option.removeprefix("--").replace("-", "_")
    for value in (0.001, DAY_SECONDS):
        assert _parsed([*command, *needed, option, str(value)])[key] == value
    for value in ("0", "-1", str(DAY_SECONDS + 1), "nan", "inf", "-inf", "soon"):
        err = _refused(capsys, tmp_path, command, [*needed, option, value])
        assert f"{option} must be " in err and f"above 0 and at most {DAY_SECONDS:,}" in err, err


@pytest.mark.parametrize("value", ["-1", "1", "nan", "inf", "x"])
def test_a_cost_rate_outside_a_fraction_is_one_line(value, capsys, tmp_path):
    err = _refused(capsys, tmp_path, ["luck"], [*PRICED, "--players", "10", "--cost-rate", value])
    assert "fraction in [0, 1)" in err or "--cost-rate" in err, err
