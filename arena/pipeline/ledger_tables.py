"""The ledger as dbt reads it: each ledger table's rows gathered into a few Parquet files,
each record's rows copied once.

The ledger keeps one folder per record (a cycle of a contestant, a monitor window), with one
small Parquet file per table: a year with twenty contestants holds tens of thousands of them, and
a scan pays for every file it opens, in every model and test that reads the table. So before each
``dbt build`` :func:`gather` copies the rows of the records added since the last build into one
new *part* per table (``<lake>/dbt/ledger/<kind>/<table>/<part>.parquet``, ``kind`` ``cycles``
or ``monitor``), and dbt's ``ledger`` and ``monitor`` sources read the parts. A build then costs
the new records' files plus a handful of parts, whatever the season's length.

Parts merge like a log-structured tree: once :data:`FAN_IN` parts of one level exist they are
rewritten as one part of the next level, so a season of ``n`` builds has at most
``FAN_IN - 1`` parts per level and ``log(n)`` levels, and each row is rewritten ``log(n)``
times in all.

``manifest.json`` names the parts and the records each holds. What is on disk is checked
against it first, and the copy is rebuilt from the ledger (saying so) whenever it cannot be
trusted: a record it holds is gone from the ledger (moved aside by ``arena season verify
--repair``), a part is missing or unreadable, or the tables' columns changed. A part is written
before the manifest that names it, and a part no manifest names (a build killed in between) is
removed before dbt reads, so dbt never counts a record twice. The records are immutable once
committed (:mod:`arena.ledger.store`), so a record's rows, once copied, stay true; before they
are copied, each record's files are checked against its chain link
(:func:`arena.ledger.chain.check_link`): a record damaged since its commit stops the build
(:class:`~arena.ledger.chain.BrokenChain`, naming the file) instead of reaching the marts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from arena.ledger.chain import check_link
from arena.ledger.records import MONITOR_SCHEMAS, SCHEMAS
from arena.ledger.store import Ledger

log = logging.getLogger(__name__)

FAN_IN = 8  # parts of one level merged into one of the next
MANIFEST = "manifest.json"
EMPTY = "_empty.parquet"  # the table's columns, no rows: the source's glob always matches
KINDS: Mapping[str, Mapping[str, pa.Schema]] = {"cycles": SCHEMAS, "monitor": MONITOR_SCHEMAS}


@dataclass
class Gathered:
    """What one :func:`gather` did: records copied, parts written and merged, per kind; and
    why it started over (None: it appended)."""

    copied: dict[str, int] = field(default_factory=dict)
    parts: dict[str, int] = field(default_factory=dict)
    merged: int = 0
    rebuilt: str | None = None


def tables_dir(lake_root: Path) -> Path:
    """Where the gathered tables live (dbt's var ``ledger_tables``)."""
    return lake_root / "dbt" / "ledger"


def _fingerprint() -> str:
    """The tables' columns: a change of them (a new ledger column) starts the copy over."""
    text = json.dumps({kind: {name: str(schema) for name, schema in schemas.items()}
                       for kind, schemas in KINDS.items()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _write(path: Path, table: pa.Table) -> None:
    """Write ``table`` at ``path`` whole or not at all (a temporary file, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class _Kind:
    """The gathered tables of one kind of record (cycles or monitor windows)."""

    def __init__(self, root: Path, kind: str, state: Mapping[str, object] | None) -> None:
        self.root, self.kind, self.schemas = root / kind, kind, KINDS[kind]
        state = state or {}
        self.parts: list[dict[str, object]] = [dict(p) for p in state.get("parts", [])]
        self.next = int(state.get("next", 0))

    @property
    def records(self) -> set[str]:
        return {r for p in self.parts for r in p["records"]}  # type: ignore[union-attr]

    def problem(self) -> str | None:
        """Why the parts on disk cannot be trusted (None: they can)."""
        for part in self.parts:
            for name in self.schemas:
                path = self.root / name / f"{part['name']}.parquet"
                try:
                    rows = pq.read_metadata(path).num_rows
                except (OSError, pa.ArrowException) as exc:
                    return f"{path} cannot be read ({type(exc).__name__})"
                if rows != part["rows"][name]:  # type: ignore[index]
                    return f"{path} holds {rows} rows, the manifest says {part['rows'][name]}"  # type: ignore[index]
        return None

    def sweep(self) -> None:
        """Remove the files no part names (a build killed before its manifest) and write each
        table's empty schema file."""
        named = {f"{p['name']}.parquet" for p in self.parts}
        for name, schema in self.schemas.items():
            folder = self.root / name
            folder.mkdir(parents=True, exist_ok=True)
            for path in folder.iterdir():
                if path.name not in named and path.name != EMPTY:
                    path.unlink(missing_ok=True)
            if not (folder / EMPTY).is_file():
                _write(folder / EMPTY, schema.empty_table())

    def append(self, ledger: Ledger, folders: Sequence[Path], level: int = 0) -> None:
        """Copy the rows of the records in ``folders`` into one new part of ``level``."""
        name = f"p{self.next:06d}"
        self.next += 1
        rows = {}
        for table, schema in self.schemas.items():
            data = ledger.read_records(table, folders, monitor=self.kind == "monitor")
            _write(self.root / table / f"{name}.parquet", data.cast(schema))
            rows[table] = data.num_rows
        self.parts.append({"name": name, "level": level, "rows": rows,
                           "records": sorted(f"{d.parent.name}/{d.name}" for d in folders)})

    def merge(self) -> int:
        """Merge every run of :data:`FAN_IN` parts of one level into one part of the next;
        the parts merged away are removed once the manifest no longer names them (the caller's
        :meth:`sweep`). Returns how many merges."""
        merges = 0
        while True:
            levels: dict[int, list[dict[str, object]]] = {}
            for part in self.parts:
                levels.setdefault(int(part["level"]), []).append(part)  # type: ignore[arg-type]
            full = [(lvl, ps) for lvl, ps in sorted(levels.items()) if len(ps) >= FAN_IN]
            if not full:
                return merges
            level, group = full[0]
            group = group[:FAN_IN]
            name = f"p{self.next:06d}"
            self.next += 1
            rows = {}
            for table, schema in self.schemas.items():
                data = pa.concat_tables([pq.read_table(self.root / table / f"{p['name']}.parquet")
                                         .cast(schema) for p in group])
                _write(self.root / table / f"{name}.parquet", data)
                rows[table] = data.num_rows
            merged = {"name": name, "level": level + 1, "rows": rows,
                      "records": sorted(r for p in group for r in p["records"])}  # type: ignore[union-attr]
            gone = {p["name"] for p in group}
            self.parts = [p for p in self.parts if p["name"] not in gone] + [merged]
            merges += 1

    def state(self) -> dict[str, object]:
        return {"next": self.next, "parts": self.parts}


def gather(ledger: Ledger, lake_root: Path) -> Gathered:
    """Bring the gathered tables up to the ledger's records (see the module docstring)."""
    root = tables_dir(lake_root)
    manifest_path = root / MANIFEST
    out = Gathered()
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        manifest = None
    except (OSError, ValueError) as exc:
        manifest, out.rebuilt = None, f"{manifest_path} cannot be read ({type(exc).__name__})"
    if manifest is not None and manifest.get("columns") != _fingerprint():
        manifest, out.rebuilt = None, "the ledger's tables changed their columns"
    kinds = {kind: _Kind(root, kind, (manifest or {}).get(kind)) for kind in KINDS}
    listed = {kind: {f"{d.parent.name}/{d.name}": d for d in ledger.folders(kind == "monitor")}
              for kind in KINDS}
    if manifest is not None:
        for kind, part in kinds.items():
            gone = part.records - listed[kind].keys()
            problem = (f"{len(gone)} record(s) it holds left the ledger (first: {min(gone)})"
                       if gone else part.problem())
            if problem:
                manifest, out.rebuilt = None, f"{kind}: {problem}"
                break
    if manifest is None:
        if out.rebuilt:
            log.warning("the ledger's gathered tables are rebuilt from the ledger: %s", out.rebuilt)
        shutil.rmtree(root, ignore_errors=True)
        kinds = {kind: _Kind(root, kind, None) for kind in KINDS}
    for kind, part in kinds.items():
        part.sweep()
        new = sorted(set(listed[kind]) - part.records)
        for record in new:  # copied once, so checked once: its files are the ones it recorded
            check_link(listed[kind][record])
        if new:
            part.append(ledger, [listed[kind][r] for r in new])
        out.merged += part.merge()
        out.copied[kind], out.parts[kind] = len(new), len(part.parts)
    root.mkdir(parents=True, exist_ok=True)
    tmp = manifest_path.with_name(f".{MANIFEST}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(json.dumps({"columns": _fingerprint(),
                               **{kind: part.state() for kind, part in kinds.items()}}),
                   encoding="utf-8")
    os.replace(tmp, manifest_path)
    for part in kinds.values():
        part.sweep()  # the parts merged away
    return out
