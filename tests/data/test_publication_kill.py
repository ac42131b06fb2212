"""A publication killed between two renames is rolled forward or back by the next run.

One asset's publication moves its files into place one ``os.replace`` at a time (BTC over two
more days: its 15m, 1d, 1h and 4h bars and its funding rates, five moves; no week completes). A real process is killed with SIGKILL
right after its k-th move, for every k (0: after its journal, before the first move); the lake
it leaves is then checked without repair (the torn publication and the stale intervals named,
nothing changed), and the next ingest run over the same window (no new bar: the case that
derived nothing before) rolls it forward, so that every interval is the one the whole
publication gives and agrees with its base bars (an oracle of plain pandas resampling).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from arena.app.verify import verify
from arena.data.ingest import build_partitions, fetch_asset, run_ingest
from arena.data.lake import Lake, PartitionKey, TableKey
from arena.data.providers.synthetic import SyntheticProvider
from arena.data.recovery import DERIVED, TORN, check_bar_digests, check_publications
from tests.conftest import ts

ROOT = Path(__file__).resolve().parents[2]
STORED = (ts("2025-10-15"), ts("2025-11-03"))
NEXT = (ts("2025-11-03"), ts("2025-11-05"))
NOW = ts("2026-01-01")
RUN = "20251105T000000-synthetic-killed"
INTERVALS = ("15m", "1h", "4h", "1d", "1w")

_KILLED = textwrap.dedent("""
    import json, os, signal, sys
    from pathlib import Path

    from arena.data.lake import Lake, PartitionKey, TableKey

    root, run_id, after = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    lake = Lake(root)
    staged = lake.staged(run_id, "BTC")
    market = [str(root / "bars"), str(root / "funding")]
    real, moves = os.replace, [0]

    def replace(src, dst):
        into_market = any(str(dst).startswith(m) for m in market)
        if into_market and after == 0:
            os.kill(os.getpid(), signal.SIGKILL)  # the journal is written, nothing moved
        real(src, dst)
        if into_market:
            moves[0] += 1
            if moves[0] == after:
                os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace
    with lake.writer_lock(), lake.run_lock(run_id):
        lake.publish(run_id, staged, group="BTC")
    print(json.dumps({"moves": moves[0]}))
""")


@pytest.fixture(scope="module")
def staged_lake(tmp_path_factory, universe) -> Lake:
    """BTC stored over ``STORED``, and the next run's publication of ``NEXT`` staged (built as
    the ingest builds it), not published."""
    lake = Lake(tmp_path_factory.mktemp("kill") / "template")
    btc = universe.select(["BTC"])
    run_ingest(SyntheticProvider(), btc, start=STORED[0], end=STORED[1], lake=lake, now=NOW)
    fetched = fetch_asset(SyntheticProvider(), universe["BTC"], "15m", *NEXT, lake=lake)
    part = build_partitions(lake, "synthetic", universe["BTC"], fetched, "15m")
    lake.stage(RUN, part.frames, group="BTC")
    return lake


def _copy(lake: Lake, dest: Path) -> Lake:
    shutil.copytree(lake.root, dest, symlinks=True)
    return Lake(dest)


def _market_bytes(lake: Lake) -> dict[str, bytes]:
    return {p.relative_to(lake.root).as_posix(): p.read_bytes()
            for top in ("bars", "funding") for p in sorted((lake.root / top).rglob("*.parquet"))}


def _kill_after(lake: Lake, moves: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", _KILLED, str(lake.root), RUN, str(moves)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _oracle_4h(base: pd.DataFrame) -> pd.DataFrame:
    """4h bars of 24/7 15m bars by plain pandas: complete groups of 16 only."""
    groups = base.set_index("timestamp").resample("4h")
    bars = groups.agg({"open": "first", "high": "max", "low": "min", "close": "last",
                       "volume": "sum"})
    return bars[groups.size() == 16].reset_index()


def test_a_publication_killed_after_each_rename_is_rolled_forward(staged_lake, tmp_path,
                                                                   universe):
    total = len(staged_lake.staged(RUN, "BTC"))
    assert total == 5  # BTC's 15m, 1d, 1h, 4h bars and its funding rates (no week completes)
    whole = _copy(staged_lake, tmp_path / "whole")  # the publication, not killed
    with whole.writer_lock():
        whole.publish(RUN, _staged_keys(whole), group="BTC")
    expected = _market_bytes(whole)
    moved_first = sorted(_staged_keys(staged_lake), key=lambda k: k.relative.as_posix())

    lakes = {k: _copy(staged_lake, tmp_path / f"killed-{k}") for k in range(total + 1)}
    procs = {k: _kill_after(lake, k) for k, lake in lakes.items()}  # all at once: 2 cores
    for k, proc in procs.items():
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, f"after {k} moves: {err[-2000:]}"

    for k, lake in lakes.items():
        before = _market_bytes(lake)
        moved = moved_first[:k]
        assert sum(before[key.relative.as_posix()] == expected[key.relative.as_posix()]
                   for key in moved) == k
        problems = check_publications(lake, universe=universe)
        torn = [p for p in problems if p.kind == TORN]
        assert len(torn) == 1, (k, [p.describe() for p in problems])
        line = torn[0].describe()
        assert line.startswith("BTC: torn publication: ") and RUN in line
        assert f"after {k} of {total} files" in line and "roll it forward" in line
        # the stale intervals the kill left, each named (the base, 15m, moves first)
        stale = {str(key) for key in moved_first[k:]
                 if isinstance(key, PartitionKey) and key.interval != "15m"} if k else set()
        assert {p.subject for p in problems if p.kind == DERIVED} == stale, (k, problems)
        assert _market_bytes(lake) == before and lake.journals()  # the check changed nothing
        # a reader of the torn lake finds each file whole: the previous or the new one
        assert check_bar_digests(Lake(lake.root)) == [], k

        result = run_ingest(SyntheticProvider(), universe.select(["BTC"]), start=NEXT[0],
                            end=NEXT[1], lake=lake, now=NOW)
        recovered = result.manifest["recovered"]
        assert len(recovered) == 1 and "BTC: torn publication" in recovered[0]
        assert "rolled forward" in recovered[0], recovered
        assert not lake.journals() and not (lake.root / "staging" / RUN).exists()
        for key in _staged_keys(whole):
            relative = key.relative.as_posix()
            got = (lake.read_bars(key) if isinstance(key, PartitionKey) else
                   lake.read_table(key))
            want = (whole.read_bars(key) if isinstance(key, PartitionKey) else
                    whole.read_table(key))
            pd.testing.assert_frame_equal(got, want, obj=f"after {k} moves: {relative}")
        base = lake.read_bars(PartitionKey("synthetic", "15m", "BTC"))
        four = lake.read_bars(PartitionKey("synthetic", "4h", "BTC"))
        pd.testing.assert_frame_equal(four, _oracle_4h(base), check_dtype=False,
                                      obj=f"4h after {k} moves")
        assert check_publications(lake, universe=universe) == []
        _assert_recorded_alone(lake)


def test_a_torn_publication_whose_staged_files_are_gone_is_rolled_back(staged_lake, tmp_path,
                                                                      universe):
    lake = _copy(staged_lake, tmp_path / "killed")
    published = _market_bytes(lake)
    proc = _kill_after(lake, 2)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err[-2000:]
    shutil.rmtree(lake.root / "staging" / RUN)  # e.g. removed by hand
    problems = check_publications(lake, universe=universe)
    line = next(p.describe() for p in problems if p.kind == TORN)
    assert "roll it back (the staged files of synthetic/1h/BTC, synthetic/4h/BTC, " \
           "funding/synthetic/BTC are gone" in line
    repaired = check_publications(lake, repair=True, universe=universe)
    assert [p.repaired for p in repaired] == [True]
    assert "rolled back (2 files back to their previous version)" in repaired[0].describe()
    assert _market_bytes(lake) == published and not lake.journals()
    assert check_publications(lake, universe=universe) == []
    _assert_recorded_alone(lake)


def test_a_roll_back_a_kill_cut_short_is_finished_by_the_next_run(staged_lake, tmp_path,
                                                                   universe):
    """Killed after two moves, then killed again while rolling back, after one file was given
    its previous version: the next repair finishes the roll-back (the restored file's backup
    is gone, which is what a restore leaves) instead of failing on it."""
    lake = _copy(staged_lake, tmp_path / "killed")
    published = _market_bytes(lake)
    proc = _kill_after(lake, 2)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err[-2000:]
    shutil.rmtree(lake.root / "staging" / RUN)
    scratch = lake.journal_dir(RUN, "BTC")
    (scratch / "rolling-back").touch()  # what a failed publication writes before undoing
    first = json.loads((scratch / "journal.json").read_text())["files"][0]
    os.replace(first["backup"], lake.root / first["key"])  # the one restore that finished
    repaired = check_publications(lake, repair=True, universe=universe)
    assert [p.repaired for p in repaired] == [True]
    assert _market_bytes(lake) == published and not lake.journals()
    assert check_publications(lake, universe=universe) == []
    _assert_recorded_alone(lake)


def _assert_recorded_alone(lake: Lake) -> None:
    """Every bar file is whole, and its record accepts it alone (no previous file is accepted
    once a publication is rolled forward or back); ``arena season verify``'s check finds the
    lake whole."""
    assert check_bar_digests(Lake(lake.root)) == []
    found = verify(Lake(lake.root))
    assert not found.damaged, [f.describe() for f in found.findings]
    for key in lake.partitions():
        path = lake.path(key)
        assert lake.market.recorded(key.relative.as_posix()) == (
            hashlib.sha256(path.read_bytes()).hexdigest(),), key


def _staged_keys(lake: Lake) -> dict[PartitionKey | TableKey, Path]:
    return lake.staged(RUN, "BTC")


def test_the_journal_names_every_file_before_the_first_move(staged_lake, tmp_path):
    lake = _copy(staged_lake, tmp_path / "killed")
    proc = _kill_after(lake, 0)
    proc.communicate(timeout=300)
    journal = json.loads((lake.journal_dir(RUN, "BTC") / "journal.json").read_text())
    assert [e["key"] for e in journal["files"]] == sorted(
        k.relative.as_posix() for k in _staged_keys(lake))
    assert all(Path(e["backup"]).is_file() for e in journal["files"])  # all were stored before
