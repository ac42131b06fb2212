"""What an operator types wrong gets one line naming the argument and exit 2 - never a parser's
traceback, never an internal message."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.cli import main
from arena.ledger.records import MonitorRecord
from arena.ledger.store import Ledger
from tests.market_lakes import season_lake

HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe):
    return season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE)


@pytest.mark.parametrize("args,named", [
    (["cycle", "--at", "yesterday"], "--at 'yesterday' is not a date or time"),
    (["cycle", "--at", "2026-13-45T16:00Z"], "--at '2026-13-45T16:00Z' is not a date or time"),
    (["season", "backfill", "notadate"], "DATE 'notadate' is not a day"),
    (["season", "retry", "26/11/2025"], "DATE '26/11/2025' is not a day"),
    (["monitor", "--at", "soon"], "--at 'soon' is not a date or time"),
    (["season", "init", "--start", "next monday"], "--start 'next monday' is not a day"),
    (["ingest", "--start", "yesterday-ish"], "--start 'yesterday-ish' is not a date or time"),
    (["replay", "--start", "2026-10-01", "--days", "0"], "--days must be at least 1"),
    (["cycle", "--bogus"], "Unknown option: --bogus"),
    (["season", "publish", "--players", "many"], "--players"),
])
def test_a_wrong_argument_is_one_line_and_exit_2(season, capsys, args, named):
    assert main([*args, "--lake", str(season.root)]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"arena {args[0]}"), err


def test_a_tick_inside_a_watched_window_is_refused_by_name(season, capsys):
    lake = str(season.root)
    assert main(["cycle", "--no-publish", "--lake", lake]) == 0
    assert main(["monitor", "--at", "2025-11-26T22:00:00Z", "--no-ingest", "--lake", lake]) == 0
    # a window recorded up to 22:00 (what a tick that closed something writes; written here
    # directly, whatever this market's levels did)
    ledger = Ledger(season.root)
    start, end = max(k.cycle_at for k in ledger.records()), pd.Timestamp("2025-11-26 22:00Z")
    if not ledger.monitor_records():
        name = ledger.records()[0].contestant
        ledger.record_monitor(start, end, name, lambda: MonitorRecord(name, start, end))
    capsys.readouterr()
    assert main(["monitor", "--at", "2025-11-26T20:00:00Z", "--no-ingest", "--lake", lake]) == 2
    err = capsys.readouterr().err
    assert "the tick 2025-11-26T20:00:00+00:00 is already watched" in err
    assert "windows reach 2025-11-26T22:00:00+00:00" in err and "nothing recorded" in err
    assert "overlaps" not in err and "Traceback" not in err
    # the same tick again records nothing twice and is no error
    assert main(["monitor", "--at", "2025-11-26T22:00:00Z", "--no-ingest", "--lake", lake]) == 0


def test_a_bad_environment_variable_is_named(season, capsys, monkeypatch):
    monkeypatch.setenv("ARENA_ALERT_WEBHOOK", "ftp://example.invalid/hook")
    assert main(["serve", "--list", "--lake", str(season.root)]) == 2
    err = capsys.readouterr().err
    assert "ARENA_ALERT_WEBHOOK='ftp://example.invalid/hook'" in err and "http(s)" in err
    monkeypatch.delenv("ARENA_ALERT_WEBHOOK")
    monkeypatch.setenv("ARENA_PROVIDER_CONCURRENCY", "many")
    from arena.core.environment import settings
    from arena.core.errors import SettingsError

    with pytest.raises(SettingsError, match="ARENA_PROVIDER_CONCURRENCY='many'"):
        settings()
    monkeypatch.setenv("ARENA_PROVIDER_CONCURRENCY", "0")
    with pytest.raises(SettingsError, match="greater than or equal to 1"):
        settings()


def test_every_arena_variable_is_in_the_one_table():
    """No module reads an ``ARENA_*`` variable behind the table's back."""
    import re
    from pathlib import Path

    import arena
    from arena.core.environment import Settings

    root = Path(arena.__file__).parent
    names = {f"ARENA_{n.upper()}" for n in Settings.model_fields}
    for path in [*root.rglob("*.py"), *root.joinpath("flows").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        for read in re.findall(r"environ(?:\.get)?\(?\[?[\"'](ARENA_[A-Z_]+)", text):
            pytest.fail(f"{path} reads {read} from os.environ, not through the table")
        for mentioned in re.findall(r"\$(ARENA_[A-Z_]+)", text):
            assert mentioned in names, f"{path} mentions ${mentioned}, which the table lacks"


def test_a_bad_variable_matters_only_to_the_command_that_reads_it(season, capsys, monkeypatch):
    monkeypatch.setenv("ARENA_ALERT_WEBHOOK", "hooks.example.com")
    monkeypatch.setenv("ARENA_PROVIDER_CONCURRENCY", "")  # empty: the default
    assert main(["season", "status", "--lake", str(season.root)]) == 0
    capsys.readouterr()
    # an argument outranks the variable
    assert main(["serve", "--list", "--alert-webhook", "https://hooks.example.com/arena",
                 "--lake", str(season.root)]) == 0
    from arena.core.environment import setting

    assert setting("provider_concurrency") is None  # the default: no limit


def test_the_tables_defaults_are_read_when_no_variable_is_set():
    """The defaults a process without ``ARENA_*`` variables reads (as every ingest does, for the
    lake and the universe) are the model's own."""
    import json
    import os
    import subprocess
    import sys

    from arena.core.environment import DEFAULTS, Settings

    assert set(Settings.model_fields) == set(DEFAULTS)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("ARENA_")}
    code = ("import json, sys\n"
            "from arena.core.environment import setting, DEFAULTS\n"
            "from arena.core.universe import load_universe\n"
            "load_universe()\n"
            "values = {n: str(setting(n)) for n in DEFAULTS}\n"
            "print(json.dumps(values))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    values = json.loads(out)
    assert values == {n: str(v) for n, v in Settings.model_construct().model_dump().items()}
    assert values == {n: str(getattr(Settings(_env_prefix="ARENA_UNSET_"), n)) for n in DEFAULTS}
