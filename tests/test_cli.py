"""The `arena` command as a user types it: exit codes, messages, JSON contract."""

import json
import logging
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from arena.cli import main
from arena.pipeline.live.closed import CLOSED
from arena.pipeline.season_config import SEASON_DIR
from tests.live_lakes import live_lake

PRICES = Path(__file__).parent / "fixtures" / "prices"
ORIGINAL_HANDLE_ERROR = logging.Handler.handleError


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


def test_an_entrant_is_refused_once_the_season_is_over(tmp_path_factory, tmp_path, universe,
                                                       capsys):
    """Regression (issue 44): ``arena entrant add`` on an ended season exited 0. Once no cycle
    is left - or the final publication closed the season - it refuses in one line."""
    ended = live_lake(tmp_path_factory, universe, tmp_path / "ended")  # one cycle, 2025-11-21
    start = (pd.Timestamp.now(tz="UTC") + pd.Timedelta(days=30)).date().isoformat()
    coming = live_lake(tmp_path_factory, universe, tmp_path / "coming", start=start, days=2)
    capsys.readouterr()  # what building the lakes said
    assert main(["entrant", "add", "late", "--lake", str(ended.root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena entrant add: season ") and "Traceback" not in err, err
    assert "it is over (its last cycle was at 2025-11-21T16:00:00+00:00); it takes no new " \
           "entrant" in err and err.rstrip().endswith("(nothing changed)"), err
    assert len(err.strip().splitlines()) == 1, err
    assert main(["entrant", "list", "--lake", str(ended.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    # a season still to come takes one, until its final publication closes it
    assert main(["entrant", "add", "early", "--lake", str(coming.root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "early"
    closed = {"season": "s", "closed_at": "2026-01-01T00:00:00+00:00", "last_cycle": start}
    (coming.root / SEASON_DIR / CLOSED).write_text(json.dumps(closed), encoding="utf-8")
    assert main(["entrant", "add", "later", "--lake", str(coming.root)]) == 2
    assert "was closed at 2026-01-01T00:00:00+00:00 after its last cycle: it is over" in \
        capsys.readouterr().err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_under_dbts_log_ends_as_one_line(tmp_path, capfd):
    """Regression (issue 44): dbt's log on a full disk printed logging's traceback for every
    line it wrote (230 of them) and the command went on to exit 0. Its log file is /dev/full
    here, where every write fails with ENOSPC, as on a full disk: the command ends at the first
    refused write, one line naming the errno and the file, exit 1."""
    store = tmp_path / "store"
    logs = store / "dbt" / "logs"  # where dbt writes its log (arena.pipeline.warehouse)
    logs.mkdir(parents=True)
    (logs / "dbt.log").symlink_to("/dev/full")
    assert main(["signal-marts", "--store", str(store)]) == 1
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert "Logging error" not in captured.err
    assert captured.err.strip().splitlines() == [
        "arena signal-marts: dbt build of the signal models failed: [Errno 28] No space left "
        f"on device: '{logs / 'dbt.log'}'"]
    assert not (store / "marts").exists()  # nothing published
    assert logging.Handler.handleError is ORIGINAL_HANDLE_ERROR  # only while the command ran

