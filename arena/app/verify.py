"""The verify job: what ``arena season verify`` checks of a lake, and how damage is restored.

Three kinds of damage, each found without writing anything:

* **the ledger**: every contestant's hash chain walked whole (:func:`arena.ledger.chain.
  verify_contestant`): a record missing, a file missing, unreadable or changed, a head that
  names no record;
* **bar partitions**: every partition read whole and checked row by row
  (:func:`arena.data.sanity.bar_problem`): unreadable bytes, bars no validated series has;
* **publications**: torn publications and derived intervals that disagree with their base bars
  (:func:`arena.data.recovery.check_publications`).

``repair`` rolls torn publications forward or back and derives disagreeing intervals again
(what the lake itself holds suffices), and writes a missing head when the chain before it is
whole. ``restore_from`` copies each damaged ledger record and bar partition back from a mirror
(``arena season publish --mirror``, ``arena serve --mirror``), but only a copy that itself checks
out; the damaged copy is moved under ``quarantine/verify-<time>/``, never deleted.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from arena.core.errors import Failed
from arena.data.errors import DamagedFile
from arena.data.lake import Lake, PartitionKey
from arena.data.persistence import MirrorError, fetch_from_mirror
from arena.data.recovery import check_publications
from arena.data.sanity import bar_problem
from arena.ledger.chain import (
    CHAIN_FILE,
    check_link,
    head_path,
    read_link,
    verify_contestant,
    write_head,
)
from arena.ledger.store import Ledger

LEDGER, BARS, PUBLICATION = "ledger", "bars", "publication"


class LakeDamaged(Failed):
    """``arena season verify`` found damage that nothing fixed (exit 1)."""


@dataclass(frozen=True)
class Finding:
    """One piece of damage: its kind (:data:`LEDGER`, :data:`BARS`, :data:`PUBLICATION`), what
    is wrong (one line naming the file), how to restore it, and what was done (``fixed``)."""

    kind: str
    problem: str
    restore: str
    fixed: str = ""

    def describe(self) -> str:
        tail = f"; {self.fixed}" if self.fixed else f"; to restore: {self.restore}"
        return f"{self.kind}: {self.problem}{tail}"


@dataclass
class Verification:
    """What :func:`verify` checked and found."""

    lake: Path
    contestants: int = 0
    records: int = 0
    unchained: int = 0
    partitions: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def damaged(self) -> list[Finding]:
        """The findings nothing fixed: the lake is whole when this is empty."""
        return [f for f in self.findings if not f.fixed]

    def to_json(self) -> dict[str, object]:
        return {"lake": str(self.lake), "contestants": self.contestants, "records": self.records,
                "unchained": self.unchained, "partitions": self.partitions,
                "findings": [{"kind": f.kind, "problem": f.problem, "restore": f.restore,
                              "fixed": f.fixed or None} for f in self.findings],
                "whole": not self.damaged}


def verify(lake: Lake, *, repair: bool = False, restore_from: str | None = None,
           progress: Callable[[str], None] | None = None) -> Verification:
    """Check the lake's ledger, bar partitions and publications (see the module docstring)."""
    say = progress or (lambda _text: None)
    out = Verification(lake.root)
    quarantine = lake.root / "quarantine" / f"verify-{pd.Timestamp.now(tz='UTC'):%Y%m%dT%H%M%S}"
    say("bar partitions")  # first: a restored partition is then judged against its base
    for key in sorted(lake.partitions()):
        out.partitions += 1
        problem = _partition_problem(lake, key)
        if problem is None:
            continue
        relative = key.relative.as_posix()
        fixed = ""
        if restore_from:
            with lake.writer_lock():  # no publication moves files meanwhile
                fixed = _restore(lake, relative, restore_from, quarantine,
                                 lambda copy, k=key: _partition_problem_at(copy, k) is None)
        out.findings.append(Finding(BARS, problem, _mirror_hint(relative, restore_from), fixed))
    say("publications")
    problems = check_publications(lake, repair=repair)
    out.findings += [Finding(PUBLICATION, p.describe(), "arena season verify --repair",
                             "repaired" if p.repaired else "") for p in problems]
    say("ledger")
    ledger = Ledger(lake)
    for name in _contestants(ledger):
        out.contestants += 1
        keys = ledger.chain_keys(name)
        out.records += len(keys)
        damage, unchained = verify_contestant(ledger.dir, name, keys)
        out.unchained += unchained
        for d in damage:
            record = _record_of(ledger.dir, Path(d.path))
            relative = f"ledger/{record}" if record else Path(d.path).relative_to(
                lake.root).as_posix()
            fixed = ""
            if restore_from and record:
                with ledger.contestant_lock(name):  # no cycle of it commits meanwhile
                    fixed = _restore(lake, relative, restore_from, quarantine, _whole_record)
            elif repair and Path(d.path) == head_path(ledger.dir, name):
                fixed = _rewrite_head(ledger, name, keys)
            restore = (_mirror_hint(relative, restore_from) if record
                       else "arena season verify --repair (the head is written again from a "
                            "whole chain)")
            out.findings.append(Finding(LEDGER, d.describe(), restore, fixed))
    return out


def _partition_problem(lake: Lake, key: PartitionKey) -> str | None:
    try:
        table = lake.read_bar_table(key)
    except DamagedFile as exc:
        return str(exc)
    problem = bar_problem(table)
    return None if problem is None else f"{lake.root / key.relative} is damaged: {problem}"


def _partition_problem_at(root: Path, key: PartitionKey) -> str | None:
    return _partition_problem(Lake(root), key)


def _contestants(ledger: Ledger) -> list[str]:
    names = {d.name.split("=", 1)[1] for kind in ("cycles", "monitor")
             for d in (ledger.dir / kind).glob("*/contestant=*") if d.is_dir()}
    names |= {p.stem.split("=", 1)[1] for p in (ledger.dir / "_heads").glob("contestant=*.json")}
    return sorted(n for n in names if not n.startswith("_"))


def _record_of(ledger_dir: Path, path: Path) -> str | None:
    """The record folder (relative to the ledger) a damaged path is or is in; None for a head."""
    try:
        parts = path.relative_to(ledger_dir).parts
    except ValueError:
        return None
    if len(parts) >= 3 and parts[0] in ("cycles", "monitor"):
        return "/".join(parts[:3])
    return None


def _whole_record(folder: Path) -> bool:
    try:
        return check_link(folder) is not None
    except Exception:
        return False


def _mirror_hint(relative: str, mirror: str | None) -> str:
    where = mirror or "<mirror>"
    return (f"copy {where}/{relative} back (arena season verify --restore-from {where} "
            "does it when the mirror's copy checks out)")


def _restore(lake: Lake, relative: str, mirror: str, quarantine: Path,
             whole: Callable[[Path], bool]) -> str:
    """Copy ``relative`` (a record folder or a partition file) from the mirror into a landing
    folder, check it there, move the damaged copy (if any) under ``quarantine``, then rename the
    mirror's into place; the fix done, or an empty string (the reason logged in the text)."""
    target = lake.root / relative
    landing_root = lake.root / "staging" / f"restore-{quarantine.name}"
    landing = landing_root / relative
    try:
        fetch_from_mirror(mirror, relative, landing)
    except MirrorError:
        shutil.rmtree(landing_root, ignore_errors=True)
        return ""
    check_at = landing if landing.is_dir() else landing_root
    if not whole(check_at):
        shutil.rmtree(landing_root, ignore_errors=True)
        return ""
    if target.exists():
        aside = quarantine / relative
        aside.parent.mkdir(parents=True, exist_ok=True)
        target.rename(aside)
    target.parent.mkdir(parents=True, exist_ok=True)
    landing.rename(target)
    shutil.rmtree(landing_root, ignore_errors=True)
    return f"restored from {mirror}"


def _rewrite_head(ledger: Ledger, name: str, keys: list[str]) -> str:
    """Write a missing head from a chain that is whole (every link checked)."""
    if not keys:
        return ""
    damage, _ = verify_contestant(ledger.dir, name, keys)
    if any(Path(d.path) != head_path(ledger.dir, name) for d in damage):
        return ""
    link = read_link(ledger.dir / keys[-1])
    if link is None or not (ledger.dir / keys[-1] / CHAIN_FILE).is_file():
        return ""
    write_head(ledger.dir, name, link)
    return "repaired: the head is written again from the whole chain"
