"""The verify job: what ``arena season verify`` checks of a lake, and how damage is restored.

Everything the season wrote, each against the digest recorded where it was published, found
without writing anything but what heals itself:

* **the season** (:data:`SEASON`): ``season.json``, the roster copy and its change log, each
  sealed with its own digest (:func:`arena.pipeline.season_files.check_sealed`), and still
  loadable;
* **bar partitions** (:data:`BARS`): every partition read whole and checked row by row
  (:func:`arena.data.sanity.bar_problem`): unreadable bytes, bars no validated series has;
* **publications** (:data:`PUBLICATION`): torn publications and derived intervals that disagree
  with their base bars (:func:`arena.data.recovery.check_publications`);
* **the ledger** (:data:`LEDGER`): every contestant's hash chain walked whole (:func:`arena.
  ledger.chain.verify_contestant`): a record missing - by its successor's link, or by the
  verified point that proved it (:mod:`arena.ledger.verified`) -, a file missing, unreadable,
  changed or added; and its head;
* **prompts** (:data:`PROMPTS`): each stored prompt text hashes to its name (the prompt store is
  content-addressed), and every prompt a record names is stored;
* **the warehouse** (:data:`WAREHOUSE`): the published marts and ``warehouse.duckdb`` against
  the digests their publication recorded (:func:`arena.pipeline.warehouse.check_published`).

What a crash leaves without losing anything is healed, never called damage: a ledger head one
record behind, or missing after its chain's first record (a run stopped between a record's
rename and its head's write), is written again; a warehouse one publication behind the marts is
copied again from dbt's database when that is the one the marts name. ``repair`` rolls torn
publications forward or back, derives disagreeing intervals again, and writes a missing head
when the chain before it is whole. ``restore_from`` copies each damaged ledger record, prompt,
season file and bar partition back from a mirror (``arena season publish --mirror``, ``arena
serve --mirror``), but only a copy that itself checks out; the damaged copy is moved under
``quarantine/verify-<time>/``, never deleted.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd
from filelock import FileLock

from arena.agents.roster import RosterError, load_roster
from arena.app.publish import PUBLISH_LOCK
from arena.core.errors import Failed
from arena.data.errors import DamagedFile
from arena.data.lake import Lake, PartitionKey
from arena.data.persistence import MirrorError, fetch_from_mirror
from arena.data.recovery import (
    MISSING_FILE,
    RECORD,
    check_bar_digests,
    check_publications,
    copy_problem,
)
from arena.data.sanity import bar_problem
from arena.ledger.chain import (
    CHAIN_FILE,
    Damage,
    check_link,
    file_sha256,
    head_path,
    read_head,
    read_link,
    verify_contestant,
    write_head,
)
from arena.ledger.records import stamp
from arena.ledger.store import Ledger
from arena.ledger.verified import proven_records
from arena.market.blind import Blinding, BlindingError
from arena.pipeline.season_config import SeasonConfigError, find_season, season_blinding
from arena.pipeline.season_files import (
    BLINDING,
    CONFIG,
    ROSTER,
    blinding_path,
    changes_path,
    check_sealed,
    config_path,
    roster_path,
    season_file_problem,
)
from arena.pipeline.season_roster import roster_lock
from arena.pipeline.warehouse import REPUBLISH, check_published

SEASON, LEDGER, PROMPTS = "season", "ledger", "prompts"
BARS, PUBLICATION, WAREHOUSE = "bars", "publication", "warehouse"
HEALED = "healed"


class LakeDamaged(Failed):
    """``arena season verify`` found damage that nothing fixed (exit 1)."""


@dataclass(frozen=True)
class Finding:
    """One piece of damage: its kind (:data:`SEASON`, :data:`LEDGER`, ...), what is wrong (one
    line naming the file), how to restore it, and what was done (``fixed``: restored, repaired,
    or healed - what a crash left, nothing lost)."""

    kind: str
    problem: str
    restore: str
    fixed: str = ""
    subject: str = ""  # a bar partition's (provider/interval/symbol): a repair may derive it

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
    season_files: int = 0
    prompts: int = 0
    published: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def damaged(self) -> list[Finding]:
        """The findings nothing fixed: the lake is whole when this is empty."""
        return [f for f in self.findings if not f.fixed]

    def to_json(self) -> dict[str, object]:
        return {"lake": str(self.lake), "contestants": self.contestants, "records": self.records,
                "unchained": self.unchained, "partitions": self.partitions,
                "season_files": self.season_files, "prompts": self.prompts,
                "published": self.published,
                "findings": [{"kind": f.kind, "problem": f.problem, "restore": f.restore,
                              "fixed": f.fixed or None} for f in self.findings],
                "whole": not self.damaged}


@dataclass(frozen=True)
class _Run:
    """What one verification does besides looking: repair, restore from where, quarantine
    where."""

    lake: Lake
    repair: bool
    mirror: str | None
    quarantine: Path


def verify(lake: Lake, *, repair: bool = False, restore_from: str | None = None,
           progress: Callable[[str], None] | None = None) -> Verification:
    """Check everything the season wrote (see the module docstring)."""
    say = progress or (lambda _text: None)
    out = Verification(lake.root)
    run = _Run(lake, repair, restore_from,
               lake.root / "quarantine" / f"verify-{pd.Timestamp.now(tz='UTC'):%Y%m%dT%H%M%S}")
    say("season")
    _check_season(run, out)
    say("bar partitions")  # before the publications: a restored partition is judged against them
    _check_bars(run, out)
    say("publications")
    problems = check_publications(lake, repair=repair)
    out.findings += [Finding(PUBLICATION, p.describe(), "arena season verify --repair",
                             "repaired" if p.repaired else "") for p in problems]
    derived = {p.subject for p in problems if p.repaired}  # its file written again
    out.findings = [replace(f, fixed="derived again from its base bars (publication, below)")
                    if f.kind == BARS and not f.fixed and f.subject in derived else f
                    for f in out.findings]
    say("ledger")
    damaged = _check_ledger(run, out)
    say("prompts")
    _check_prompts(run, out, damaged)
    say("warehouse")
    _check_warehouse(run, out)
    return out


# ------------------------------------------------------------------------------- the season
def _check_season(run: _Run, out: Verification) -> None:
    """season.json, the roster copy and its change log: sealed and whole, and still loadable."""
    lake = run.lake
    files = [config_path(lake), roster_path(lake)]
    if not any(p.exists() for p in files):
        return  # a lake without a season (a replay of before seasons were written)
    files += [changes_path(lake)] if changes_path(lake).exists() else []
    if blinding_path(lake).exists() or _blind(lake):  # a blind season's secret, there or not
        files.append(blinding_path(lake))
    for path in files:
        out.season_files += 1
        problem = season_file_problem(path)
        problem = problem or _unloadable(path)
        if problem is not None:
            relative = path.relative_to(lake.root).as_posix()
            fixed = ""
            if run.mirror:
                with roster_lock(lake):  # no roster change moves it meanwhile
                    fixed = _restore(run, run.mirror, relative, lambda root, r=relative:
                                     check_sealed(root / r).problem is None)
            out.findings.append(Finding(SEASON, problem, _mirror_hint(relative, run.mirror),
                                        fixed))


def _blind(lake: Lake) -> bool:
    """Whether the lake's season is blind, as far as its config can be read (a damaged config
    is its own finding)."""
    try:
        season = find_season(lake)
    except SeasonConfigError:
        return False
    return season is not None and season.blind


def _unloadable(path: Path) -> str | None:
    """Why a season file that holds its digest still cannot be used (None: it can)."""
    try:
        if path.name == CONFIG:
            find_season(Lake(path.parent.parent))
        elif path.name == ROSTER:
            load_roster(path)
        elif path.name == BLINDING:
            season = find_season(Lake(path.parent.parent))
            if season is not None and season.blind:
                season_blinding(Lake(path.parent.parent), season)  # its season's, covering it
            else:
                Blinding.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (SeasonConfigError, RosterError, BlindingError, ValueError) as exc:
        return f"{path} cannot be used: {exc}"
    return None


# ------------------------------------------------------------------------------------- bars
def _check_bars(run: _Run, out: Verification) -> None:
    """Every partition read whole against the digest its publication recorded and checked row
    by row; then every recorded partition whose file is gone, and every digest record that
    cannot be read (:func:`arena.data.recovery.check_bar_digests`: the files just read are not
    hashed again)."""
    lake = run.lake
    for key in sorted(lake.partitions()):
        out.partitions += 1
        problem = _partition_problem(lake, key)
        if problem is not None:
            out.findings.append(_bar_finding(run, key, problem))
    for p in check_bar_digests(lake):
        if p.kind == MISSING_FILE and p.key is not None:
            out.findings.append(_bar_finding(run, p.key, p.describe()))
        elif p.kind == RECORD:
            out.findings.append(Finding(BARS, p.describe(), p.repair))


def _bar_finding(run: _Run, key: PartitionKey, problem: str) -> Finding:
    """A damaged or missing partition, restored from the mirror when asked and its copy is the
    file the publication recorded (or, unrecorded, reads whole)."""
    lake, relative = run.lake, key.relative.as_posix()
    fixed = ""
    if run.mirror:
        with lake.writer_lock():  # no publication moves files meanwhile
            fixed = _restore(run, run.mirror, relative,
                             lambda copy, k=key: _partition_problem_at(copy, k) is None
                             and copy_problem(lake, k, copy / k.relative) is None)
    return Finding(BARS, problem, _mirror_hint(relative, run.mirror), fixed, str(key))


def _partition_problem(lake: Lake, key: PartitionKey) -> str | None:
    try:
        table = lake.read_bar_table(key)
    except DamagedFile as exc:
        return str(exc)
    problem = bar_problem(table)
    return None if problem is None else f"{lake.root / key.relative} is damaged: {problem}"


def _partition_problem_at(root: Path, key: PartitionKey) -> str | None:
    return _partition_problem(Lake(root), key)


# ----------------------------------------------------------------------------------- ledger
def _check_ledger(run: _Run, out: Verification) -> set[str]:
    """Every contestant's chain; returns the damaged records' keys (their prompts unread)."""
    ledger = Ledger(run.lake)
    damaged: set[str] = set()
    for name in _contestants(ledger):
        out.contestants += 1
        keys = ledger.chain_keys(name)
        out.records += len(keys)
        damage, unchained = verify_contestant(ledger.dir, name, keys)
        out.unchained += unchained
        damage = _heal_head(ledger, name, keys, damage + _forgotten(ledger, name, keys, damage),
                            out)
        head = str(head_path(ledger.dir, name))
        records = [d for d in damage if d.path != head]
        findings = []
        for d in records:
            record = _record_of(ledger.dir, Path(d.path))
            damaged |= {record} if record else set()
            findings.append(_ledger_finding(run, ledger, name, keys, d, record))
        if len(records) < len(damage) and records and all(f.fixed for f in findings):
            keys = ledger.chain_keys(name)  # its records restored: the head judged again
            again, _ = verify_contestant(ledger.dir, name, keys)
            damage = _heal_head(ledger, name, keys, again + _forgotten(ledger, name, keys, again),
                                out)
        findings += [_ledger_finding(run, ledger, name, keys, d, None)
                     for d in damage if d.path == head]
        out.findings += findings
    return damaged


def _ledger_finding(run: _Run, ledger: Ledger, name: str, keys: list[str], d: Damage,
                    record: str | None) -> Finding:
    relative = f"ledger/{record}" if record else Path(d.path).relative_to(
        run.lake.root).as_posix()
    fixed = ""
    if run.mirror and record:
        with ledger.contestant_lock(name):  # no cycle of it commits meanwhile
            fixed = _restore(run, run.mirror, relative, _whole_record)
    elif run.repair and Path(d.path) == head_path(ledger.dir, name):
        fixed = _rewrite_head(ledger, name, keys)
    restore = (_mirror_hint(relative, run.mirror) if record
               else "arena season verify --repair (the head is written again from a whole chain)")
    return Finding(LEDGER, d.describe(), restore, fixed)


def _forgotten(ledger: Ledger, name: str, keys: list[str], damage: list[Damage]) -> list[Damage]:
    """The records the contestant's verified point proved that are no longer there (and that
    its chain did not name already)."""
    named = {d.path for d in damage}
    listed = set(keys)
    out = []
    for key in proven_records(ledger.dir, name):
        path = str(ledger.dir / key)
        if key not in listed and path not in named:
            out.append(Damage(name, path, f"{path} is missing: it was proven part of {name}'s "
                                          "chain"))
    return out


def _heal_head(ledger: Ledger, name: str, keys: list[str], damage: list[Damage],
               out: Verification) -> list[Damage]:
    """Write the head again where a crash left it missing or one record behind and the chain is
    otherwise whole (nothing was lost): a finding that says so; the damage left."""
    head = head_path(ledger.dir, name)
    if not keys or any(d.path != str(head) for d in damage):
        return damage
    last = read_link(ledger.dir / keys[-1])
    if last is None:
        return damage
    if damage:  # the head is missing: after its chain's first record, or a record proven since
        first = last.previous is None or last.previous.digest is None
        if head.exists() or not (first or keys[-1] in proven_records(ledger.dir, name)):
            return damage
        problem, how = damage[0].describe(), "written again from the whole chain"
    else:
        current = read_head(ledger.dir, name)
        if current is None or current.key == last.key or last.previous != current:
            return damage
        problem, how = (f"{head} names {current.key}, one record behind the last one",
                        "rolled forward to the last record")
    try:
        with ledger.contestant_lock(name):
            write_head(ledger.dir, name, last)
    except OSError:  # a lake this user cannot write: named, to be healed by the next run
        return damage or [Damage(name, str(head), f"{problem} (not healed: the lake cannot be "
                                                  "written)")]
    out.findings.append(Finding(LEDGER, problem, "", f"{HEALED}: {how} (a run stopped between "
                                                     "a record and its head; nothing was lost)"))
    return []


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


# ---------------------------------------------------------------------------------- prompts
def _check_prompts(run: _Run, out: Verification, damaged: set[str]) -> None:
    """Each stored prompt hashes to its name; each prompt a whole record names is stored."""
    ledger = Ledger(run.lake)
    folder = ledger.dir / "prompts"
    stored = {p.stem: p for p in folder.glob("*.txt")} if folder.is_dir() else {}
    problems: dict[str, str] = {}
    for sha, path in sorted(stored.items()):
        out.prompts += 1
        try:
            actual = file_sha256(path)
        except OSError as exc:
            problems[sha] = f"{path} cannot be read: {exc.strerror or exc}"
            continue
        if actual != sha:
            problems[sha] = (f"{path} has changed since it was stored (its SHA-256 is "
                             f"{actual[:12]}...; a prompt is stored under its digest)")
    for sha, key in _prompts_named(ledger, damaged).items():
        if sha not in stored:
            problems[sha] = f"{folder / sha}.txt is missing: the record {key} names it"
    for sha, problem in sorted(problems.items()):
        relative = f"ledger/prompts/{sha}.txt"
        fixed = _restore(run, run.mirror, relative, lambda root, r=relative, s=sha: _stored_as(
            root / r, s)) if run.mirror else ""
        out.findings.append(Finding(PROMPTS, problem, _mirror_hint(relative, run.mirror), fixed))


def _prompts_named(ledger: Ledger, damaged: set[str]) -> dict[str, str]:
    """Prompt digest -> the first whole record that names it (its outcome's prompt): the
    outcomes read at once, one by one only when one of them cannot be read."""
    folders = [f for f in ledger.folders() if f.relative_to(ledger.dir).as_posix() not in damaged]
    try:
        batches = [(folders, ledger.read_records("outcome", folders))]
    except DamagedFile:
        batches = []
        for folder in folders:
            try:
                batches.append(([folder], ledger.read_records("outcome", [folder])))
            except DamagedFile:
                continue  # verify_contestant named it
    named: dict[str, str] = {}
    for group, table in batches:
        keys = {(f.parent.name.split("=", 1)[1], f.name.split("=", 1)[1]): f for f in group}
        for row in table.select(["cycle_at", "contestant", "prompt_sha256"]).to_pylist():
            if row["prompt_sha256"]:
                folder = keys.get((stamp(pd.Timestamp(row["cycle_at"])), row["contestant"]))
                where = folder.relative_to(ledger.dir).as_posix() if folder else "a record"
                named.setdefault(row["prompt_sha256"], where)
    return named


def _stored_as(path: Path, sha: str) -> bool:
    try:
        return file_sha256(path) == sha
    except OSError:
        return False


# -------------------------------------------------------------------------------- warehouse
def _check_warehouse(run: _Run, out: Verification) -> None:
    lock = run.lake.root / PUBLISH_LOCK
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        held: AbstractContextManager[object] = FileLock(str(lock))
    except OSError:  # a lake this user cannot write: checked as it is, nothing healed
        held = nullcontext()
    with held:  # no publication swaps the files meanwhile
        published = check_published(run.lake)
    out.published = published.files
    out.findings += [Finding(WAREHOUSE, text, "", f"{HEALED}: copied again")
                     for text in published.healed]
    out.findings += [Finding(WAREHOUSE, problem, REPUBLISH) for problem in published.problems]


# ------------------------------------------------------------------------------ restoration
def _mirror_hint(relative: str, mirror: str | None) -> str:
    where = mirror or "<mirror>"
    return (f"copy {where}/{relative} back (arena season verify --restore-from {where} "
            "does it when the mirror's copy checks out)")


def _restore(run: _Run, mirror: str, relative: str, whole: Callable[[Path], bool]) -> str:
    """Copy ``relative`` (a record folder or a file) from ``mirror`` into a landing folder,
    check it there, move the damaged copy (if any) under the quarantine, then rename the
    mirror's into place; the fix done, or an empty string (the reason logged in the text)."""
    target = run.lake.root / relative
    landing_root = run.lake.root / "staging" / f"restore-{run.quarantine.name}"
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
        aside = run.quarantine / relative
        aside.parent.mkdir(parents=True, exist_ok=True)
        target.rename(aside)
    target.parent.mkdir(parents=True, exist_ok=True)
    landing.rename(target)
    shutil.rmtree(landing_root, ignore_errors=True)
    return f"restored from {mirror}"
