"""The `arena` command as a user types it: exit codes, messages, JSON contract."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from arena.cli import main

PRICES = Path(__file__).parent / "fixtures" / "prices"


HEAVY = ("great_expectations", "prefect", "yfinance", "ccxt", "dbt", "duckdb", "pandas",
         "pydantic_settings", "arena.pipeline", "arena.app", "litellm", "matplotlib")


@pytest.mark.parametrize("args", [["--help"], ["season", "--help"], ["cycle", "--help"]])
def test_help_starts_without_heavy_imports(args):
    """``arena --help`` (and a command's) loads no command module's dependencies: the command
    modules import their jobs inside the command."""
    out = subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True,
                         text=True, check=True)
    assert "Usage: arena" in out.stdout
    if args == ["--help"]:
        assert "ingest" in out.stdout and "validate" in out.stdout
    probe = (f"import sys, arena.cli; arena.cli.main({args!r}); "
             f"print(sorted({{m.split('.')[0] if not m.startswith('arena.') else "
             f"'.'.join(m.split('.')[:2]) for m in sys.modules}} & set({HEAVY!r})))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True).stdout.strip().splitlines()[-1]
    assert loaded == "[]", loaded


def test_validate_accepts_real_daily_data(capsys):
    assert main(["validate", str(PRICES / "GOOG.csv"), "--interval", "1d", "--calendar", "XNYS"]) == 0
    assert "passed" in capsys.readouterr().out


def test_validate_rejects_a_splice(tmp_path, capsys):
    goog = pd.read_csv(PRICES / "GOOG.csv")
    cut = len(goog) // 2
    goog.loc[cut:, ["open", "high", "low", "close"]] *= 1.35  # spliced series, ordinary volume
    path = tmp_path / "spliced.csv"
    goog.to_csv(path, index=False)
    assert main(["validate", str(path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["success"] is False
    failed = [r for r in out["results"] if not r["success"]]
    assert [r["check"] for r in failed] == ["splice"], failed


def test_validate_rejects_html_and_empty_and_missing(capsys):
    assert main(["validate", str(PRICES / "html_body.csv")]) == 2
    assert "HTML" in capsys.readouterr().err
    assert main(["validate", str(PRICES / "empty.csv")]) == 1
    assert "zero bars" in capsys.readouterr().out
    assert main(["validate", str(PRICES / "does-not-exist.csv")]) == 2


def test_validate_refuses_bad_arguments(capsys):
    assert main(["validate", str(PRICES / "GOOG.csv"), "--interval", "2h"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena validate: ") and "--interval" in err and "2h" in err
    assert "Traceback" not in err


def test_ingest_then_validate_a_partition(tmp_path, capsys):
    lake = tmp_path / "lake"
    code = main(["ingest", "--source", "synthetic", "--symbols", "ETH,brk-b", "--start",
                 "2025-10-06", "--end", "2025-10-20", "--lake", str(lake), "--json"])
    assert code == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["status"] == "published" and sorted(manifest["got"]) == ["BRK.B", "ETH"]
    part = lake / "bars/provider=synthetic/interval=1h/symbol=BRK.B"
    assert main(["validate", str(part), "--as-of", "2025-10-20"]) == 0
    # judged a month later, the same partition is stale
    assert main(["validate", str(part), "--as-of", "2025-11-20"]) == 1
    assert "stale" in capsys.readouterr().out.lower()


def test_ingest_argument_errors(tmp_path, capsys):
    assert main(["ingest", "--symbols", "FOO", "--lake", str(tmp_path)]) == 2
    assert "FOO" in capsys.readouterr().err
    assert main(["ingest", "--source", "files", "--lake", str(tmp_path)]) == 2
    assert "drop folder" in capsys.readouterr().err
    assert main(["ingest", "--start", "yesterday-ish", "--lake", str(tmp_path)]) == 2


def test_validate_accepts_daily_bars_labelled_at_new_york_midnight(tmp_path):
    """yfinance exports label a daily bar `2004-08-19 00:00:00-04:00`: the session's date."""
    goog = pd.read_csv(PRICES / "GOOG.csv")
    goog["timestamp"] = pd.to_datetime(goog["timestamp"]).dt.tz_localize("America/New_York")
    path = tmp_path / "goog_ny.csv"
    goog.to_csv(path, index=False)
    assert "-04:00" in path.read_text().splitlines()[1]
    assert main(["validate", str(path), "--interval", "1d"]) == 0
