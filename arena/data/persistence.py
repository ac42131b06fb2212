"""Persistence proven, not assumed (SPEC §9): a boot counter kept in two stores, and a mirror of
the lake that a failed restore can never overwrite.

**Boot counter.** Every start of ``arena serve`` counts one boot in the lake
(``<lake>/ops/boots.json``) and in a second store that outlives the lake (the Prefect server's
variable: :mod:`arena.flows.persistence`). Comparing the two counts at a start says whether the
lake kept what it was given (:func:`boot_verdict`):

* ``confirmed``: both hold the same count - the lake kept every boot since the last;
* ``unknown``: neither holds one (the first start), or only the lake does, or the lake's is
  ahead (the second store is new: nothing to compare against);
* ``volatile``: the second store remembers boots the lake lost (the lake was wiped or replaced
  by an older copy) - whatever the lake holds cannot be trusted to stay.

**Mirror.** An optional copy of the lake (season, ledger, attempts log, market data and the
digests of its bar files, manifests, validation results, reports, boot history) at a path or fsspec URI. :func:`restore_lake` brings
it back into an empty lake; :func:`upload_lake` copies the lake over the mirror - and refuses
while the last restore failed (``<lake>/ops/restore-failed.json`` exists: a lake that could not
be restored is incomplete, and uploading it would overwrite the good copy with the bad one) or
since a start found the lake volatile (``ops/volatile.json``, lifted by a restore or by the
operator's ``arena serve --lake-checked``, never by a later start). A successful restore
removes both marks.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import fsspec

from arena.core.errors import Failed
from arena.data.digests import DIGESTS_DIR
from arena.data.lake import Lake, write_text

OPS_DIR = "ops"
BOOTS_FILE = "boots.json"
RESTORE_FAILED = "restore-failed.json"
VOLATILE_MARK = "volatile.json"  # a start found the lake volatile: no upload until checked
CONFIRMED, UNKNOWN, VOLATILE = "confirmed", "unknown", "volatile"
KEPT_BOOTS = 100  # the boot history the lake keeps
# the season comes back last: a lake holding it is one a restore finished (arena serve restores
# only a lake without its season)
MIRRORED = ("ledger", "attempts", "bars", DIGESTS_DIR, "earnings", "events", "funding",
            "manifests", "validation", "quarantine", "reports", OPS_DIR, "season")
REQUIRED = ("season", "ledger")  # a mirror without them cannot be restored


@dataclass(frozen=True)
class Boot:
    """One start: its count, when, the verdict and the two counts it was drawn from."""

    count: int
    at: str
    verdict: str
    lake_count: int | None
    store_count: int | None

    def describe(self) -> str:
        why = {CONFIRMED: "the lake and the second store agree",
               UNKNOWN: "nothing to compare against yet" if self.store_count is None
               else "the second store is behind the lake",
               VOLATILE: f"the lake lost boots the second store counted (lake "
                         f"{self.lake_count}, store {self.store_count})"}[self.verdict]
        return f"storage {self.verdict} at boot {self.count} ({self.at}): {why}"


def boot_verdict(lake_count: int | None, store_count: int | None) -> str:
    """The verdict of a start from the counts of the lake and of the second store."""
    if store_count is None:
        return UNKNOWN
    if lake_count is None or lake_count < store_count:
        return VOLATILE
    return CONFIRMED if lake_count == store_count else UNKNOWN


def _ops_json(lake: Lake, name: str) -> dict | None:
    """The lake's ``ops/<name>`` JSON file, or None when it has none."""
    path = lake.root / OPS_DIR / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def boot_history(lake: Lake) -> list[Boot]:
    """The boots the lake remembers, oldest first (empty for a new or wiped lake)."""
    stored = _ops_json(lake, BOOTS_FILE)
    return [] if stored is None else [Boot(**b) for b in stored["boots"]]


def last_boot(lake: Lake) -> Boot | None:
    history = boot_history(lake)
    return history[-1] if history else None


def record_boot(lake: Lake, store_count: int | None, now: dt.datetime) -> Boot:
    """Count a start in the lake after comparing its count with ``store_count`` (the second
    store's, None when it has none); returns the boot, whose ``count`` the caller then writes to
    the second store."""
    history = boot_history(lake)
    lake_count = history[-1].count if history else None
    boot = Boot(max(lake_count or 0, store_count or 0) + 1, now.isoformat(),
                boot_verdict(lake_count, store_count), lake_count, store_count)
    kept = [*history, boot][-KEPT_BOOTS:]
    if boot.verdict == VOLATILE:  # lasts until a restore or an operator's check lifts it
        write_text(lake.root / OPS_DIR / VOLATILE_MARK, json.dumps(asdict(boot), indent=2) + "\n")
    write_text(lake.root / OPS_DIR / BOOTS_FILE,
               json.dumps({"boots": [asdict(b) for b in kept]}, indent=2) + "\n")
    return boot


def volatile_mark(lake: Lake) -> Boot | None:
    """The start that found the lake volatile, while no restore or check has lifted it."""
    mark = _ops_json(lake, VOLATILE_MARK)
    return None if mark is None else Boot(**mark)


def lake_checked(lake: Lake) -> bool:
    """The operator checked a volatile lake and keeps it: uploads to the mirror resume.
    Returns whether a mark was lifted."""
    path = lake.root / OPS_DIR / VOLATILE_MARK
    found = path.is_file()
    path.unlink(missing_ok=True)
    return found


# ------------------------------------------------------------------------------------- mirror
class MirrorError(Failed, RuntimeError):
    """The mirror could not be read or written, or an upload was refused."""


def _fs(uri: str):
    return fsspec.core.url_to_fs(uri)


def restore_failed(lake: Lake) -> dict | None:
    """The mark a failed restore left (what failed, when), or None."""
    return _ops_json(lake, RESTORE_FAILED)


def _mirrored(fs, root: str, name: str) -> str | None:
    """Where the mirror keeps folder ``name``: itself, or the previous copy an upload cut short
    between its two renames left as ``<name>.old``; None when it has neither."""
    for candidate in (f"{root}/{name}", f"{root}/{name}.old"):
        if fs.exists(candidate):
            return candidate
    return None


def restore_lake(lake: Lake, mirror: str, now: dt.datetime) -> list[str]:
    """Copy the mirror's folders into ``lake`` (which must hold none of them yet); returns the
    folders restored. Each folder lands whole or not at all (copied beside, then renamed in).
    A mirror without the season or the ledger cannot be restored. On any failure the lake is
    marked (``ops/restore-failed.json``) so that no upload overwrites the mirror with the
    incomplete lake, and :class:`MirrorError` is raised naming the folders to remove before the
    next try."""
    present = [name for name in MIRRORED if (lake.root / name).exists() and name != OPS_DIR]
    if present:
        raise MirrorError(f"the lake {lake.root} is not empty ({', '.join(present)}): a restore "
                          "only fills an empty lake; move those folders aside first")
    done: list[str] = []
    try:
        fs, root = _fs(mirror)
        root = root.rstrip("/")
        if not fs.exists(root):
            raise FileNotFoundError(f"no mirror at {mirror}")
        found = {name: _mirrored(fs, root, name) for name in MIRRORED}
        missing = [name for name in REQUIRED if found[name] is None]
        if missing:
            raise FileNotFoundError(f"the mirror {mirror} has no {' or '.join(missing)}")
        lake.root.mkdir(parents=True, exist_ok=True)
        for name, source in found.items():
            if source is None:
                continue
            landing = lake.root / f".restoring-{name}"
            shutil.rmtree(landing, ignore_errors=True)
            fs.get(source, str(landing), recursive=True)
            if name == OPS_DIR:  # beside the lake's own ops files (the mark of a failed try)
                (lake.root / OPS_DIR).mkdir(exist_ok=True)
                for item in landing.iterdir():
                    os.replace(item, lake.root / OPS_DIR / item.name)
                landing.rmdir()
            else:
                os.replace(landing, lake.root / name)
            done.append(name)
    except Exception as exc:
        write_text(lake.root / OPS_DIR / RESTORE_FAILED, json.dumps(
            {"mirror": mirror, "at": now.isoformat(), "restored": done,
             "error": f"{type(exc).__name__}: {exc}"}, indent=2) + "\n")
        landed = [d for d in done if d != OPS_DIR]
        again = f"; remove {', '.join(landed)} before trying again" if landed else ""
        raise MirrorError(f"restore from {mirror} failed after {len(done)} folder(s): "
                          f"{type(exc).__name__}: {exc}; uploads to the mirror are refused until "
                          f"a restore succeeds{again}") from exc
    (lake.root / OPS_DIR / RESTORE_FAILED).unlink(missing_ok=True)
    (lake.root / OPS_DIR / VOLATILE_MARK).unlink(missing_ok=True)
    return done


def upload_lake(lake: Lake, mirror: str) -> list[str]:
    """Copy the lake's folders over the mirror's, each replaced whole (copied beside, then
    swapped in by two renames; a cut between them leaves ``<name>.old``, which a restore uses),
    under the lake's writer lock. Refused while the last restore failed (:func:`restore_failed`)
    or a start found the lake volatile (:func:`volatile_mark`: it lost data the mirror may still
    hold). Returns the folders uploaded."""
    failed = restore_failed(lake)
    if failed is not None:
        raise MirrorError(f"refusing to upload {lake.root} to {mirror}: the restore of "
                          f"{failed['at']} failed ({failed['error']}), so the lake may be "
                          "incomplete and the mirror is the good copy")
    boot = volatile_mark(lake)
    if boot is not None:
        raise MirrorError(f"refusing to upload {lake.root} to {mirror}: {boot.describe()}; "
                          "the mirror may hold what the lake lost: restore from it, or, once "
                          "the lake is checked, start arena serve with --lake-checked")
    fs, root = _fs(mirror)
    root = root.rstrip("/")
    done = []
    with lake.writer_lock():
        for name in MIRRORED:
            local = lake.root / name
            if not local.exists():
                continue
            target, staged, old = f"{root}/{name}", f"{root}/{name}.uploading", f"{root}/{name}.old"
            if fs.exists(staged):  # a copy an earlier upload left unfinished
                fs.rm(staged, recursive=True)
            if fs.exists(old) and fs.exists(target):  # else .old is the only whole copy: kept
                fs.rm(old, recursive=True)
            fs.put(str(local), staged, recursive=True)
            if fs.exists(target):
                fs.mv(target, old, recursive=True)
            fs.mv(staged, target, recursive=True)
            if fs.exists(old):
                fs.rm(old, recursive=True)
            done.append(name)
    return done


def fetch_from_mirror(mirror: str, relative: str, dest: Path) -> None:
    """Copy one file or folder ``relative`` to the lake root from the mirror to ``dest`` (a
    landing place the caller checks before it moves anything into the lake);
    :class:`MirrorError` when the mirror cannot be read or lacks it. The mirror keeps a folder
    whole or, after an upload cut between its two renames, as ``<folder>.old``
    (:func:`upload_lake`): the copy is taken from whichever holds it."""
    top, _, rest = relative.partition("/")
    try:
        fs, root = _fs(mirror)
        root = root.rstrip("/")
        found = _mirrored(fs, root, top)
        source = f"{found}/{rest}" if found and rest else found
        if source is None or not fs.exists(source):
            raise FileNotFoundError(f"the mirror {mirror} has no {relative}")
        dest.parent.mkdir(parents=True, exist_ok=True)
        if fs.isdir(source):
            fs.get(source.rstrip("/") + "/", str(dest), recursive=True)
        else:
            fs.get(source, str(dest))
    except Exception as exc:
        raise MirrorError(f"cannot copy {relative} from {mirror}: {type(exc).__name__}: "
                          f"{exc}") from exc
