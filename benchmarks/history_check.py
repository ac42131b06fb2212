"""The history check a commit pays: does it stay flat over a season?

Before a record is built, the contestant's history is checked against its verified point
(:func:`arena.ledger.verified.check_chain`: a ``stat`` per record's folder, and per file of the
records after the last sweep, hashed again only where one moved; every file of every record at
the sweep, every ``SWEEP_EVERY`` records). This script records ``--days`` (365) cycles for
``--contestants`` (20) contestants, each record with the files a traded cycle writes, and at a
few days prints, CPU seconds for the whole roster:

* ``commit``: the check of a commit that is not a sweep (the book holds every record), in a
  process that has read the journals before (the cycle's turns, the monitor's ticks in a
  long-lived worker), and ``fresh``: the same in a process of its own (journals read first);
* ``sweep``: the check of a sweep (every file's signature), and ``per commit``: one sweep and
  ``SWEEP_EVERY - 1`` commits over ``SWEEP_EVERY``, what a cycle pays on average;
* the baseline measured in the same run: every file of every record hashed (what the check costs
  without a verified point), and the ratio of the two;
* the growth of the per-commit cost against the first measured day (flat is 1.0).

    python benchmarks/history_check.py [--days 365] [--contestants 20]
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from arena.engine.outcomes import CycleOutcome
from arena.ledger import verified
from arena.ledger.records import CycleRecord
from arena.ledger.store import Ledger

START = pd.Timestamp("2026-01-01 16:00", tz="UTC")
PROMPT = "a prompt of a few hundred characters " * 10


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def record(name: str, at: pd.Timestamp) -> CycleRecord:
    return CycleRecord(name, at, CycleOutcome.NO_TRADE.value, prompt=PROMPT,
                       responses={"answer": '{"decisions": []}'})


def check_all(root: Path, names: list[str], sweep: bool = False) -> float:
    """CPU seconds of the roster's history checks, as a commit runs them: its book holding
    every record, or (``sweep``) a sweep."""
    ledger = Ledger(root)
    keys = {name: ledger.chain_keys(name) for name in names}
    c0 = cpu()
    for name in names:
        verified.check_chain(ledger.dir, name, keys[name],
                             reads_from=0 if sweep else len(keys[name]))
    return cpu() - c0


def hash_all(root: Path) -> float:
    """CPU seconds to hash every file of every record (the baseline: no verified point)."""
    c0 = cpu()
    for path in sorted((root / "ledger" / "cycles").rglob("*")):
        if path.is_file():
            hashlib.sha256(path.read_bytes()).hexdigest()
    return cpu() - c0


def fresh(root: Path, names: list[str]) -> float:
    """The roster's checks in a process of its own (its journals read from disk)."""
    here = str(Path(__file__).parents[1])
    code = (f"import sys; from pathlib import Path; sys.path.insert(0, {here!r}); "
            "from benchmarks.history_check import check_all; "
            f"print(check_all(Path({str(root)!r}), {names!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--contestants", type=int, default=20)
    args = parser.parse_args()
    names = [f"model-{i:02d}" for i in range(args.contestants)]
    marks = sorted({d for d in (28, 90, 180, args.days) if d <= args.days})
    first: float | None = None
    every = verified.SWEEP_EVERY
    print(f"{args.contestants} contestants, {args.days} days; CPU s for the whole roster; "
          f"a sweep every {every} records")
    print(f"{'day':>5} {'files':>8} {'commit':>8} {'fresh':>8} {'sweep':>8} {'per commit':>11} "
          f"{'hash all':>9} {'per commit/hash':>16} {'growth':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ledger = Ledger(root)
        for day in range(1, args.days + 1):
            at = START + pd.Timedelta(days=day)
            for name in names:
                ledger.record_cycle(at, name, lambda n=name, t=at: record(n, t))
            if day not in marks:
                continue
            files = sum(1 for p in (root / "ledger" / "cycles").rglob("*") if p.is_file())
            swept = check_all(root, names, sweep=True)  # the sweep point now the newest record
            check = check_all(root, names)
            cold = fresh(root, names)
            average = (swept + (every - 1) * check) / every
            first = first or average
            baseline = hash_all(root)
            print(f"{day:>5} {files:>8,} {check:>8.3f} {cold:>8.3f} {swept:>8.3f} "
                  f"{average:>11.3f} {baseline:>9.3f} {average / baseline:>16.3f} "
                  f"{average / first:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
