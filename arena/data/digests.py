"""Whole-file SHA-256 digests of the market's bar files, recorded where each is published.

A bar file can change after its publication - a disk that returns other bytes, a partial copy,
a hand edit - and most such changes still decode (one flipped byte of a float is another
float). So every publication records the SHA-256 of each bar file it puts in place, and every
read of a file compares the bytes it read with that record (:meth:`arena.data.lake.Lake.
read_bar_table`); the verdict is kept per version of the file, so a file is hashed once per
publication of it however often a process reads it. Parquet's own page checksums (written
with every bar file, verified on every decode) guard the data pages a second way, also for a
file no record names.

Where a digest is recorded depends on the store (:mod:`arena.data.market_store`):

* on object storage, in the pointer object that publishes the versions (``_current.json``):
  one atomic write names a version and its digest together;
* on a filesystem, in one small record per series (``digests/bars/provider=<p>/symbol=<s>
  .json`` beside the market's folders: :class:`DigestRecords`). A publication moves its files
  in one rename at a time, so the record is written twice around the moves: before them it
  accepts the previous and the new digest of every key it replaces (a reader between two
  moves sees either file whole), after them the new digest alone. A key new to the lake is
  recorded only after its file is in place (a reader never sees a record naming a file that is
  not there yet), and a publication rolled back restores the record it found.

A file whose series records no digest (published before digests were recorded) is
*unrecorded*: read as before, and recorded by the next publication of it. A recorded key
whose file is gone is *missing*: damage, as a changed file is. A record that cannot be read
proves nothing: its series' files are read as unrecorded (their pages' checksums and rows are
still checked), ``arena season verify`` names the record, and the next publication of the
series writes it afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from arena.core.files import write_text
from arena.data.errors import DamagedFile

DIGESTS_DIR = "digests"
RECORDED_TOP = "bars"  # the market folder whose files are recorded
RECORD_FORMAT = 1
_CHUNK = 1 << 20

WHOLE, UNRECORDED, CHANGED, MISSING = "whole", "unrecorded", "changed", "missing"

Accepted = tuple[str, ...]
"""The SHA-256 digests (hex) a record accepts for one key: the published file's, and during a
publication on a filesystem also the file it replaces."""


class Verdict(NamedTuple):
    """What a file's bytes are against its record: ``state`` (:data:`WHOLE`,
    :data:`UNRECORDED` or :data:`CHANGED`) and, for a changed file, what is wrong."""

    state: str
    problem: str | None = None


def sha256_hex(data: bytes | memoryview) -> str:
    """The SHA-256 of ``data`` (anything with the buffer protocol: bytes, an Arrow buffer)."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    """The SHA-256 of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as source:
        while chunk := source.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_recorded(key: str) -> bool:
    """Whether publications record the digest of the market key ``key`` (the bar files)."""
    return key.startswith(f"{RECORDED_TOP}/")


def judge(found: str, accepted: Accepted | None) -> Verdict:
    """The verdict on a file whose bytes have the SHA-256 ``found``, against the digests its
    publication recorded (None: none recorded)."""
    if accepted is None:
        return Verdict(UNRECORDED)
    if found in accepted:
        return Verdict(WHOLE)
    return Verdict(CHANGED, f"its bytes changed since it was published (SHA-256 "
                            f"{found[:16]}, recorded {accepted[0][:16]})")


def record_relative(key: str) -> str:
    """The record that holds the digest of ``key``: one per series, e.g. ``digests/bars/
    provider=synthetic/symbol=BTC.json`` for every interval of BTC's synthetic bars."""
    top, *parts = key.split("/")
    fields = dict(p.split("=", 1) for p in parts[:-1] if "=" in p)
    try:
        return f"{DIGESTS_DIR}/{top}/provider={fields['provider']}/symbol={fields['symbol']}.json"
    except KeyError:
        raise ValueError(f"not the key of a bar file: {key!r}") from None


class DigestRecords:
    """The digest records of a market on a filesystem, under its ``root`` (see the module's
    docstring). Each record is read once per version of it (its inode, size and modification
    time; every write replaces it by rename). Thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, tuple[tuple[int, int, int], dict[str, Accepted]]] = {}
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[DigestRecords], tuple[Path]]:  # a worker reads afresh
        return DigestRecords, (self.root,)

    def accepted(self, key: str) -> Accepted | None:
        """The digests recorded for ``key`` (None: its series records none).
        :class:`~arena.data.errors.DamagedFile` naming the record when it cannot be read."""
        files = self._files(record_relative(key))
        return None if files is None else files.get(key)

    def keys(self, top: str = RECORDED_TOP) -> list[str]:
        """Every key a record names, whether or not its file is there (a record that cannot be
        read names none: :meth:`damaged` names it)."""
        folder = self.root / DIGESTS_DIR / top
        out: set[str] = set()
        for path in sorted(folder.glob("provider=*/*.json")) if folder.is_dir() else []:
            try:
                files = self._files(path.relative_to(self.root).as_posix())
            except DamagedFile:
                continue
            out.update(files or {})
        return sorted(out)

    def damaged(self, top: str = RECORDED_TOP) -> list[tuple[str, str]]:
        """Every record that cannot be read: its path under the market's root, and why."""
        folder = self.root / DIGESTS_DIR / top
        out = []
        for path in sorted(folder.glob("provider=*/*.json")) if folder.is_dir() else []:
            relative = path.relative_to(self.root).as_posix()
            try:
                self._files(relative)
            except DamagedFile as exc:
                out.append((relative, exc.problem))
        return out

    def update(self, changes: Mapping[str, Accepted | None]) -> None:
        """Record each key's accepted digests (None: the key is recorded no more), one write of
        each record touched (a new file renamed over it). A record that cannot be read is
        written afresh: it held no digest a reader could trust. The caller holds the lake's
        writer lock (no other publication writes a record meanwhile)."""
        by_record: dict[str, dict[str, Accepted | None]] = {}
        for key, accepted in changes.items():
            by_record.setdefault(record_relative(key), {})[key] = accepted
        for relative, keys in sorted(by_record.items()):
            try:
                files = dict(self._files(relative) or {})
            except DamagedFile:
                files = {}
            for key, accepted in keys.items():
                if accepted is None:
                    files.pop(key, None)
                else:
                    files[key] = tuple(accepted)
            self._write(relative, files)

    def _files(self, relative: str) -> dict[str, Accepted] | None:
        """The key -> digests map of one record (None when there is no record)."""
        path = self.root / relative
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        identity = (st.st_ino, st.st_size, st.st_mtime_ns)
        with self._lock:
            cached = self._cache.get(relative)
        if cached is not None and cached[0] == identity:
            return cached[1]
        try:
            with open(path, "rb") as source:
                st = os.fstat(source.fileno())
                raw = source.read()
        except FileNotFoundError:
            return None
        files = _parse(raw, relative)
        with self._lock:
            self._cache[relative] = ((st.st_ino, st.st_size, st.st_mtime_ns), files)
        return files

    def _write(self, relative: str, files: Mapping[str, Accepted]) -> None:
        """Replace the record ``relative`` by one holding ``files`` (none: no record). Its
        cached version is dropped: a new file may reuse the old one's inode and size within
        one tick of the clock."""
        path = self.root / relative
        try:
            if not files:
                path.unlink(missing_ok=True)
                return
            write_text(path, json.dumps({"format": RECORD_FORMAT, "sha256": {
                k: list(v) for k, v in sorted(files.items())}}, indent=1) + "\n")
        finally:
            with self._lock:
                self._cache.pop(relative, None)


def _parse(raw: bytes, relative: str) -> dict[str, Accepted]:
    """A record's key -> digests map; :class:`DamagedFile` naming it when it is not one."""
    try:
        files = json.loads(raw)["sha256"]
        out = {str(k): tuple(str(d) for d in v) for k, v in files.items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DamagedFile(relative, f"not a digest record ({type(exc).__name__})") from exc
    if any(not v or any(len(d) != 64 for d in v) for v in out.values()):
        raise DamagedFile(relative, "not a digest record (a digest is not a SHA-256)")
    return out


def pointer_digests(pointer: Mapping[str, object]) -> dict[str, str]:
    """The key -> SHA-256 map of an object store's pointer (empty for one written before
    digests were recorded, or whose map is not one)."""
    found = pointer.get("sha256")
    if not isinstance(found, dict):
        return {}
    return {str(k): str(v) for k, v in found.items() if isinstance(v, str) and len(v) == 64}


def staged_digests(staged: Mapping[str, Path]) -> dict[str, str]:
    """The SHA-256 of each staged file whose key publications record (:func:`is_recorded`)."""
    return {key: file_sha256(path) for key, path in staged.items() if is_recorded(key)}


def previous_of(entries: Sequence[Mapping[str, object]]) -> dict[str, Accepted | None]:
    """Each journal entry's key -> the digests recorded before its publication (None: none)."""
    out: dict[str, Accepted | None] = {}
    for entry in entries:
        if entry.get("sha256") is None:
            continue  # a key publications do not record, or a journal from before digests
        recorded = entry.get("recorded")
        out[str(entry["key"])] = None if recorded is None else tuple(recorded)  # type: ignore[arg-type]
    return out
