"""The bar partitions a process has read, kept by the identity of the file they came from.

A cycle reads the same partitions several times - its monitor window, the market's two scans,
the daily report's damage check and prices - and a replay reads them again every day while
nothing publishes. :class:`BarCache` keeps each file's decoded columns under the file's
**signature** (:meth:`arena.data.lake.Lake.signature`: inode, size and modification time of a
local file; the version an object store's pointer names), so a file is opened once per
publication of it: a later ingest replaces the file, its signature changes, and the next read
misses and opens the new file (the old entry is dropped then). A publication made through the
same :class:`~arena.data.lake.Lake` also forgets its keys at once.

The signature is taken from the file that was actually read (``fstat`` of the open file, or the
object version opened), so a publication between the look-up and the read can never store one
file's bars under another file's identity. A file rewritten in place (never the lake's
protocol: it publishes new files by rename) keeps its inode; its new modification time still
changes the signature.

What is kept: per file, the columns read so far (a price read decodes ``timestamp`` and
``close``; a later full read adds only the missing ones) and the result of
:func:`arena.data.sanity.bar_problem` per set of columns checked. Entries are evicted least
recently used beyond ``max_bytes`` (the demo's whole market, five intervals of 62 assets over
a year, is about 45 MB of columns; a cycle's reads about 20 MB); ``max_bytes=0`` keeps nothing,
every read opens its file.

Apart from the columns, and never evicted (one small entry per file), the cache keeps each
file's **verdict** against the digest its publication recorded (:mod:`arena.data.digests`),
under the same signature: a file is hashed once per version of it, however often its columns
are dropped and read again (:attr:`CacheStats.hashed` counts the files hashed).
Arrow tables are immutable, so callers share cached columns safely. Thread-safe; a pickled cache
(a lake sent to a worker process) arrives empty.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from arena.data.digests import Verdict

BAR_CACHE_BYTES = 256 * 2**20
"""The default bound of a lake's cache of decoded bar columns (bytes)."""

_UNCHECKED = object()


@dataclass
class _Entry:
    signature: object
    columns: dict[str, pa.ChunkedArray] = field(default_factory=dict)
    fields: dict[str, pa.Field] = field(default_factory=dict)
    problems: dict[tuple[str, ...], str | None] = field(default_factory=dict)
    nbytes: int = 0


@dataclass
class CacheStats:
    """What a cache has served: reads answered from memory, files opened, and files hashed
    to judge them against their recorded digest."""

    hits: int = 0
    files_read: int = 0
    hashed: int = 0


class BarCache:
    """Decoded bar columns per file (``relative`` key of the market), under its signature."""

    def __init__(self, max_bytes: int = BAR_CACHE_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"a cache bound is a number of bytes, not {max_bytes}")
        self.max_bytes = max_bytes
        self.stats = CacheStats()
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._verdicts: dict[str, tuple[object, Verdict]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __reduce__(self) -> tuple[type[BarCache], tuple[int]]:  # a worker starts empty
        return BarCache, (self.max_bytes,)

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """Bytes of the columns kept."""
        return self._bytes

    def table(self, relative: str, signature: object, columns: Sequence[str]) -> pa.Table | None:
        """The cached ``columns`` (in that order) of the file ``relative`` whose signature is
        ``signature``; None when any of them is not kept (or the file changed since)."""
        if signature is None:
            return None
        with self._lock:
            entry = self._entries.get(relative)
            if entry is None or entry.signature != signature or \
                    any(c not in entry.columns for c in columns):
                return None
            self._entries.move_to_end(relative)
            self.stats.hits += 1
            return _select(entry, columns)

    def missing(self, relative: str, signature: object, columns: Sequence[str]) -> list[str]:
        """The ``columns`` a read of the file with ``signature`` must still decode."""
        with self._lock:
            entry = self._entries.get(relative)
            if entry is None or entry.signature != signature:
                return list(columns)
            return [c for c in columns if c not in entry.columns]

    def add(self, relative: str, signature: object, table: pa.Table,
            columns: Sequence[str]) -> pa.Table | None:
        """Keep the columns of ``table`` (just read from the file with ``signature``) and return
        ``columns`` of the file: the new ones with those already kept for that signature (None
        when some of ``columns`` are neither: the file's entry was dropped since
        :meth:`missing`)."""
        with self._lock:
            self.stats.files_read += 1
            entry = self._entries.get(relative)
            if entry is not None and entry.signature != signature:
                self._drop(relative)
                entry = None
            kept = entry is not None
            if entry is None:
                entry = _Entry(signature)
            added = 0
            for name, f in zip(table.column_names, table.schema, strict=True):
                if name not in entry.columns:
                    column = table.column(name)
                    entry.columns[name], entry.fields[name] = column, f
                    added += column.nbytes
            entry.nbytes += added
            if any(c not in entry.columns for c in columns):  # dropped since: read them all
                return None
            out = _select(entry, columns)
            if kept:
                self._bytes += added
                self._entries.move_to_end(relative)
            elif entry.nbytes <= self.max_bytes:
                self._entries[relative] = entry
                self._bytes += entry.nbytes
            self._evict()
            return out

    def problem(self, relative: str, signature: object, columns: Sequence[str],
                check: Callable[[], str | None]) -> str | None:
        """``check()`` (a :func:`~arena.data.sanity.bar_problem` of these ``columns`` of the
        file), computed once per file and set of columns while the file is kept."""
        key = tuple(columns)
        with self._lock:
            entry = self._entries.get(relative)
            known = (entry.problems.get(key, _UNCHECKED)
                     if entry is not None and entry.signature == signature else _UNCHECKED)
        if known is not _UNCHECKED:
            return known  # type: ignore[return-value]
        found = check()
        with self._lock:
            entry = self._entries.get(relative)
            if entry is not None and entry.signature == signature:
                entry.problems[key] = found
        return found

    def known_verdict(self, relative: str, signature: object) -> Verdict | None:
        """The verdict kept for the file with ``signature`` (None: not judged yet)."""
        with self._lock:
            kept = self._verdicts.get(relative)
        return kept[1] if kept is not None and signature is not None \
            and kept[0] == signature else None

    def verdict(self, relative: str, signature: object,
                judge: Callable[[], tuple[Verdict, bool]]) -> Verdict:
        """The file's verdict against its recorded digest: ``judge()`` (the verdict, and
        whether it hashed the file) once per signature, kept apart from the columns."""
        known = self.known_verdict(relative, signature)
        if known is not None:
            return known
        found, hashed = judge()
        self.trust(relative, signature, found)
        if hashed:
            with self._lock:
                self.stats.hashed += 1
        return found

    def trust(self, relative: str, signature: object, verdict: Verdict) -> None:
        """Keep ``verdict`` for the file with ``signature`` (a publication knows the digest of
        the file it just put in place: no read has to hash it again)."""
        if signature is None:
            return
        with self._lock:
            self._verdicts[relative] = (signature, verdict)

    def forget(self, relatives: Iterable[str]) -> None:
        """Drop the files ``relatives`` (a publication replaced them)."""
        with self._lock:
            for relative in relatives:
                self._verdicts.pop(relative, None)
                if relative in self._entries:
                    self._drop(relative)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._verdicts.clear()
            self._bytes = 0

    def _drop(self, relative: str) -> None:
        self._bytes -= self._entries.pop(relative).nbytes

    def _evict(self) -> None:
        while self._bytes > self.max_bytes and self._entries:
            self._drop(next(iter(self._entries)))


def _select(entry: _Entry, columns: Sequence[str]) -> pa.Table:
    return pa.Table.from_arrays([entry.columns[c] for c in columns],
                                schema=pa.schema([entry.fields[c] for c in columns]))
