"""Clean stops and clean errors of the ``arena`` command.

* ``SIGINT``/``SIGTERM`` during an ingest (a real ``arena ingest`` process) or during a cycle
  whose model call is pending (a real ``arena cycle`` process, the model a slow loopback stub):
  exit ``128 + signum``, one line on stderr and no traceback, the run's staging folder gone,
  nothing half-published, no partial ledger record; the next cycle runs.
* A full or read-only disk (injected: tests run as root) while an ingest stages its files, while
  it writes its manifest, and while the ledger writes a record: one line naming the path and the
  errno, exit 1, nothing published or recorded, the manifest written when it can be.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from arena.app.verify import verify
from arena.cli import main
from arena.core.settings import Interrupted, stop_signals
from arena.data.lake import Lake
from arena.ledger.store import Ledger
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.market_lakes import season_lake

CYCLE = "2025-11-26T16:00:00+00:00"
HOLD = json.dumps({"reasoning": "Nothing to do.", "decisions": []})


def _poll(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait until ``condition()`` holds (checked every 50 ms), failing after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:.0f} s: {what}")
        time.sleep(0.05)


def _default_signals() -> None:
    """In the child: SIGINT and SIGTERM as an operator's shell gives them. A test run started
    in the background by a non-interactive shell inherits SIGINT ignored, and an arena command
    keeps a signal it was started to ignore ignored (as ``nohup`` asks)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _arena(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "arena.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy(),
                            preexec_fn=_default_signals)


def _stop(proc: subprocess.Popen, signum: int) -> tuple[int, str]:
    """Send ``signum``; the exit code and stderr (the process must end within 60 s)."""
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"arena did not stop within 60 s of {signal.Signals(signum).name}")
    return proc.returncode, err


def _staged_runs(lake: Path) -> list[str]:
    staging = lake / "staging"
    return sorted(p.name for p in staging.iterdir()) if staging.is_dir() else []


def _files(root: Path) -> dict[str, str]:
    """Every file under ``root`` (relative path -> sha256)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()} if root.is_dir() else {}


# ------------------------------------------------------------------------------ interrupts
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_ingest_stops_cleanly(tmp_path, signum):
    lake = tmp_path / "lake"
    proc = _arena("ingest", "--lake", str(lake), "--start", "2025-03-01", "--end", "2025-07-01")
    try:  # staged files exist from the end of the fetch until the publication
        _poll(lambda: bool(_staged_runs(lake)) or proc.poll() is not None, 60,
              "the ingest staged its files")
    finally:
        if proc.poll() is not None:
            pytest.fail(f"the ingest ended before it was interrupted: {proc.communicate()}")
    code, err = _stop(proc, signum)
    assert code == 128 + signum
    assert "Traceback" not in err
    assert err.strip() == (f"arena ingest: interrupted ({signal.Signals(signum).name}); "
                           "nothing half-published, staging cleaned")
    assert _staged_runs(lake) == []
    assert not list((lake / "_locks" / "runs").glob("*.lock"))  # the run's lock is gone too
    # all-or-nothing per asset: an asset has every interval of the run, or none of them
    intervals: dict[str, set[str]] = {}
    for path in (lake / "bars").rglob("*.parquet"):
        assert pq.read_table(path, partitioning=None).num_rows > 0
        parts = dict(p.split("=", 1) for p in path.relative_to(lake / "bars").parts[:-1])
        intervals.setdefault(parts["symbol"], set()).add(parts["interval"])
    assert len({frozenset(v) for v in intervals.values()}) <= 1, intervals
    assert all(len(v) == 5 for v in intervals.values()), intervals
    assert not list(lake.rglob("*.tmp"))
    _verified_whole(lake)


def _verified_whole(lake: Path) -> None:
    """``arena season verify``'s check finds the lake whole: a stop leaves no damage."""
    found = verify(Lake(lake))
    assert not found.damaged, [f.describe() for f in found.findings]


def test_stop_signals_raise_interrupted_and_restore_the_handlers():
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Interrupted) as caught, stop_signals():
        signal.raise_signal(signal.SIGTERM)
    assert caught.value.signum == signal.SIGTERM and caught.value.name == "SIGTERM"
    assert isinstance(caught.value, KeyboardInterrupt)  # every interrupt cleanup runs for it
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_stop_signal_dropped_inside_a_finaliser_still_stops_the_block(monkeypatch):
    """The interpreter runs a handler wherever it is, a ``__del__`` included, and drops what a
    finaliser raises: the stop must not be lost with it."""

    class Stops:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGTERM)

    dropped: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: dropped.append(u.exc_value))
    ran_on = False
    with pytest.raises(Interrupted) as caught, stop_signals():
        Stops()  # collected at once: its finaliser gets the signal, and the interrupt is dropped
        ran_on = True
    assert ran_on  # the block did run on: only its exit could stop it
    assert caught.value.signum == signal.SIGTERM
    assert [type(e) for e in dropped] == [Interrupted]  # what Python printed and dropped


def test_a_stop_signal_turned_into_another_error_by_a_cleanup_is_still_a_stop():
    with pytest.raises(Interrupted) as caught, stop_signals():
        try:
            signal.raise_signal(signal.SIGTERM)
        except KeyboardInterrupt as exc:
            raise RuntimeError("a cleanup that reports its own failure") from exc
    assert caught.value.signum == signal.SIGTERM
    assert isinstance(caught.value.__cause__, RuntimeError)


@pytest.fixture
def cycle_lake(tmp_path_factory, tmp_path, universe):
    """A one-day season (2025-11-26) with a house contestant and a slow model (4 s an answer)."""
    with OpenAIStub(default=StubResponse.answer(HOLD, delay=4.0)) as stub:
        roster = ("contestants:\n"
                  "  - {name: momentum, kind: house, strategy: momentum}\n"
                  f"  - {{name: slow-llm, kind: llm, model: openai/stub-model, "
                  f"api_base: '{stub.url}', params: {{timeout: 30, num_retries: 0}}}}\n")
        yield season_lake(tmp_path_factory, universe, tmp_path / "lake", roster).root, stub


def _whole_records(lake: Path) -> dict[str, list[str]]:
    """Each recorded contestant's tables, every one of which must read (no partial record)."""
    ledger = Ledger(lake)
    out = {}
    for key in ledger.records():
        folder = ledger.record_dir(key.cycle_at, key.contestant)
        tables = sorted(p.stem for p in folder.glob("*.parquet"))
        for name in tables:
            pq.read_table(folder / f"{name}.parquet", partitioning=None)
        out[key.contestant] = tables
    return out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_cycle_interrupted_while_the_model_thinks_records_nothing_in_part(cycle_lake, signum):
    lake, stub = cycle_lake
    proc = _arena("cycle", "--at", CYCLE, "--no-publish", "--lake", str(lake))
    _poll(lambda: stub.in_flight > 0 or proc.poll() is not None, 90, "the model call is pending")
    assert proc.poll() is None, proc.communicate()
    code, err = _stop(proc, signum)
    assert code == 128 + signum, err
    assert "Traceback" not in err
    assert f"arena cycle: interrupted ({signal.Signals(signum).name})" in err
    records = _whole_records(lake)
    complete = sorted(p.stem for p in (lake / "ledger" / "cycles" / "cycle=_schema"
                                       / "contestant=_schema").glob("*.parquet"))
    assert all(tables == complete for tables in records.values())  # whole, or absent
    assert not list((lake / "ledger" / "_staging").glob("*"))
    _verified_whole(lake)
    again = subprocess.run([sys.executable, "-m", "arena.cli", "cycle", "--at", CYCLE, "--no-publish", "--lake",
                            str(lake)], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert "Traceback" not in again.stderr
    assert set(_whole_records(lake)) == {"momentum", "slow-llm"}
    _verified_whole(lake)


# ------------------------------------------------------------------------------ full disks
def _fail_after(calls: int, error: OSError, real: Callable) -> Callable:
    """``real``, failing with ``error`` from its ``calls + 1``-th call on."""
    count = {"n": 0}

    def write(*args, **kwargs):
        count["n"] += 1
        if count["n"] > calls:
            raise error
        return real(*args, **kwargs)

    return write


@pytest.fixture(scope="module")
def ingested(tmp_path_factory) -> Path:
    """A small lake: three assets, ten days."""
    lake = tmp_path_factory.mktemp("stops") / "lake"
    assert main(["ingest", "--lake", str(lake), "--symbols", "ETH,AAPL,SPY",
                 "--start", "2025-06-01", "--end", "2025-06-11"]) == 0
    return lake


def _copy(lake: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(lake, dest, symlinks=True)
    return dest


def _ingest_more(lake: Path) -> int:
    return main(["ingest", "--lake", str(lake), "--symbols", "ETH,AAPL,SPY",
                 "--start", "2025-06-01", "--end", "2025-06-21"])


def test_a_full_disk_during_an_ingest_is_one_line_and_publishes_nothing(ingested, tmp_path,
                                                                        monkeypatch, capsys):
    lake = _copy(ingested, tmp_path / "lake")
    capsys.readouterr()
    before = _files(lake / "bars")
    earlier = set((lake / "manifests" / "ingest").glob("*.json"))
    path = str(lake / "staging" / "x.parquet")
    monkeypatch.setattr(pq, "write_table", _fail_after(
        4, OSError(errno.ENOSPC, "No space left on device", path), pq.write_table))
    assert _ingest_more(lake) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    [line] = err.strip().splitlines()
    assert line.startswith("arena ingest: ingest ")
    assert "the lake could not be written: No space left on device (ENOSPC): " + path in line
    assert "nothing published" in line and "staging removed" in line
    assert _files(lake / "bars") == before  # every asset keeps its partitions byte for byte
    assert _staged_runs(lake) == []
    [written] = set((lake / "manifests" / "ingest").glob("*.json")) - earlier
    assert str(written) in line  # the failed run's manifest is written
    manifest = json.loads(written.read_text())
    assert manifest["status"] == "failed" and manifest["published"] == []
    assert "ENOSPC" in manifest["error"]
    assert {a["status"] for a in manifest["assets"].values()} == {"failed"}


def test_a_read_only_manifest_folder_is_said_too(ingested, tmp_path, monkeypatch, capsys):
    import arena.data.lake as lake_module

    lake = _copy(ingested, tmp_path / "lake")
    capsys.readouterr()
    before = _files(lake / "bars")
    monkeypatch.setattr(pq, "write_table", _fail_after(
        0, OSError(errno.ENOSPC, "No space left on device", str(lake / "staging")),
        pq.write_table))

    def read_only(path: Path, text: str) -> Path:
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(lake_module, "write_text", read_only)
    assert _ingest_more(lake) == 1
    err = capsys.readouterr().err
    [line] = err.strip().splitlines()
    assert "No space left on device (ENOSPC)" in line
    assert ("the manifest could not be written either: Read-only file system (EROFS): "
            + str(lake / "manifests" / "ingest")) in line
    assert _files(lake / "bars") == before and _staged_runs(lake) == []


def test_an_interrupted_or_full_ledger_write_records_nothing(tmp_path_factory, tmp_path,
                                                             universe, monkeypatch, capsys):
    roster = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", roster).root
    real = Ledger._write_table
    cycle = ["cycle", "--at", CYCLE, "--no-publish", "--lake", str(lake)]

    def stopped_after_one(error: BaseException):
        def write(self, path: Path, table) -> None:
            real(self, path, table)  # the first table is written, then the write stops
            raise error
        return write

    # an interrupt in the middle of the record (in the turn's worker thread)
    monkeypatch.setattr(Ledger, "_write_table", stopped_after_one(Interrupted(signal.SIGINT)))
    capsys.readouterr()
    assert main(cycle) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err and "arena cycle: interrupted (SIGINT)" in err
    assert Ledger(lake).records() == []
    assert not list((lake / "ledger" / "_staging").glob("*"))

    # a full disk in the middle of the record
    error = OSError(errno.ENOSPC, "No space left on device", str(lake / "ledger" / "x"))
    monkeypatch.setattr(Ledger, "_write_table", stopped_after_one(error))
    assert main(cycle) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert "No space left on device (ENOSPC)" in out + err
    assert Ledger(lake).records() == []
    assert not list((lake / "ledger" / "_staging").glob("*"))
    monkeypatch.undo()
    assert main(["cycle", "--at", CYCLE, "--no-publish", "--lake", str(lake)]) == 0  # room again
    assert [k.contestant for k in Ledger(lake).records()] == ["momentum"]
    _verified_whole(lake)
