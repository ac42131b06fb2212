"""The history check a commit pays: does it stay flat over a season?

Before a record is built, the contestant's whole history is checked against its verified point
(:func:`arena.ledger.verified.check_chain`: one ``stat`` per file whose signature still holds,
hashed again only where one moved). This script records ``--days`` (365) cycles for
``--contestants`` (20) contestants, each record with the files a traded cycle writes, and at a
few days prints, for the whole roster:

* the check as a commit pays it, in a process that has read the journals before (the cycle's
  turns, the monitor's ticks in a long-lived worker);
* the same in a fresh process (the journals read from disk first);
* the baseline measured in the same run: every file of every record hashed (what the check costs
  without a verified point), and the ratio of the two;
* the growth of the check against the first measured day (flat is 1.0).

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


def check_all(root: Path, names: list[str]) -> float:
    """CPU seconds of the roster's history checks, as a commit runs them."""
    ledger = Ledger(root)
    keys = {name: ledger.chain_keys(name) for name in names}
    c0 = cpu()
    for name in names:
        verified.check_chain(ledger.dir, name, keys[name])
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
    print(f"{args.contestants} contestants, {args.days} days; CPU s for the whole roster")
    print(f"{'day':>5} {'files':>8} {'check':>8} {'fresh':>8} {'hash all':>9} "
          f"{'check/hash':>11} {'growth':>7}")
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
            check = check_all(root, names)
            first = first or check
            cold = fresh(root, names)
            baseline = hash_all(root)
            print(f"{day:>5} {files:>8,} {check:>8.3f} {cold:>8.3f} {baseline:>9.3f} "
                  f"{check / baseline:>11.2f} {check / first:>7.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
