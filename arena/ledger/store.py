"""The ledger: append-only Parquet event records, each written exactly once.

Everything a contestant did in a cycle is one immutable **record**, keyed by (cycle, contestant):
the key is the idempotency key. Automatic closes of the invalidation monitor are records of their
own, keyed by (window, contestant). Portfolio state is never stored: it is the fold over the
recorded fills (and hold level moves) in time order, so a record written twice would double
trades - which the write protocol below rules out.

Layout under ``<lake root>/ledger/`` (one directory per record, one Parquet file per table)::

    cycles/cycle=2025-11-26T16-00-00/contestant=momentum/
        outcome.parquet    1 row: status (traded|no_trade|forfeited|skipped, see
                           arena.engine.outcomes), repaired, parse errors, errors, prompt hash,
                           counts
        calls.parquet      one row per model call: role, model, tokens in/out, latency, cost, ...
        messages.parquet   the conversation; a system/user message that is part of the prompt
                           is stored as (prompt_sha256, prompt_offset, chars), others inline
        responses.parquet  response text per round ("answer", "repair"), the parser's notes;
                           ``raw_json``: the exact text as a JSON string literal when it held
                           characters UTF-8 cannot store (a lone surrogate), else null
        decisions.parquet  parsed decisions per round: action, symbol, the decision as JSON
        rejections.parquet code, message, decision index, round
        fills.parquet      every Fill field + round + seq (+ notional for analysts)
        levels.parquet     accepted holds that moved an invalidation level (no fill, but state)
        equity.parquet     snapshot after the cycle: cash, equity, fees_paid, realised_pnl, positions
    monitor/window=2025-11-26T16-00-00_2025-11-26T16-15-00/contestant=momentum/
        outcome.parquet, fills.parquet                   automatic closes of one monitor window
    prompts/<sha256>.txt   each prompt text once, content-addressed
    cycles/cycle=_schema/contestant=_schema/<table>.parquet (and monitor/window=_schema/...)
                       every table empty, with its schema: a glob over a table's files always
                       matches one, so SQL readers (dbt) work before the first monitor window;
                       ``_schema`` is no contestant name (names start with a letter or digit)
    _staging/          records being written (never read; a crashed run's leftovers are removed)
    _locks/            one flock file per contestant (never deleted; holds the last holder's pid)
    _heads/            each contestant's last record and its digest (arena.ledger.chain)
    _verified/         each contestant's records as last proven whole (arena.ledger.verified)
    _books/            each contestant's state after its records so far, kept by its commits

Every file also carries its key as real, typed columns (``cycle_at`` timestamp UTC and
``contestant``; ``window_start``/``window_end`` for the monitor), so readers need not rely on the
hive partition values (VARCHAR). Every table is written for every record, empty or not, with a
fixed schema, so DuckDB reads a table in place::

    select * from read_parquet('data_lake/ledger/cycles/*/*/fills.parquet', hive_partitioning=true)

Write protocol (``record_cycle`` / ``record_monitor``):

1. fast path: the record's directory exists -> "already recorded" (it only ever appears complete);
2. take an exclusive flock on ``_locks/contestant=<name>.lock`` (a ``filelock.FileLock``: native
   ``flock`` only, no soft fallback, the file is kept; waiting for a concurrent run), and check
   again: a run that waited finds the record and skips;
3. remove that contestant's staging leftovers (a crashed run's; no live writer can own them),
   and check its history (:func:`arena.ledger.verified.check_chain`: a record or file
   missing, unreadable or changed anywhere - a file written over in place in a record the book
   holds, at the contestant's next sweep - is a :class:`BrokenChain`, and nothing is built);
4. call ``build()`` (executes the trades), validate the record, refuse any secret in it;
5. write every table into ``_staging/<contestant>+<record>+<pid>+<token>/``, fsync the files and
   the directory, store the prompt text, then one ``os.rename`` of the directory to its final
   place (atomic; and it refuses to replace a non-empty directory), fsync the parent. Whatever
   stops the write before the rename (an interrupt, a full or read-only disk:
   :class:`LedgerWriteError`) removes the staging folder on the way out.

Why flock rather than a lock file with a pid or Prefect's lock manager: the kernel drops a flock
when its holder dies (crash, SIGKILL, ``os._exit``), so a lock left behind by a dead process is
never "stale" - the file stays, nobody holds it, the next run locks it at once; there is no pid
liveness guessing and no break-the-lock race. It excludes threads too (each call makes its own
``FileLock``, which opens its own file description). ``arena/`` must not import Prefect
(DESIGN), and flock needs no server. The lock is per contestant, not per record: a
contestant's records (cycles and monitor windows) are serialised, so a ``build`` reading
``portfolio()`` sees every record committed before it and two monitor windows of one contestant
cannot overlap. Limits: flock is local (Linux, one host; NFS and object storage need another lock
manager), and a ``build`` must not fork children that outlive it (a forked child inherits the
lock).

``build`` is called at most once per key among runs that commit; a run that died before the
rename left nothing behind (its trades never happened for the fold), so the next run builds anew.
Ordering for the fold: by time; at equal times monitor fills come before the cycle's (a window
``(start, t]`` describes what happened up to ``t``; the cycle at ``t`` acts on that state), so run
the monitor window ending at ``t`` before the cycle at ``t``. Within a cycle: the answer round,
then the repair round; in a round, its fills, then its level moves - the broker's own order
(closes, then holds, then adds and opens; a symbol appears twice in an answer only as a close and
a hold, and an add of a symbol excludes a hold of it).

Every string is written as UTF-8: text a model sent that UTF-8 cannot hold (a lone surrogate) is
stored with U+FFFD in its place (:func:`arena.core.text.storable`), and the raw response keeps an
exact copy in ``responses.raw_json``, so nothing a model sends can make a record fail to write.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from filelock import FileLock, Timeout

from arena.core.text import from_json_literal
from arena.core.types import Message
from arena.data.errors import DamagedFile
from arena.data.lake import Lake, default_root, is_disk_error, os_error_text, write_text
from arena.engine.portfolio import Fill, Portfolio
from arena.ledger.chain import BrokenChain as BrokenChain  # re-exported
from arena.ledger.chain import Link, make_link, read_link, write_head
from arena.ledger.errors import LedgerError
from arena.ledger.records import (
    ANSWER,
    MIN_SECRET_CHARS,
    MONITOR_SCHEMAS,
    REPAIR,
    SCHEMA_DIR,
    SCHEMAS,
    SECRET_SUFFIX,
    CycleRecord,
    MonitorKey,
    MonitorRecord,
    RecordKey,
    RecordStatus,
    Rows,
    check_name,
    cycle_rows,
    fill_from_row,
    monitor_rows,
    outcome_status,
    portfolio_from_json,
    portfolio_to_json,
    stamp,
    unstamp,
)
from arena.ledger.verified import Signature, check_chain, record_signatures, remember

BOOKS_DIR = "_books"  # each contestant's state after its records so far (Ledger._book)
# a book kept by a commit after the contestant's whole history was checked; a book without it was
# kept by an earlier version, which wrote one from any fold, and is not trusted
BOOK_FORMAT = 2
# a record folder's listing is reused while its modification time stays, once that time is this
# far in the past: beyond any file system's timestamp granularity (FAT's is 2 s)
SETTLED_NS = 3_000_000_000
# (kind's folder) -> outer folder -> (its mtime, its contestants' record folders), shared by every
# Ledger of the process on that folder (a cycle, its monitor and its publication each open one):
# see Ledger._listing
_LISTINGS: dict[str, dict[str, tuple[int, dict[str, tuple[str, Path, str]]]]] = {}
_LISTINGS_LOCK = threading.Lock()


def _fold_time(folder: str) -> pd.Timestamp:
    """When a record folds, from its folder's name (``cycle=<t>`` or ``window=<start>_<end>``):
    its cycle, or its window's end."""
    return unstamp(folder.split("=", 1)[1].split("_")[-1])


def _key_fold_time(key: str) -> pd.Timestamp:
    """When the record of a chain key (``<kind>/<folder>/contestant=<name>``) folds."""
    return _fold_time(key.split("/")[1])


def _book_sum(body: Mapping[str, Any]) -> str:
    """A book's checksum: the SHA-256 of its canonical JSON (a damaged book is refused)."""
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

log = logging.getLogger(__name__)


class LedgerBusy(LedgerError, TimeoutError):
    """Another run held the contestant's lock longer than ``wait`` seconds."""


class LedgerWriteError(LedgerError):
    """The ledger's disk refused the write (full, read-only, no permission): nothing was
    recorded and no staging folder was left."""


@contextmanager
def _disk_errors(what: str) -> Iterator[None]:
    """Turn an :class:`OSError` of a full, read-only or forbidden disk into a
    :class:`LedgerWriteError` saying ``what`` could not be written, the errno's meaning and the
    path (nothing was recorded)."""
    try:
        yield
    except OSError as exc:
        if not is_disk_error(exc):
            raise
        raise LedgerWriteError(f"{what} could not be written: {os_error_text(exc)} "
                               "(nothing recorded)") from exc


class SecretInRecord(LedgerError):
    """The record contains the value of a ``*_API_KEY`` environment variable: nothing written."""


def _refuse_secrets(rows: Rows, texts: Mapping[str, str], what: str,
                    names: frozenset[str] = frozenset()) -> None:
    """Raise :class:`SecretInRecord` if any string to be written holds the value of a
    ``*_API_KEY`` variable or of a variable named in ``names`` (the roster's key variables)."""
    secrets = {n: v for n, v in os.environ.items()
               if (n.upper().endswith(SECRET_SUFFIX) or n in names) and len(v) >= MIN_SECRET_CHARS}
    if not secrets:
        return

    def strings() -> Iterator[tuple[str, str]]:
        yield from (("prompt", t) for t in texts.values())
        for table, items in rows.items():
            for row in items:
                for col, value in row.items():
                    for v in value if isinstance(value, list) else [value]:
                        if isinstance(v, str):
                            yield f"{table}.{col}", v

    for where, text in strings():
        for name, value in secrets.items():
            if value in text:
                raise SecretInRecord(f"refusing to write {what}: {where} contains the value of "
                                     f"${name}; nothing was written")


# ---------------------------------------------------------------------------------- I/O helpers
def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_pid(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # for humans: who holds / held it


def _damaged_of(paths: Sequence[str], exc: BaseException) -> DamagedFile:
    """The :class:`DamagedFile` of a failed read of ``paths``: the first file that is missing or
    does not read on its own is named (the dataset's own error names none, or a C++ frame)."""
    for path in paths:
        try:
            pq.ParquetFile(path).metadata  # noqa: B018 - the footer is what a damaged file lacks
        except FileNotFoundError:
            return DamagedFile(path, "the file is missing from its record")
        except (pa.ArrowException, OSError) as err:
            return DamagedFile(path, str(err).strip().splitlines()[0] if str(err).strip()
                               else type(err).__name__)
    return DamagedFile(paths[0] if len(paths) == 1 else f"one of {len(paths)} ledger files",
                       str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)


@contextmanager
def _flock(path: Path, wait: float | None) -> Iterator[None]:
    """Hold an exclusive flock on ``path`` (released by the kernel if this process dies);
    :class:`LedgerBusy` after ``wait`` seconds (``None``: wait as long as it takes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(path, timeout=-1 if wait is None else wait, poll_interval=0.02,
                    fallback_to_soft=False, preserve_lock_file=True, on_acquired=_write_pid)
    try:
        lock.acquire()
    except Timeout:
        raise LedgerBusy(f"{path.name} is held by another run (waited {wait} s)") from None
    try:
        yield
    finally:
        lock.release()


class Ledger:
    """The ledger under ``<lake root>/ledger``: exactly-once writes, and reads for the engine."""

    def __init__(self, root: str | Path | Lake | None = None, *,
                 secret_names: Iterable[str] = ()) -> None:
        """``secret_names``: environment variables (besides ``*_API_KEY``) whose values must
        never be written, e.g. the roster's ``api_key_env`` names."""
        lake_root = root.root if isinstance(root, Lake) else Path(root) if root else default_root()
        self.dir = lake_root / "ledger"
        self.secret_names = frozenset(secret_names)
        self._schemas_written = False
        # contestant -> (record folders read, their events in fold order): see _events
        self._event_cache: dict[str, tuple[frozenset[Path], tuple[Any, ...]]] = {}
        self._cache_lock = threading.Lock()
        self._reading = threading.local()  # see reading()

    def __repr__(self) -> str:
        return f"Ledger({str(self.dir)!r})"

    def __getstate__(self) -> dict[str, Any]:
        """A ledger sent to another process (a Dask worker) is its address: the receiver reads
        the records it needs itself."""
        return {"dir": self.dir, "secret_names": self.secret_names}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.dir, self.secret_names = state["dir"], state["secret_names"]
        self._schemas_written, self._event_cache = False, {}
        self._cache_lock = threading.Lock()
        self._reading = threading.local()

    # ------------------------------------------------------------------ addresses
    def record_dir(self, cycle_at: pd.Timestamp, contestant: str) -> Path:
        return self.dir / "cycles" / f"cycle={stamp(cycle_at)}" / f"contestant={check_name(contestant)}"

    def monitor_dir(self, start: pd.Timestamp, end: pd.Timestamp, contestant: str) -> Path:
        return (self.dir / "monitor" / f"window={stamp(start)}_{stamp(end)}"
                / f"contestant={check_name(contestant)}")

    def write_schemas(self) -> None:
        """Write the empty schema file of every table (idempotent; see the module docstring), or
        rewrite it when the table gained columns since it was written. Once per instance: later
        calls (one after every committed record) do nothing."""
        if self._schemas_written:
            return
        for kind, key, schemas in (("cycles", "cycle", SCHEMAS), ("monitor", "window", MONITOR_SCHEMAS)):
            folder = self.dir / kind / f"{key}={SCHEMA_DIR}" / f"contestant={SCHEMA_DIR}"
            for name, schema in schemas.items():
                path = folder / f"{name}.parquet"
                if not path.is_file() or not pq.read_schema(path).equals(schema):
                    folder.mkdir(parents=True, exist_ok=True)
                    tmp = path.with_name(f".{name}.{uuid.uuid4().hex[:8]}.tmp")
                    pq.write_table(schema.empty_table(), tmp)
                    os.replace(tmp, path)
        self._schemas_written = True

    def pattern(self, table: str, monitor: bool = False) -> str:
        """The glob of one table's files, for ``read_parquet(..., hive_partitioning=true)``."""
        return str(self.dir / ("monitor" if monitor else "cycles") / "*" / "*" / f"{table}.parquet")

    # ------------------------------------------------------------------ writing
    def record_cycle(self, cycle_at: pd.Timestamp, contestant: str, build: Callable[[], CycleRecord],
                     *, wait: float | None = None) -> RecordStatus:
        """Run ``build`` and write its record, unless (cycle, contestant) is already recorded.

        Waits for a concurrent run of the same contestant (at most ``wait`` seconds, then
        :class:`LedgerBusy`); exceptions of ``build`` propagate and nothing is written. A cycle
        behind the contestant's history (a later cycle or monitor window already recorded, e.g.
        after an operational failure left a gap) is refused (:class:`LedgerError`) before
        ``build`` runs: its trades would fold before records made without them.
        """
        final = self.record_dir(cycle_at, contestant)

        def rows(keys: Sequence[str]) -> tuple[Rows, dict[str, str]]:
            # the history in fold order: a cycle or a window's end after this cycle is its last
            last = _key_fold_time(keys[-1]) if keys else None
            if last is not None and last > cycle_at:
                raise LedgerError(f"the cycle at {cycle_at} of {contestant} comes after its history: "
                                  f"a record up to {last} exists, and history is append-only")
            record = build()
            if (record.contestant, record.cycle_at) != (contestant, cycle_at):
                raise LedgerError(f"build() returned the record of {record.contestant} at "
                                  f"{record.cycle_at}, not {contestant} at {cycle_at}")
            return cycle_rows(record)

        return self._commit(final, contestant, rows, SCHEMAS, wait)

    def record_monitor(self, start: pd.Timestamp, end: pd.Timestamp, contestant: str,
                       build: Callable[[], MonitorRecord], *, wait: float | None = None) -> RecordStatus:
        """Like :meth:`record_cycle`, for the monitor window ``(start, end]``. A window that
        overlaps another recorded window of the contestant is refused (:class:`LedgerError`)."""
        final = self.monitor_dir(start, end, contestant)

        def rows(_keys: Sequence[str]) -> tuple[Rows, dict[str, str]]:  # windows: own listing
            clash = [k for k in self.monitor_records(contestant) if start < k.end and k.start < end]
            if clash:
                raise LedgerError(f"monitor window ({start}, {end}] of {contestant} overlaps the "
                                  f"recorded window ({clash[0].start}, {clash[0].end}]")
            later = [k for k in self.records(contestant) if k.cycle_at > start]
            if later:  # its fills would fold before a cycle that already ran without them
                raise LedgerError(f"monitor window ({start}, {end}] of {contestant} comes after "
                                  f"its recorded cycle at {later[0].cycle_at}: history is append-only")
            record = build()
            if (record.contestant, record.start, record.end) != (contestant, start, end):
                raise LedgerError(f"build() returned the monitor record of {record.contestant} "
                                  f"({record.start}, {record.end}], not {contestant} ({start}, {end}]")
            return monitor_rows(record), {}

        return self._commit(final, contestant, rows, MONITOR_SCHEMAS, wait)

    def _commit(self, final: Path, contestant: str,
                make: Callable[[Sequence[str]], tuple[Rows, dict[str, str]]],
                schemas: Mapping[str, pa.Schema], wait: float | None) -> RecordStatus:
        if final.is_dir():
            return RecordStatus.ALREADY_RECORDED
        where = f"{final.parent.name}/{final.name}"
        what = f"the record {where}"
        with ExitStack() as held:
            with _disk_errors(what):
                held.enter_context(_flock(self.dir / "_locks" / f"contestant={contestant}.lock",
                                          wait))
            held.callback(self._forget_listings)  # the record is in no listing kept before
            self._forget_listings()  # what this commit reads is listed under its lock
            if final.is_dir():  # a concurrent run committed while this one waited
                return RecordStatus.ALREADY_RECORDED
            staging = self.dir / "_staging"
            for leftover in staging.glob(f"{contestant}+*"):  # crashed runs' partial writes
                shutil.rmtree(leftover, ignore_errors=True)
            # the history this record follows is checked before anything is built (no
            # model is called for a contestant whose book cannot be folded): ledger.verified
            keys = self.chain_keys(contestant)
            book = self._read_book(contestant, keys)  # the fold reads the records after it
            reads_from = 0 if book is None else int(book["records"])
            previous = check_chain(self.dir, contestant, keys, reads_from=reads_from).last
            rows, texts = make(keys)
            _refuse_secrets(rows, texts, where, self.secret_names)
            tables = {n: pa.Table.from_pylist(rows.get(n, []), schema=s) for n, s in schemas.items()}
            tmp = staging / f"{contestant}+{final.parent.name}+{os.getpid()}+{uuid.uuid4().hex[:8]}"
            with _disk_errors(what):
                try:  # an interrupt too: the folder goes, the record never appears in part
                    tmp.mkdir(parents=True)
                    for sha, text in texts.items():
                        self._store_text(sha, text)
                    for name, table in tables.items():
                        self._write_table(tmp / f"{name}.parquet", table)
                    link = make_link(tmp, final.relative_to(self.dir).as_posix(), previous)
                    files = record_signatures(tmp)  # as hashed: a rename leaves them as they are
                    _fsync_dir(tmp)
                    final.parent.mkdir(parents=True, exist_ok=True)
                    os.rename(tmp, final)  # the commit: the record appears whole, or not at all
                except BaseException:
                    shutil.rmtree(tmp, ignore_errors=True)
                    raise
            try:  # the record is committed: a failure now is reported, never as "not recorded"
                _fsync_dir(final.parent)
                write_head(self.dir, contestant, link)  # lost in a crash: rolled forward next time
                self.write_schemas()
            except OSError as exc:
                if not is_disk_error(exc):
                    raise
                log.warning("%s was recorded, but the ledger's schema files could not be "
                            "written (the next record writes them): %s", what, os_error_text(exc))
            self._after_commit(contestant, [*keys, link.key], link, files)
        return RecordStatus.RECORDED

    def _after_commit(self, contestant: str, order: list[str], link: Link,
                      files: dict[str, Signature]) -> None:
        """Keep what the next commit and reader start from, the lock still held: the new
        record in the verified point (its files as its link hashed them), and the book after
        ``order`` (the history just checked whole, then the new record, which folds last: a
        record behind the history is refused). Both are caches: a failure is logged, the record
        stays recorded, and the next commit proves the record again, the next reader folds it."""
        self._forget_listings()  # the new record is in no listing taken before it
        try:
            remember(self.dir, contestant, link, files)
            self._book(contestant, write=True, order=order)
        except Exception as exc:  # the record is committed: never reported as not recorded
            log.warning("after the record of %s: its verified point or book is not kept: %s",
                        contestant, exc)

    def _write_table(self, path: Path, table: pa.Table) -> None:
        with open(path, "wb") as f:
            pq.write_table(table, f, compression="zstd")
            f.flush()
            os.fsync(f.fileno())

    def _store_text(self, sha: str, text: str) -> None:
        path = self.dir / "prompts" / f"{sha}.txt"
        if path.is_file():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{sha}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # same content whoever wins
        _fsync_dir(path.parent)  # durable before any record that references it

    # ------------------------------------------------------------------ reading
    def has(self, cycle_at: pd.Timestamp, contestant: str) -> bool:
        return self.record_dir(cycle_at, contestant).is_dir()

    def records(self, contestant: str | None = None) -> list[RecordKey]:
        """The recorded (cycle, contestant) keys, by cycle then contestant."""
        keys = [RecordKey(unstamp(d.parent.name.split("=", 1)[1]), d.name.split("=", 1)[1])
                for d in self._dirs("cycles", contestant)]
        return sorted(keys)

    def monitor_records(self, contestant: str | None = None) -> list[MonitorKey]:
        keys = []
        for d in self._dirs("monitor", contestant):
            start, end = d.parent.name.split("=", 1)[1].split("_")
            keys.append(MonitorKey(unstamp(start), unstamp(end), d.name.split("=", 1)[1]))
        return sorted(keys)

    @contextmanager
    def contestant_lock(self, contestant: str, wait: float | None = None) -> Iterator[None]:
        """Hold the contestant's record lock (as a commit does): for a restore of one of its
        records (``arena season verify --restore-from``), which no commit may interleave."""
        with _flock(self.dir / "_locks" / f"contestant={check_name(contestant)}.lock", wait):
            yield

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Within the block, this thread's reads list the record folders once per kind (every
        contestant's) and take each contestant's from that listing: for a job that reads the
        whole roster's books and then writes a few records (a monitor tick reads 20 books from
        two listings instead of 40). A record committed meanwhile by another process is seen
        by the reads after the block; a commit of this ledger lists afresh under its lock (its
        chain is never checked against a listing taken before the lock) and the listing after
        it is made again."""
        outer = getattr(self._reading, "listings", None)
        if outer is None:
            self._reading.listings = {}
        try:
            yield
        finally:
            if outer is None:
                self._reading.listings = None

    def _forget_listings(self) -> None:
        kept = getattr(self._reading, "listings", None)
        if kept:
            kept.clear()

    def chain_keys(self, contestant: str) -> list[str]:
        """The contestant's records (folders relative to the ledger) in fold order, newest last:
        by time, a monitor window ending at ``t`` before the cycle at ``t``
        (:mod:`arena.ledger.chain`). From one listing of each kind, the folders' stamps parsed
        once per process."""
        order = [(_fold_time(o).value, 1, key) for o, _, key in self._listing("cycles", contestant)]
        order += [(_fold_time(o).value, 0, key) for o, _, key in self._listing("monitor", contestant)]
        order.sort()  # by time in ns, then kind (no two records share both)
        return [key for _, _, key in order]

    def folders(self, monitor: bool = False) -> list[Path]:
        """Every committed record's folder (cycles, or ``monitor`` windows), in key order."""
        return self._dirs("monitor" if monitor else "cycles", None)

    def read_records(self, name: str, folders: Sequence[Path], *,
                     monitor: bool = False) -> pa.Table:
        """Table ``name`` of the records in ``folders`` (from :meth:`folders`), with the
        table's current columns (a column a record predates is null);
        :class:`~arena.data.errors.DamagedFile` when one cannot be read."""
        return self._arrow(name, monitor=monitor, dirs=folders)

    def _dirs(self, kind: str, contestant: str | None) -> list[Path]:
        """The record folders of ``kind`` (one contestant's, or everyone's), in key order."""
        return [path for _, path, _ in self._listing(kind, contestant)]

    def _listing(self, kind: str, contestant: str | None) -> list[tuple[str, Path, str]]:
        """``(outer folder, record folder, key)`` of each record of ``kind`` (one contestant's,
        or everyone's) in key order; the key is the folder relative to the ledger.

        One listing of the kind's folder and one ``stat`` per cycle (or window) folder: the
        contestants inside a folder are listed again only when its modification time moved
        (an entry added or removed), so a season's last day reads its hundreds of folders for
        the price of their ``stat``s, whoever asks (any ledger of the process on this folder).
        A folder modified less than :data:`SETTLED_NS` before the listing is never taken from
        the cache: a change within the file system's timestamp granularity would leave its
        time as it was. Within :meth:`reading`, the thread's one listing of the kind."""
        kept = getattr(self._reading, "listings", None)
        if kept is not None:  # within reading(): one listing of the kind for every contestant
            by_name = kept.get(kind)
            if by_name is None:
                by_name = kept[kind] = {None: self._list(kind, None)}
                for entry in by_name[None]:
                    by_name.setdefault(entry[1].name, []).append(entry)
            return list(by_name.get(None if contestant is None
                                    else f"contestant={check_name(contestant)}", []))
        return self._list(kind, contestant)

    def _list(self, kind: str, contestant: str | None) -> list[tuple[str, Path, str]]:
        """:meth:`_listing` from the folders themselves."""
        root = self.dir / kind
        try:
            outer = sorted(e.name for e in os.scandir(root) if e.is_dir())
        except FileNotFoundError:
            return []
        schema = f"contestant={SCHEMA_DIR}"
        name = None if contestant is None else f"contestant={check_name(contestant)}"
        if name == schema:
            return []
        now = time.time_ns()
        base = os.fspath(root)
        with _LISTINGS_LOCK:
            known = _LISTINGS.get(base, {})
        listed: dict[str, tuple[int, dict[str, tuple[str, Path, str]]]] = {}
        out: list[tuple[str, Path, str]] = []
        for o in outer:
            folder = f"{base}/{o}"
            try:
                mtime = os.stat(folder).st_mtime_ns
            except FileNotFoundError:  # moved aside while listed
                continue
            hit = known.get(o)
            if hit is None or hit[0] != mtime:
                try:
                    inner = sorted(e.name for e in os.scandir(folder)
                                   if e.name.startswith("contestant=") and e.is_dir())
                except FileNotFoundError:
                    continue
                hit = (mtime, {i: (o, root / o / i, f"{kind}/{o}/{i}") for i in inner
                               if i != schema})
            if now - mtime > SETTLED_NS:
                listed[o] = hit
            if name is None:
                out += hit[1].values()
            elif (record := hit[1].get(name)) is not None:
                out.append(record)
        with _LISTINGS_LOCK:
            _LISTINGS[base] = listed
        return out

    def _arrow(self, name: str, contestant: str | None = None, monitor: bool = False,
               dirs: Sequence[Path] | None = None) -> pa.Table:
        schema = (MONITOR_SCHEMAS if monitor else SCHEMAS)[name]
        chosen = self._dirs("monitor" if monitor else "cycles", contestant) if dirs is None \
            else dirs
        paths = [str(d / f"{name}.parquet") for d in chosen]
        if not paths:
            return schema.empty_table()
        try:
            return ds.dataset(paths, schema=schema, format="parquet").to_table()
        except (pa.ArrowException, OSError) as exc:
            raise _damaged_of(paths, exc) from exc

    def table(self, name: str, contestant: str | None = None, *, monitor: bool = False) -> pd.DataFrame:
        """Every record's rows of table ``name`` (see :data:`SCHEMAS`), in key order."""
        frame = self._arrow(name, contestant, monitor).to_pandas()
        if name == "outcome" and not monitor and len(frame):
            frame["status"] = [outcome_status(s, n) for s, n in zip(frame["status"], frame["n_fills"],
                                                             strict=True)]
        order = [c for c in ("cycle_at", "window_end", "contestant", "round", "seq",
                             "decision_index") if c in frame.columns]
        return frame.sort_values(order, kind="stable").reset_index(drop=True)

    def _events(self, contestant: str) -> list[tuple[tuple[Any, ...], Fill | tuple[str, float]]]:
        """The contestant's fills and level moves in fold order. Records are written once, so
        the events of the records already read are kept and only new records are read: a
        season's cycle costs the same on its last day as on its first."""
        cycles, monitor = self._dirs("cycles", contestant), self._dirs("monitor", contestant)
        with self._cache_lock:
            seen, cached = self._event_cache.get(contestant, (frozenset(), ()))
        new_cycles = [d for d in cycles if d not in seen]
        new_monitor = [d for d in monitor if d not in seen]
        if not new_cycles and not new_monitor:
            return list(cached)
        events = list(cached) + self._read_events(new_cycles, new_monitor)
        events.sort(key=lambda e: e[0])
        with self._cache_lock:
            self._event_cache[contestant] = (seen | set(new_cycles) | set(new_monitor),
                                             tuple(events))
        return events

    def _read_events(self, cycles: Sequence[Path], monitor: Sequence[Path]
                     ) -> list[tuple[tuple[Any, ...], Fill | tuple[str, float]]]:
        """The fills and level moves of the records in ``cycles`` and ``monitor`` (unsorted),
        each with its fold key."""
        rank = {ANSWER: 0, REPAIR: 1}
        events: list[tuple[tuple[Any, ...], Fill | tuple[str, float]]] = []
        if cycles:
            for row in self._arrow("fills", dirs=cycles).to_pylist():
                events.append(((pd.Timestamp(row["cycle_at"]), 1, rank[row["round"]], 0,
                                row["seq"]), fill_from_row(row)))
            for row in self._arrow("levels", dirs=cycles).to_pylist():
                events.append(((pd.Timestamp(row["cycle_at"]), 1, rank[row["round"]], 1,
                                row["decision_index"]), (row["symbol"], row["invalidation_price"])))
        if monitor:
            for row in self._arrow("fills", monitor=True, dirs=monitor).to_pylist():
                fill = fill_from_row(row)
                events.append(((fill.at, 0, 0, 0, row["seq"]), fill))
        return events

    def fills(self, contestant: str) -> list[Fill]:
        """Every recorded fill of ``contestant`` (cycles and monitor) in fold order."""
        return [e for _, e in self._events(contestant) if isinstance(e, Fill)]

    def portfolio(self, contestant: str, start: Portfolio | None = None, *,
                  until: pd.Timestamp | None = None) -> Portfolio:
        """The contestant's state: ``start`` (default $10,000 cash) with every recorded fill and
        level move applied in order - all of them, or those up to the cycle at ``until`` (that
        cycle and the monitor window ending at it included). The state after all of them
        continues from the contestant's book (:meth:`_book`): a process that has read nothing
        yet (a monitor tick, a cycle of a live season) reads only the records after it."""
        if start is None and until is None:  # the book stays current for the next process
            return self._book(contestant)
        if start is None:  # at or after its last record (a day's report): its book holds them all
            keys = self.chain_keys(contestant)
            if not keys or _key_fold_time(keys[-1]) <= until:
                return self._book(contestant)
        state = start or Portfolio()
        end = until
        for key, event in self._events(contestant):
            if end is not None and key[0] > end:
                break
            state = state.apply(event) if isinstance(event, Fill) else state.with_level(*event)
        return state

    def _book_path(self, contestant: str) -> Path:
        return self.dir / BOOKS_DIR / f"contestant={check_name(contestant)}.json"

    def _read_book(self, contestant: str, order: Sequence[str]) -> dict[str, Any] | None:
        """The contestant's book, when it is whole (its checksum holds), was kept by a commit
        (:data:`BOOK_FORMAT`) and still follows ``order`` (the records it was kept after are
        still the first ones); else None, and the fold starts from the first record."""
        path = self._book_path(contestant)
        try:
            book = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(book, dict) and book.get("format") != BOOK_FORMAT:
                log.debug("the book of %s was kept by an earlier version: folded from its "
                          "first record", contestant)
                return None
            body = {k: book[k] for k in ("records", "through", "digest", "portfolio", "format")}
            count = int(body["records"])
            if book["sha256"] != _book_sum(body):
                log.warning("the book of %s (%s) does not match its checksum: folded from its "
                            "first record", contestant, path)
                return None
            if 0 < count <= len(order) and order[count - 1] == body["through"]:
                return body
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("the book of %s (%s) cannot be read, folded from its first record: %s",
                        contestant, path, exc)
        return None

    def _book(self, contestant: str, *, write: bool = False,
              order: list[str] | None = None) -> Portfolio:
        """The contestant's state after every record, continued from its book: the state after
        its first ``records`` records in fold order (:meth:`chain_keys`), kept in
        ``_books/contestant=<name>.json`` with the last of them. History is append-only, so
        when the first ``records`` records are still those, the state is the book's with the
        later records' events applied (they all fold after the book's); otherwise (a record
        moved aside by a repair, a damaged or missing book) it is folded from the first record.

        The book is written only by a commit (``write``), right after it: under the
        contestant's lock, its history just checked (:mod:`arena.ledger.verified`: every file
        of every record the fold reads, all of them without a book), so a book never holds a
        fold around a record deleted or changed; a reader that folded a
        damaged history keeps its result to itself (and the contestant's next commit refuses).
        ``order``: the contestant's records (:meth:`chain_keys`), when the caller knows them."""
        order = self.chain_keys(contestant) if order is None else order
        state, done = Portfolio(), 0
        book = self._read_book(contestant, order)
        if book is not None:
            state, done = portfolio_from_json(book["portfolio"]), int(book["records"])
        rest = [self.dir / key for key in order[done:]]
        if not rest:
            return state
        events = self._read_events([d for d in rest if d.parts[-3] == "cycles"],
                                   [d for d in rest if d.parts[-3] == "monitor"])
        for _, event in sorted(events, key=lambda e: e[0]):
            state = state.apply(event) if isinstance(event, Fill) else state.with_level(*event)
        if write:
            link = read_link(self.dir / order[-1])
            body = {"records": len(order), "through": order[-1],
                    "digest": None if link is None else link.digest,
                    "portfolio": portfolio_to_json(state), "format": BOOK_FORMAT}
            write_text(self._book_path(contestant), json.dumps({**body, "sha256": _book_sum(body)}))
        return state

    def record_rows(self, name: str, cycle_at: pd.Timestamp, contestant: str) -> list[dict[str, Any]]:
        """One table of one (cycle, contestant) record, as rows (KeyError: no such record)."""
        path = self.record_dir(cycle_at, contestant) / f"{name}.parquet"
        if not path.is_file():
            raise KeyError(f"no ledger record for {contestant} at {cycle_at}")
        try:
            rows = pq.ParquetFile(path).read().to_pylist()
        except (pa.ArrowException, OSError) as exc:
            raise _damaged_of([str(path)], exc) from exc
        if name == "outcome":
            rows = [{**r, "status": outcome_status(r["status"], r["n_fills"])} for r in rows]
        return rows

    def equity_before(self, contestant: str, at: pd.Timestamp) -> dict[str, Any] | None:
        """The equity snapshot of the contestant's latest record before ``at`` (``None``: no
        earlier record has one). Reads that record only (usually the previous cycle's), so the
        cost does not grow with the season."""
        for key in reversed(self.records(contestant)):
            if key.cycle_at < at and (rows := self.record_rows("equity", key.cycle_at, contestant)):
                return rows[-1]
        return None

    def responses(self, contestant: str, cycle_at: pd.Timestamp) -> dict[str, str | None]:
        """The raw response text per round of a recorded cycle, exactly as the contestant sent
        it (for the replay contestant)."""
        return {r["round"]: from_json_literal(r["raw_json"]) if r.get("raw_json") else r["text"]
                for r in self.record_rows("responses", cycle_at, contestant)}

    def messages(self, contestant: str, cycle_at: pd.Timestamp) -> list[Message]:
        """The recorded conversation, prompt parts restored from the prompt store."""
        out = []
        for r in sorted(self.record_rows("messages", cycle_at, contestant), key=lambda r: r["seq"]):
            if r["prompt_sha256"] is None:
                out.append(Message(r["role"], r["content"]))
            else:
                start = r["prompt_offset"]
                out.append(Message(r["role"], self.prompt(r["prompt_sha256"])[start:start + r["chars"]]))
        return out

    def prompt(self, sha256: str) -> str:
        """A stored prompt text by its hash."""
        return (self.dir / "prompts" / f"{sha256}.txt").read_text(encoding="utf-8")
