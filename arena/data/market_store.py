"""Where the lake's market data lives: its own folders (the default), or a URI.

The market data - the bar partitions and the funding, events (splits, dividends) and earnings
tables - is the part of the
lake that many machines read and only ingest writes, so it may live on object storage. Everything
else of the lake (staging, quarantine, locks, manifests, validation results, the season and its
ledger) stays on POSIX storage: the ledger's lock-and-rename protocol needs it, and a shared
filesystem serves several machines.

Two stores, one contract - read a key's file, list the keys, publish a set of staged files so
that a reader sees all of the set or none of it:

* :class:`LocalMarket` - files under a directory (the lake's root by default), each key one
  file published by an atomic ``os.replace`` (the lake's protocol since the start).
* :class:`ObjectMarket` - any URI Arrow's filesystems open (``s3://bucket/prefix``, ``gs://``,
  ``hdfs://``). An object store renames nothing atomically, so a key's file is never
  overwritten: each publication uploads new *versioned* objects beside the old ones, then
  replaces one small pointer object, ``_current.json``, that maps every key to its current
  version. Replacing an object is atomic, so a reader that resolves keys through the pointer it
  read sees one publication whole. The previous version of each key stays (a reader holding the
  old pointer can finish); older ones go.

The lake records a market that is not its own folders in ``ops/market.json`` (see
:func:`set_market`), so every process that opens the lake - a worker on another machine
included - reads the same market. Credentials and endpoints come from the environment the
filesystem reads (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL`` ...),
never from the URI, which is stored in the lake.
"""

from __future__ import annotations

import dataclasses
import errno
import filecmp
import json
import os
import re
import shutil
import stat
import time
import uuid
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from arena.data.digests import (
    Accepted,
    DigestRecords,
    is_recorded,
    pointer_digests,
    previous_of,
    staged_digests,
)
from arena.data.errors import DamagedFile, MarketError

MARKET_FILE = "ops/market.json"
POINTER = "_current.json"
POINTERS = "_pointers"  # every pointer written, immutable: what a damaged _current.json falls back to
KEPT_POINTERS = 20
_BUCKET_SCHEMES = frozenset({"s3", "gs", "gcs"})
# the market's folders and the layout of their files (what the lake's keys address)
_LAYOUT = {"bars": "provider=*/interval=*/symbol=*/data.parquet",
           "funding": "provider=*/symbol=*/data.parquet", "events": "provider=*/symbol=*/data.parquet",
           "earnings": "provider=*/data.parquet"}
MARKET_DIRS = tuple(_LAYOUT)
# query options of a URI that would put a secret into the lake's record (S3's secret_key and
# session_token, Azure's client_secret and SAS signature, any password, token or credential)
_SECRET_OPTION = re.compile(r"secret|password|token|credential|^sig$|_key$|^key$", re.I)


class Market(Protocol):
    """What the lake asks of the store of its market data; keys are relative POSIX paths such
    as ``bars/provider=x/interval=1h/symbol=ETH/data.parquet``."""

    def describe(self) -> str: ...
    def exists(self, key: str) -> bool: ...
    def signature(self, key: str) -> object | None: ...
    def signatures(self, keys: Sequence[str]) -> dict[str, object | None]: ...
    def open(self, key: str) -> pa.NativeFile: ...
    def open_signed(self, key: str, signature: object | None = None
                    ) -> tuple[pa.NativeFile, object]: ...
    def keys(self, top: str) -> list[str]: ...
    def recorded(self, key: str, signature: object | None = None) -> Accepted | None: ...
    def recorded_keys(self, top: str) -> list[str]: ...
    def publish(self, staged: Mapping[str, Path], scratch: Path) -> dict[str, str]: ...
    def local_dir(self) -> Path | None: ...


class LocalMarket:
    """The market as files under ``root``, each key one file replaced atomically; the digests
    of its bar files in records beside them (:class:`arena.data.digests.DigestRecords`)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.records = DigestRecords(root)

    def describe(self) -> str:
        return str(self.root)

    def path(self, key: str) -> Path:
        return self.root / key

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def signature(self, key: str) -> tuple[int, int, int] | None:
        """Identity of a stored file (inode, size, mtime): ``os.replace`` of a new file
        changes it. None when no file is there (nothing, or not a regular file: as
        :meth:`exists`)."""
        try:
            st = self.path(key).stat()
        except FileNotFoundError:
            return None
        return _identity(st) if stat.S_ISREG(st.st_mode) else None

    def signatures(self, keys: Sequence[str]) -> dict[str, tuple[int, int, int] | None]:
        """:meth:`signature` of each key."""
        return {key: self.signature(key) for key in keys}

    def open(self, key: str) -> pa.NativeFile:
        return pa.OSFile(os.fspath(self.path(key)))

    def open_signed(self, key: str, signature: object | None = None
                    ) -> tuple[pa.NativeFile, tuple[int, int, int]]:
        """The file of ``key`` read into memory, with the signature of the very file read
        (``fstat`` of the open file, so a file replaced since ``signature`` was taken is
        named by its own). ``signature`` is only a hint here (an object store uses it)."""
        del signature
        with open(self.path(key), "rb") as source:
            st = os.fstat(source.fileno())
            body = source.read()
        return pa.BufferReader(body), _identity(st)

    def keys(self, top: str) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix()
                      for p in (self.root / top).glob(_LAYOUT[top]))

    def local_dir(self) -> Path | None:
        return self.root

    def recorded(self, key: str, signature: object | None = None) -> Accepted | None:
        """The digests the records accept for ``key`` (None: none recorded, or its record
        cannot be read: :meth:`DigestRecords.damaged`); ``signature`` is only a hint (an object
        store names versions)."""
        del signature
        return self._recorded_before(key) if is_recorded(key) else None

    def recorded_keys(self, top: str) -> list[str]:
        """Every key under ``top`` a record names, whether or not its file is there."""
        return self.records.keys(top)

    def publish(self, staged: Mapping[str, Path], scratch: Path) -> dict[str, str]:
        """Move staged files into place, each with one atomic ``os.replace``; returns the
        SHA-256 recorded for each bar file.

        The previous file of every key is kept reachable (hard link, or a copy) in ``scratch``
        until the whole set is in place, and before the first move ``scratch/journal.json``
        (:data:`JOURNAL`) records the intent: every key, its staged file and its backup, the
        staged file's digest and the digests recorded before. The digest records accept the
        previous and the new file of every recorded key during the moves and the new one alone
        after them (:mod:`arena.data.digests`). If any move fails, the ones already made are
        rolled back, and the records with them, so the lake shows either all of the set or
        none of it; a process killed between two moves leaves the journal, and :meth:`recover`
        rolls the set forward or back (see :func:`arena.data.recovery.recover_publications`).
        ``scratch`` and the journal stay when a roll-back fails too."""
        digests = staged_digests(staged)
        entries = self._entries(staged, digests, scratch / "previous")
        _write_journal(scratch, {"format": 2, "market": os.fspath(self.root), "files": entries})
        # a reader between two moves sees the previous file or the new one: both are accepted
        self.records.update({str(e["key"]): (str(e["sha256"]), *e["recorded"])
                             for e in entries if e.get("recorded")})
        done: list[dict[str, object]] = []
        try:
            for entry in entries:
                # noted before the move: an interrupt right after it must still roll it back
                # (rolling back a move that did not happen restores the same file)
                done.append(entry)
                _replace(Path(str(entry["staged"])), self.path(str(entry["key"])))
        except BaseException:  # an interrupt too: the lake shows none of the set
            with suppress(OSError):  # a kill during the roll-back: the next run rolls back
                (scratch / ROLLING_BACK).touch()
            self._roll_back(done)
            self.records.update(previous_of(entries))
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        self.records.update({key: (digest,) for key, digest in digests.items()})
        return digests

    def _entries(self, staged: Mapping[str, Path], digests: Mapping[str, str],
                 previous: Path) -> list[dict[str, object]]:
        """The journal's entries: each key, its staged file, the backup of its previous file
        (kept reachable until the set is in place) and, for a bar file, its staged file's
        digest and the digests recorded before."""
        # the previous files wait side by side in one flat folder: a folder tree per backup
        # would cost a mkdir and an rmdir per level of every key (the slowest calls of a publish)
        entries: list[dict[str, object]] = []
        for n, (key, src) in enumerate(sorted(staged.items())):
            dst = self.path(key)
            backup = None
            if dst.exists():
                backup = previous / f"{n:05d}.{dst.name}"
                previous.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(dst, backup)
                except OSError:  # no hard links on this filesystem
                    shutil.copy2(dst, backup)
            else:
                dst.parent.mkdir(parents=True, exist_ok=True)
            entry: dict[str, object] = {"key": key, "staged": os.fspath(src),
                                        "backup": None if backup is None else os.fspath(backup)}
            if key in digests:
                before = self.recorded(key) if backup is not None else None
                entry.update(sha256=digests[key], recorded=None if before is None else list(before))
            entries.append(entry)
        return entries

    def _recorded_before(self, key: str) -> Accepted | None:
        """What the records accept for ``key`` (a record that cannot be read accepts nothing:
        the next publication writes it afresh)."""
        try:
            return self.records.accepted(key)
        except DamagedFile:
            return None

    # ------------------------------------------------------------------ recovery
    def torn(self, scratch: Path) -> TornPublication | None:
        """The publication whose journal is in ``scratch``, as the files show it now (None: no
        journal, or one cut while it was written, before any move)."""
        try:
            journal = json.loads((scratch / JOURNAL).read_text(encoding="utf-8"))
            entries = [dict(e) for e in journal["files"]]
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError):  # cut before its end: no move was made
            return TornPublication(scratch, (), (), (), False)
        moved, pending, lost = [], [], []
        for entry in entries:
            if self._moved(entry):
                moved.append(str(entry["key"]))
            elif Path(str(entry["staged"])).is_file():
                pending.append(str(entry["key"]))
            else:
                lost.append(str(entry["key"]))
        return TornPublication(scratch, tuple(moved), tuple(pending), tuple(lost),
                               (scratch / ROLLING_BACK).exists(), tuple(entries))

    def _moved(self, entry: Mapping[str, object]) -> bool:
        """Whether the staged file of ``entry`` is in place (its key no longer holds the
        previous file, or - a new key - holds a file at all)."""
        dst = self.path(str(entry["key"]))
        if entry["backup"] is None:
            return dst.exists()
        backup = Path(str(entry["backup"]))
        if not dst.exists():
            return True  # a key that held a file and holds none: not the previous state
        try:
            return not (os.path.samefile(dst, backup) or filecmp.cmp(dst, backup, shallow=False))
        except FileNotFoundError:
            return True

    def recover(self, scratch: Path) -> TornPublication | None:
        """Finish or undo the publication whose journal is in ``scratch``: forward (every key
        not yet moved still has its staged file, and no roll-back had begun), else back (every
        moved key gets its previous file again, or loses the new one). Removes ``scratch``;
        returns what it found, with ``outcome`` set. The caller holds the lake's writer lock."""
        torn = self.torn(scratch)
        if torn is None:
            return None
        entries = {str(e["key"]): e for e in torn.entries}
        if torn.forward_possible:
            for key in torn.pending:
                _replace(Path(str(entries[key]["staged"])), self.path(key))
            self.records.update({k: (str(e["sha256"]),) for k, e in entries.items()
                                 if e.get("sha256")})
            outcome = "rolled forward"
        else:
            self._roll_back([entries[k] for k in (*torn.moved, *torn.lost)])
            self.records.update(previous_of(torn.entries))
            outcome = "rolled back"
        shutil.rmtree(scratch, ignore_errors=True)
        return dataclasses.replace(torn, outcome=outcome)

    def _roll_back(self, entries: Sequence[Mapping[str, object]]) -> None:
        for entry in reversed(entries):
            dst = self.path(str(entry["key"]))
            if entry["backup"] is not None:
                backup = Path(str(entry["backup"]))
                # every backup exists before the first move, and only a roll-back moves one
                # back: a backup that is gone was restored by a roll-back a kill cut short
                if backup.exists():
                    _replace(backup, dst)
            else:
                dst.unlink(missing_ok=True)


JOURNAL = "journal.json"  # a local publication's intent, written before its first move
ROLLING_BACK = "rolling-back"  # beside the journal: the publication failed and is being undone


@dataclass(frozen=True)
class TornPublication:
    """A local publication that a killed process left between two moves (its journal is still
    in ``scratch``): the keys whose staged file is in place (``moved``), those whose staged file
    waits (``pending``), and those that have neither (``lost``: their staged file is gone, so the
    set can only be rolled back)."""

    scratch: Path
    moved: tuple[str, ...]
    pending: tuple[str, ...]
    lost: tuple[str, ...]
    rolling_back: bool
    entries: tuple[Mapping[str, object], ...] = ()
    outcome: str | None = None  # "rolled forward" / "rolled back", once recovered

    @property
    def forward_possible(self) -> bool:
        return not self.lost and not self.rolling_back

    @property
    def keys(self) -> tuple[str, ...]:
        return (*self.moved, *self.pending, *self.lost)


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_ino, st.st_size, st.st_mtime_ns


def _write_journal(scratch: Path, journal: Mapping[str, object]) -> None:
    """Write the journal as a new file, before the first move (no rename: a journal cut by a
    kill is one whose publication moved nothing yet). Not synced, as the lake's other records:
    it outlives a killed process, not a lost machine."""
    scratch.mkdir(parents=True, exist_ok=True)
    with open(scratch / JOURNAL, "x", encoding="utf-8") as out:
        json.dump(journal, out, indent=1)


def _replace(src: Path, dst: Path) -> None:
    """``os.replace``; from another filesystem (a market on its own mount, the lake's staging
    on another), a copy beside ``dst`` first, then ``os.replace``: still one atomic step for
    readers."""
    try:
        os.replace(src, dst)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        tmp = dst.with_name(f".{dst.name}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
        finally:
            tmp.unlink(missing_ok=True)
        src.unlink(missing_ok=True)


class ObjectMarket:
    """The market on a filesystem without atomic renames (object storage), published through
    versioned objects and one pointer object (see the module's docstring).

    The pointer is written twice: first as an immutable ``_pointers/<stamp>.json``, then over
    ``_current.json``. A store commits an object when its stream closes - an interrupted or
    failed write may leave ``_current.json`` empty or cut - so a ``_current.json`` that does not
    parse is read as the newest whole pointer under ``_pointers/`` instead."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._opened: tuple[pafs.FileSystem, str] | None = None
        # every version a pointer read named, with the SHA-256 it recorded ("" for none):
        # a version is never overwritten, so what a pointer said of it stays true
        self._version_sha: dict[str, str] = {}

    def __getstate__(self) -> dict[str, object]:  # a worker opens its own connection
        return {"uri": self.uri}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(str(state["uri"]))

    def describe(self) -> str:
        return self.uri

    @property
    def fs(self) -> pafs.FileSystem:
        return self._open()[0]

    def _open(self) -> tuple[pafs.FileSystem, str]:
        if self._opened is None:  # one assignment: a thread never sees half of it
            fs, base = pafs.FileSystem.from_uri(self.uri)
            self._opened = fs, base.rstrip("/")
        return self._opened

    def _at(self, relative: str) -> str:
        """The filesystem path of ``relative``."""
        return f"{self._open()[1]}/{relative}"

    # ------------------------------------------------------------------ reading
    def current(self) -> dict[str, str]:
        """The pointer: every key's current version (empty for a market never published)."""
        return self._pointer().files

    def _pointer(self) -> _Pointer:
        """The pointer: every key's current version and the SHA-256 it recorded of each."""
        try:
            raw = self._get(POINTER)
        except FileNotFoundError:  # never published, or cut before its first pointer landed
            pointer = self._newest_pointer() or _Pointer({}, {})
        else:
            found = _parse_pointer(raw)
            if found is None:  # an empty or cut _current.json: an interrupted write
                found = self._newest_pointer()
                if found is None:
                    raise MarketError(f"the market's pointer {self.uri}/{POINTER} is damaged "
                                      f"and {self.uri}/{POINTERS}/ holds no whole pointer")
            pointer = found
        for key, version in pointer.files.items():
            self._version_sha[version] = pointer.sha256.get(key, "")
        return pointer

    def _newest_pointer(self) -> _Pointer | None:
        selector = pafs.FileSelector(self._at(POINTERS), allow_not_found=True)
        try:
            names = sorted((i.base_name for i in self.fs.get_file_info(selector)
                            if i.base_name.endswith(".json")), reverse=True)
        except OSError as exc:
            raise self._unreachable(exc) from exc
        for name in names:
            pointer = _parse_pointer(self._get(f"{POINTERS}/{name}"))
            if pointer is not None:
                return pointer
        return None

    def _get(self, relative: str) -> bytes:
        """One object's bytes (one GET); FileNotFoundError if absent, MarketError if the store
        cannot be reached."""
        try:
            with self.fs.open_input_stream(self._at(relative)) as source:
                return source.readall()
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise self._unreachable(exc) from exc

    def _unreachable(self, exc: OSError) -> MarketError:
        return MarketError(f"cannot read the market at {self.uri}: {exc} (credentials and "
                           "endpoint come from the environment, e.g. AWS_ACCESS_KEY_ID, "
                           "AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL)")

    def exists(self, key: str) -> bool:
        return key in self.current()

    def signature(self, key: str) -> str | None:
        return self.current().get(key)

    def signatures(self, keys: Sequence[str]) -> dict[str, str | None]:
        """:meth:`signature` of each key, from one read of the pointer (one publication)."""
        pointer = self.current()
        return {key: pointer.get(key) for key in keys}

    def open(self, key: str) -> pa.NativeFile:
        return self.open_signed(key)[0]

    def open_signed(self, key: str, signature: object | None = None
                    ) -> tuple[pa.NativeFile, str]:
        """The file of ``key`` and its version: ``signature`` when given (a version read from
        the pointer, so no second read of it), else the pointer's current one."""
        version = signature if isinstance(signature, str) else self.current().get(key)
        if version is None:
            raise FileNotFoundError(f"{self.uri}: no {key}")
        return self.open_version(key, version), version

    def open_version(self, key: str, version: str) -> pa.NativeFile:
        """The file of one version of ``key`` (one GET of the whole small object, read from
        memory). A version the pointer names but the store lacks is damage, not absence."""
        try:
            return pa.BufferReader(self._get(version))
        except FileNotFoundError as exc:
            raise MarketError(f"the market at {self.uri} names {version} as {key}, but the "
                              "store has no such object") from exc

    def keys(self, top: str) -> list[str]:
        return sorted(k for k in self.current() if k.startswith(f"{top}/"))

    def recorded(self, key: str, signature: object | None = None) -> Accepted | None:
        """The SHA-256 the pointer recorded for the version ``signature`` of ``key`` (by
        default the current one); None when it recorded none (a pointer written before
        digests were)."""
        version = signature if isinstance(signature, str) else None
        if version is None or version not in self._version_sha:
            files = self.current()  # notes every version's digest
            version = version or files.get(key)
        sha = self._version_sha.get(version or "")
        return (sha,) if sha else None

    def recorded_keys(self, top: str) -> list[str]:
        """Every key under ``top`` whose digest the pointer records (a key the pointer names
        is one whose object a reader asks for: a lost one is an error when it is read)."""
        pointer = self._pointer()
        return sorted(k for k in pointer.files if k.startswith(f"{top}/") and k in pointer.sha256)

    def local_dir(self) -> Path | None:
        return None

    def download(self, top: str, dest: Path) -> int:
        """Write the current version of every key under ``top`` into ``dest`` (same relative
        paths), all from one read of the pointer, so one publication; returns how many."""
        pointer = self.current()
        keys = sorted(k for k in pointer if k.startswith(f"{top}/"))
        for key in keys:
            target = dest / key
            target.parent.mkdir(parents=True, exist_ok=True)
            with self.open_version(key, pointer[key]) as source:
                target.write_bytes(source.read())
        return len(keys)

    # ------------------------------------------------------------------ publishing
    def publish(self, staged: Mapping[str, Path], scratch: Path) -> dict[str, str]:
        """Upload every staged file as a new version, then write the pointer (the step that
        publishes the set, and records the SHA-256 of each bar file with its version); returns
        the digests recorded. If anything fails before the pointer is whole in the store, the
        new versions are deleted and readers never saw them; a write that failed after the store
        committed it is a publication made. The caller holds the lake's writer lock, so no other
        publication replaces the pointer between its read and its write."""
        del scratch  # nothing to keep aside: the old versions stay where they are
        before = self._pointer()
        pointer = before.files
        digests = staged_digests(staged)
        stamp = f"v-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        order = sorted(staged)
        versions = {key: f"{PurePosixPath(key).parent}/{stamp}.parquet" for key in order}
        new = {**pointer, **versions}
        sha = {k: v for k, v in before.sha256.items() if k in new and k not in versions}
        sha.update(digests)
        body = json.dumps({"format": 1, "files": dict(sorted(new.items())),
                           "sha256": dict(sorted(sha.items()))}, indent=1).encode()
        uploaded: list[str] = []
        try:
            for key in order:
                uploaded.append(versions[key])
                _upload(self.fs, staged[key], self._at(versions[key]))
            uploaded.append(f"{POINTERS}/{stamp}.json")
            self._put(f"{POINTERS}/{stamp}.json", body)
            self._put(POINTER, body)
        except BaseException as exc:
            if not self._landed(new):
                for version in uploaded:
                    _delete(self.fs, self._at(version))
                raise
            if not isinstance(exc, Exception):
                raise  # published, but an interrupt still stops the run
        for key in order:  # keep the current and the previous version of each key
            self._prune(key, {versions[key], pointer.get(key)})
        self._prune_pointers()
        for key, version in versions.items():
            self._version_sha[version] = digests.get(key, "")
        return digests

    def _put(self, relative: str, body: bytes) -> None:
        with self.fs.open_output_stream(self._at(relative)) as out:
            out.write(body)

    def _landed(self, files: Mapping[str, str]) -> bool:
        """Whether ``_current.json`` in the store is whole and names ``files``."""
        try:
            landed = _parse_pointer(self._get(POINTER))
            return landed is not None and landed.files == dict(files)
        except (OSError, MarketError):
            return False

    def _prune(self, key: str, keep: set[str | None]) -> None:
        folder = str(PurePosixPath(key).parent)
        selector = pafs.FileSelector(self._at(folder), allow_not_found=True)
        for info in self.fs.get_file_info(selector):
            relative = f"{folder}/{info.base_name}"
            if info.type == pafs.FileType.File and info.base_name.startswith("v-") \
                    and relative not in keep:
                _delete(self.fs, info.path)

    def _prune_pointers(self, keep: int = KEPT_POINTERS) -> None:
        selector = pafs.FileSelector(self._at(POINTERS), allow_not_found=True)
        names = sorted((i.path for i in self.fs.get_file_info(selector)
                        if i.base_name.endswith(".json")), reverse=True)
        for path in names[keep:]:
            _delete(self.fs, path)


@dataclass(frozen=True)
class _Pointer:
    """What a pointer object says: every key's version, and the SHA-256 of each bar file."""

    files: dict[str, str]
    sha256: dict[str, str]


def _parse_pointer(raw: bytes) -> _Pointer | None:
    """The pointer object ``raw``, None if it is not a whole pointer."""
    try:
        found = json.loads(raw)
        files = found["files"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(files, dict):
        return None
    return _Pointer(dict(files), pointer_digests(found))


def _upload(fs: pafs.FileSystem, src: Path, dst: str) -> None:
    with open(src, "rb") as source, fs.open_output_stream(dst) as out:
        shutil.copyfileobj(source, out, 1 << 20)


def _delete(fs: pafs.FileSystem, path: str) -> None:
    with suppress(OSError):  # best effort: an orphan is pruned by the key's next publication
        fs.delete_file(path)


# ---------------------------------------------------------------------- the lake's record
def is_local(location: str) -> bool:
    """A plain path or a ``file://`` URI: the local store (renames are atomic there)."""
    scheme = urlsplit(location).scheme
    return scheme in ("", "file") or (len(scheme) == 1 and os.name == "nt")


def check_uri(location: str) -> str:
    """``location`` as stored in the lake, or :class:`MarketError` naming what is wrong."""
    location = location.strip()
    if not location:
        raise MarketError("an empty market location")
    if is_local(location):
        path = Path(urlsplit(location).path if location.startswith("file:") else location)
        return str(path.expanduser().resolve())
    _refuse_secrets(location)
    parts = urlsplit(location)
    if not parts.netloc and not parts.path.strip("/"):
        raise MarketError(f"market URI {location!r} names no bucket or path")
    try:
        pafs.FileSystem.from_uri(location)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OSError) as exc:
        raise MarketError(f"cannot open market URI {location!r}: {exc}") from exc
    return location


def _refuse_secrets(location: str) -> None:
    parts = urlsplit(location)
    if parts.password:
        raise MarketError(f"{parts.scheme}:// market URI with credentials in it: credentials "
                          "come from the environment (e.g. AWS_ACCESS_KEY_ID and "
                          "AWS_SECRET_ACCESS_KEY), never from a URI the lake stores")
    secret = sorted({k for k, _ in parse_qsl(parts.query) if _SECRET_OPTION.search(k)})
    if secret:
        raise MarketError(f"market URI with {', '.join(secret)} in it: credentials come from "
                          "the environment, never from a URI the lake stores")


def open_market(lake_root: Path) -> Market:
    """The store of the market data of the lake at ``lake_root``: its record in
    ``ops/market.json``, else the lake's own folders."""
    record = lake_root / MARKET_FILE
    try:
        location = json.loads(record.read_text(encoding="utf-8"))["location"]
    except FileNotFoundError:
        return LocalMarket(lake_root)
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise MarketError(f"{record} is not a market record ({type(exc).__name__}: {exc}); "
                          "fix it or set the market again with arena lake market") from exc
    if is_local(location):
        return LocalMarket(Path(location))
    _refuse_secrets(location)  # a record edited by hand is held to the same rule
    return ObjectMarket(location)


def market_has_data(market: Market) -> bool:
    return any(market.keys(top) for top in MARKET_DIRS)


def set_market(lake_root: Path, location: str) -> Market:
    """Record ``location`` as where the market data of the lake at ``lake_root`` lives; returns
    the new store. Refused (:class:`MarketError`) while the current store holds market data (a
    lake's bars never change location under it), when the new location already holds a market
    (another lake's: two lakes would overwrite each other's pointer), or when an object store's
    bucket cannot be found. The lake's own folders are the default: setting them removes the
    record. Call it through :meth:`arena.data.lake.Lake.set_market`, which holds the lake's
    writer lock (no ingest publishes meanwhile)."""
    location = check_uri(location)
    current = open_market(lake_root)
    new: Market = LocalMarket(Path(location)) if is_local(location) else ObjectMarket(location)
    if _same(new, current):
        return current
    if market_has_data(current):
        raise MarketError(f"the lake {lake_root} already holds market data at "
                          f"{current.describe()}: a lake's market never moves under it; start "
                          "a new lake for the new location")
    if isinstance(new, ObjectMarket):
        _check_reachable(new)
    if market_has_data(new):
        raise MarketError(f"{new.describe()} already holds market data (another lake's?): "
                          "two lakes never share one market; choose an empty location")
    record = lake_root / MARKET_FILE
    if isinstance(new, LocalMarket) and new.root.resolve() == lake_root.resolve():
        record.unlink(missing_ok=True)
        return new
    record.parent.mkdir(parents=True, exist_ok=True)
    tmp = record.with_name(f".{record.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(json.dumps({"location": location}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, record)
    return new


def _same(a: Market, b: Market) -> bool:
    if isinstance(a, LocalMarket) and isinstance(b, LocalMarket):
        return a.root.resolve() == b.root.resolve()
    return a.describe() == b.describe()


def _check_reachable(market: ObjectMarket) -> None:
    """The location can be listed and, on a bucket store (s3, gs), its bucket exists."""
    try:
        if urlsplit(market.uri).scheme in _BUCKET_SCHEMES:
            bucket = market._at("").strip("/").split("/")[0]
            if market.fs.get_file_info(bucket).type == pafs.FileType.NotFound:
                raise MarketError(f"no bucket {bucket!r} at {market.uri}: create it first")
        market.fs.get_file_info(pafs.FileSelector(market._at("").rstrip("/"),
                                                  allow_not_found=True))
    except MarketError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise MarketError(f"cannot reach the market at {market.uri}: {exc} (credentials and "
                          "endpoint come from the environment, e.g. AWS_ACCESS_KEY_ID, "
                          "AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL)") from exc
