"""The attempts log: every failed attempt to play a contestant's cycle, kept beside the ledger.

The ledger is written once per (cycle, contestant), so an operational failure - a model that
could not be reached, a deadline that passed - writes no record there. It goes here instead,
one JSON line per attempt under ``<lake>/attempts/cycle=<stamp>/contestant=<name>.jsonl``: when
it failed and why. A retry reads it to know whom to play again; the next cycle reads it to
record a contestant still without a record as forfeited, with the reason. The values of the key
variables (``*_API_KEY`` and the roster's) are masked before anything is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from filelock import FileLock

from arena.data.lake import Lake
from arena.ledger.records import MIN_SECRET_CHARS, SECRET_SUFFIX, check_name, stamp, unstamp

MASK = "***"


@dataclass(frozen=True)
class Attempt:
    cycle_at: pd.Timestamp
    contestant: str
    tried_at: pd.Timestamp
    error: str


class Attempts:
    """The attempts log of a lake (see the module docstring)."""

    def __init__(self, lake: Lake, *, secret_names: Iterable[str] = ()) -> None:
        self.dir = lake.root / "attempts"
        self.secret_names = frozenset(secret_names)

    def _path(self, cycle_at: pd.Timestamp, contestant: str) -> Path:
        return self.dir / f"cycle={stamp(cycle_at)}" / f"contestant={check_name(contestant)}.jsonl"

    def add(self, cycle_at: pd.Timestamp, contestant: str, error: str,
            tried_at: pd.Timestamp | None = None) -> Attempt:
        """Append one failed attempt (its error with every key value masked)."""
        attempt = Attempt(cycle_at, contestant, tried_at or pd.Timestamp.now(tz="UTC"),
                          self.mask(error))
        path = self._path(cycle_at, contestant)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps({"cycle_at": cycle_at.isoformat(), "contestant": contestant,
                           "tried_at": attempt.tried_at.isoformat(), "error": attempt.error})
        with FileLock(str(path) + ".lock"), path.open("a", encoding="utf-8") as f:
            f.write(line + "\n")
        return attempt

    def mask(self, text: str) -> str:
        secrets = [v for n, v in os.environ.items()
                   if (n.upper().endswith(SECRET_SUFFIX) or n in self.secret_names)
                   and len(v) >= MIN_SECRET_CHARS]
        for value in sorted(secrets, key=len, reverse=True):  # a key that prefixes another last
            text = text.replace(value, MASK)
        return text

    def of(self, cycle_at: pd.Timestamp) -> dict[str, list[Attempt]]:
        """The failed attempts of one cycle, per contestant, oldest first."""
        out: dict[str, list[Attempt]] = {}
        folder = self.dir / f"cycle={stamp(cycle_at)}"
        for path in sorted(folder.glob("contestant=*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    out.setdefault(row["contestant"], []).append(Attempt(
                        cycle_at, row["contestant"], pd.Timestamp(row["tried_at"]), row["error"]))
        return out

    def cycles(self) -> list[pd.Timestamp]:
        """The cycles with at least one failed attempt, in order."""
        return sorted(unstamp(p.name.split("=", 1)[1]) for p in self.dir.glob("cycle=*")
                      if p.is_dir())
