"""Two ``arena ingest`` runs in separate processes over one lake: no run loses another's bars.

The race is forced, not hoped for: the narrow run reads the lake (builds its partitions), then
waits in validation until the wide run has published; the wide run waits, before its first file
move, until the narrow run has read. Without the merge under the writer lock the narrow run
publishes partitions merged from the empty lake it read, and the wide run's bars are gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd

from arena.core.sessions import bar_close_times, expected_bars
from arena.data.ingest import run_ingest
from arena.data.lake import Lake, PartitionKey
from tests.conftest import ts

ROOT = Path(__file__).resolve().parents[2]
WIDE = ("2025-10-06", "2025-10-20")
NARROW = ("2025-10-15", "2025-10-17")

_HOOKED = textwrap.dedent("""
    import sys, time
    from pathlib import Path

    import arena.data.ingest.validate as validate_step
    import arena.data.lake as lake_module
    from arena.cli import main

    role, lake, sync, start, end = sys.argv[1:6]
    sync = Path(sync)

    def wait_for(path, seconds=120.0):
        deadline = time.monotonic() + seconds
        while not path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)

    if role == "narrow":  # has read the lake; waits until the wide run has published
        real_validate = validate_step.validate_partitions

        def validate(*args, **kwargs):
            (sync / "narrow-read").touch()
            wait_for(sync / "wide-published")
            return real_validate(*args, **kwargs)

        validate_step.validate_partitions = validate
    else:  # publishes only once the narrow run has read the lake
        real_publish = lake_module.Lake.publish

        def publish(self, *args, **kwargs):
            wait_for(sync / "narrow-read")
            return real_publish(self, *args, **kwargs)

        lake_module.Lake.publish = publish
    code = main(["ingest", "--source", "synthetic", "--symbols", "ETH", "--start", start,
                 "--end", end, "--lake", lake, "--json"])
    if role == "wide":
        (sync / "wide-published").touch()
    sys.exit(code)
""")


def _spawn(role: str, lake: Path, sync: Path, window: tuple[str, str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", _HOOKED, role, str(lake), str(sync), *window],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _expected_hours(start: str, end: str) -> set[pd.Timestamp]:
    opens = expected_bars("24/7", "1h", ts(start), ts(end))
    closes = bar_close_times("24/7", "1h", opens)
    return set(opens[closes <= ts(end)])


def test_overlapping_runs_in_two_processes_lose_no_bar(tmp_path):
    lake_root, sync = tmp_path / "lake", tmp_path / "sync"
    sync.mkdir()
    procs = {"wide": _spawn("wide", lake_root, sync, WIDE),
             "narrow": _spawn("narrow", lake_root, sync, NARROW)}
    outcomes = {role: p.communicate(timeout=300) for role, p in procs.items()}
    for role, p in procs.items():
        assert p.returncode == 0, f"{role}: {outcomes[role][1][-2000:]}"
    assert (sync / "narrow-read").exists()  # the narrow run's hook ran: the race was forced
    stored = set(Lake(lake_root).read_bars(PartitionKey("synthetic", "1h", "ETH")).timestamp)
    wide, narrow = _expected_hours(*WIDE), _expected_hours(*NARROW)
    assert not (wide | narrow) - stored, f"{len((wide | narrow) - stored)} bars lost"
    daily = Lake(lake_root).read_bars(PartitionKey("synthetic", "1d", "ETH"))
    assert len(daily) == 14  # derived again from the union, not from the narrow window


def test_a_dead_runs_staging_is_cleaned_and_a_live_runs_is_kept(lake, universe, synthetic):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = lake.root / "staging" / "20251001T000000-synthetic-dead00"
    (stale / "bars").mkdir(parents=True)
    (stale / "_owner.json").write_text(f'{{"pid": {int(dead.stdout)}}}')
    (stale / "bars" / "data.parquet").write_bytes(b"half written")
    with lake.run_lock("20251001T000000-synthetic-live00"):
        live = lake.root / "staging" / "20251001T000000-synthetic-live00"
        assert live.is_dir()  # made by the run lock, with its owner
        run_ingest(synthetic, universe.select(["ETH"]), start=ts("2025-10-06"),
                   end=ts("2025-10-08"), lake=lake)
        assert live.is_dir()  # its run still holds its lock
        assert not stale.exists()
        assert [p.name for p in (lake.root / "staging").iterdir()] == [live.name]
    assert not live.exists()  # a run's staging goes with its end
