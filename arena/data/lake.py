"""The Parquet data lake: hive-partitioned bars, published atomically, never half-written.

Layout under the lake root (``data_lake/`` by default, ``$ARENA_LAKE`` overrides; the market
data - ``bars/``, ``funding/``, ``events/``, ``earnings/`` - may live elsewhere, on another path
or on object storage: :mod:`arena.data.market_store`)::

    bars/provider=synthetic/interval=1h/symbol=ETH/data.parquet   one file per partition
    funding/provider=synthetic/symbol=ETH/data.parquet
    manifests/ingest/<run id>.json                                 one per ingest run
    validation/<run id>/, validation/index.html, validation/docs/   each run's results and page,
                                                                    the runs' index, Data Docs
    staging/<run id>/<symbol>/...      files written by a run that has not been published (yet)
    journal/<run id>/<symbol>/         a publication's intent and the files it replaces, while
                                       it moves its files (left behind only by a killed process)
    quarantine/<run id>/<symbol>/...   a failed asset's files and its reason, never read as data
    _locks/writer.lock, _locks/runs/   the writer lock; one lock per live run (its staging)

Publishing is all-or-nothing per asset: every new partition file of an asset is first written
under ``staging/``, validated, and only then published by the market's store (on a filesystem:
each file moved into place with ``os.replace``, rolled back if any move fails, after an intent
journal that lets the next run roll a publication a kill cut forward or back; on object
storage: new versioned objects, then one pointer replaced). A failed asset's staged files move to
``quarantine/`` and its published partitions stay byte-for-byte as they were.

Every bar file is written with Parquet page checksums, verified whenever it is decoded, and its
publication records its whole-file SHA-256 (:mod:`arena.data.digests`); every read compares the
bytes it read with that record, once per version of the file. A file whose bytes differ, or a
recorded partition whose file is gone, is :class:`~arena.data.errors.DamagedFile`, never bars.

Writers serialise on :meth:`Lake.writer_lock` only for the read-merge-swap of a publication, so
two overlapping runs never publish from a stale read (no lost update). Every run holds its own
:meth:`Lake.run_lock` while its ``staging/<run id>`` exists; a staging folder whose lock is free
belongs to a dead run and is removed by :meth:`Lake.clean_stale_staging`.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from filelock import FileLock, Timeout

from arena.core.environment import setting
from arena.core.files import write_text as write_text  # re-exported: the lake's writers
from arena.core.sessions import NAT, TS_UNIT, ceil_micros, utc
from arena.data.bar_cache import BAR_CACHE_BYTES, BarCache
from arena.data.bars import bar_frame_from_columns, utc_micros
from arena.data.digests import CHANGED, MISSING, UNRECORDED, WHOLE, Verdict, judge, sha256_hex
from arena.data.errors import DamagedFile, MarketError
from arena.data.market_store import LocalMarket, Market, open_market, set_market
from arena.data.providers.base import BAR_COLUMNS, empty_bars
from arena.data.sanity import bar_problem

WRITER_LOCK_TIMEOUT = 600.0  # seconds a publication waits for another one


@cache
def _bar_schema() -> pa.Schema:
    """The bars' Arrow schema (built on first use, as pyarrow is imported)."""
    return pa.schema([
        pa.field("timestamp", pa.timestamp(TS_UNIT, tz="UTC"), nullable=False),
        *[pa.field(c, pa.float64(), nullable=False) for c in BAR_COLUMNS[1:]],
    ])


@dataclass(frozen=True, slots=True, order=True)
class PartitionKey:
    """Address of one bar partition: provider / interval / symbol (house form)."""

    provider: str
    interval: str
    symbol: str

    @property
    def relative(self) -> Path:
        return Path(f"bars/provider={self.provider}/interval={self.interval}"
                    f"/symbol={self.symbol}/data.parquet")

    def __str__(self) -> str:
        return f"{self.provider}/{self.interval}/{self.symbol}"


@dataclass(frozen=True, slots=True, order=True)
class TableKey:
    """Address of a non-bar table in the lake (funding rates, earnings calendars)."""

    table: str
    provider: str
    symbol: str | None = None

    @property
    def relative(self) -> Path:
        path = Path(self.table) / f"provider={self.provider}"
        if self.symbol is not None:
            path = path / f"symbol={self.symbol}"
        return path / "data.parquet"

    def __str__(self) -> str:
        return "/".join(p for p in (self.table, self.provider, self.symbol) if p)


Key = PartitionKey | TableKey


def staged_name(key: Key) -> str:
    """The file name a staged ``key`` waits under: its folders in the lake joined by ``~``
    (``bars~provider=synthetic~interval=15m~symbol=BTC.parquet``). Staged files lie flat in one
    folder per run and asset: a folder tree per key would cost a mkdir and an rmdir per level
    (the slowest calls of staging on this kind of disk)."""
    return "~".join(key.relative.parent.parts) + ".parquet"


def key_of_staged(name: str) -> Key:
    """The key a :func:`staged_name` names; ValueError for any other name."""
    top, *rest = name.removesuffix(".parquet").split("~")
    try:
        parts = dict(p.split("=", 1) for p in rest)
        if top == "bars":
            return PartitionKey(parts.pop("provider"), parts.pop("interval"),
                                parts.pop("symbol"))
        return TableKey(top, parts.pop("provider"), parts.pop("symbol", None))
    except (KeyError, ValueError):
        raise ValueError(f"not the name of a staged file: {name!r}") from None


# what a full, read-only or forbidden disk raises: the lake's environment, not its data
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM,
                         errno.EIO})


def is_disk_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an :class:`OSError` of a full, read-only or forbidden disk
    (:data:`DISK_ERRNOS`)."""
    return isinstance(exc, OSError) and exc.errno in DISK_ERRNOS


def os_error_text(exc: OSError) -> str:
    """One line for an I/O failure: the errno's meaning and name, and the path, e.g.
    ``No space left on device (ENOSPC): /lake/staging/x/data.parquet``."""
    meaning = os.strerror(exc.errno) if exc.errno else (exc.strerror or str(exc))
    name = errno.errorcode.get(exc.errno or 0)
    text = f"{meaning} ({name})" if name else meaning
    paths = [p for p in (exc.filename, exc.filename2) if p is not None]
    return f"{text}: {' -> '.join(os.fsdecode(p) for p in paths)}" if paths else text


def _first_line(exc: BaseException) -> str:
    """The first line of an exception's message (Arrow's carry a C++ trace after it)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def default_root() -> Path:
    return setting("lake")


def write_bars_file(frame: pd.DataFrame, path: Path) -> None:
    """Write a bar frame to ``path`` as Parquet with the lake's fixed schema (no index)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_bars(frame, path)


def _write_bars(frame: pd.DataFrame, path: Path) -> None:
    """Write a bar file into an existing folder.

    Prices and volumes rarely repeat and their low bits are noise: neither a dictionary nor a
    codec shrinks them (zstd saved a tenth), while bar times step evenly, so delta encoding
    keeps a few bits of each. A file written so is about the size of a zstd one, written twice
    as fast and read four times as fast (an hourly ingest rewrites 124 series; every cycle,
    monitor tick and publication reads hundreds). Every page carries its CRC, which every read
    verifies (:meth:`Lake.read_bar_table`)."""
    pq.write_table(bars_table(frame), path, compression="none", use_dictionary=False,
                   column_encoding={"timestamp": "DELTA_BINARY_PACKED"},
                   write_page_checksum=True)


def bars_table(frame: pd.DataFrame) -> pa.Table:
    """A bar frame as an Arrow table of the lake's schema, built column by column from NumPy
    (``Table.from_pandas`` costs more than the write itself for a day's bars). Every column of
    the schema is non-nullable: a missing time or value is refused, never written."""
    try:
        micros = utc_micros(frame["timestamp"])
        values = {c: _float_values(frame[c]) for c in BAR_COLUMNS[1:]}
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a bar frame of the lake's schema: {exc}") from exc
    missing = [c for c, v in (("timestamp", micros == NAT), *((c, np.isnan(v))
                                                              for c, v in values.items()))
               if v.any()]
    if missing:
        raise ValueError(f"not a bar frame of the lake's schema: null values in "
                         f"{', '.join(missing)} (the lake's columns are non-nullable)")
    columns = [pa.array(micros, type=_bar_schema().field("timestamp").type)]
    columns += [pa.array(v) for v in values.values()]
    return pa.Table.from_arrays(columns, schema=_bar_schema())


def _float_values(column: pd.Series) -> np.ndarray:
    """A price or volume column as float64 with NaN for missing values; a float64 column as
    it is (its missing values already are NaN: no copy, no scan for them)."""
    if column.dtype == np.float64:
        return column.to_numpy()
    return column.to_numpy(dtype="float64", na_value=np.nan)


_LOOK_UP = object()  # read_bar_table: take the file's signature now
MISSING_PROBLEM = "the file is missing, though its publication recorded it"


def _partition_of(relative: str) -> PartitionKey:
    """The key of a market key ``bars/provider=p/interval=i/symbol=s/data.parquet``."""
    parts = dict(p.split("=", 1) for p in relative.split("/")[1:-1])
    return PartitionKey(parts["provider"], parts["interval"], parts["symbol"])


class Lake:
    """Reads and atomically publishes partitions under one root directory.

    The bar partitions it reads are kept decoded in :attr:`bar_cache` (at most
    ``bar_cache_bytes``; 0 keeps nothing) under the identity of each file, so a partition is
    opened once per publication of it however often a run reads it (:mod:`arena.data.bar_cache`).
    """

    def __init__(self, root: str | Path | None = None, *,
                 bar_cache_bytes: int = BAR_CACHE_BYTES) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.bar_cache = BarCache(bar_cache_bytes)

    def __repr__(self) -> str:
        return f"Lake({str(self.root)!r})"

    @cached_property
    def market(self) -> Market:
        """Where the market data lives: the lake's own folders, or the location the lake
        records in ``ops/market.json`` (:mod:`arena.data.market_store`)."""
        return open_market(self.root)

    def set_market(self, location: str) -> Market:
        """Record where this lake's market data lives (:func:`arena.data.market_store.
        set_market`), under the writer lock so that no ingest publishes meanwhile."""
        with self.writer_lock():
            market = set_market(self.root, location)
        self.__dict__["market"] = market
        return market

    # ------------------------------------------------------------------ reading
    def path(self, key: Key) -> Path:
        """The file of ``key`` on this machine (a market on a URI has none: see :meth:`has`)."""
        if not isinstance(self.market, LocalMarket):
            raise MarketError(f"the market data of {self.root} lives at "
                              f"{self.market.describe()}: {key} has no local path")
        return self.market.path(key.relative.as_posix())

    def has(self, key: Key) -> bool:
        """Whether ``key`` is published."""
        return self.market.exists(key.relative.as_posix())

    def signature(self, key: Key) -> object | None:
        """Identity of the published file of ``key`` (None if absent): it changes with every
        publication of the key, so a reader can tell that another run overtook its read."""
        return self.market.signature(key.relative.as_posix())

    def signatures(self, keys: Sequence[Key]) -> dict[Key, object | None]:
        """:meth:`signature` of each key, in one look-up where the store allows (one read of
        an object store's pointer: one publication)."""
        found = self.market.signatures([k.relative.as_posix() for k in keys])
        return {k: found[k.relative.as_posix()] for k in keys}

    def recorded(self, key: PartitionKey) -> bool:
        """Whether a publication recorded the digest of ``key`` (its file is expected there)."""
        return self.market.recorded(key.relative.as_posix()) is not None

    def recorded_partitions(self, provider: str | None = None,
                            interval: str | None = None) -> list[PartitionKey]:
        """Every bar partition a publication recorded (whether or not its file is there),
        optionally of one provider and/or interval."""
        keys = [_partition_of(r) for r in self.market.recorded_keys("bars")]
        return [k for k in keys if (provider is None or k.provider == provider)
                and (interval is None or k.interval == interval)]

    def missing_problem(self, key: PartitionKey) -> str | None:
        """What is wrong with ``key`` having no file: :data:`MISSING_PROBLEM` when its
        publication recorded it (damage), None when the lake never held it."""
        return MISSING_PROBLEM if self.recorded(key) else None

    def read_bars(self, key: PartitionKey, start: object | None = None,
                  end: object | None = None) -> pd.DataFrame:
        """One partition as a bar frame (empty if it does not exist), clipped to ``[start, end)``;
        :class:`~arena.data.errors.DamagedFile` when the file cannot be read, is not the one its
        publication recorded (changed, or missing), or holds bars no validated series has
        (:func:`arena.data.sanity.bar_problem`)."""
        try:
            table, problem = self.checked_bar_table(key)
        except FileNotFoundError:
            if self.recorded(key):
                raise DamagedFile(self.root / key.relative, MISSING_PROBLEM) from None
            return empty_bars()
        if problem is not None:  # bytes that still decode are not bars for that
            raise DamagedFile(self.root / key.relative, problem)
        micros = table.column(0).to_numpy().view(np.int64)
        values = np.vstack([table.column(i).to_numpy() for i in range(1, len(BAR_COLUMNS))])
        if start is not None or end is not None:
            keep = np.ones(len(micros), dtype=bool)
            if start is not None:
                keep &= micros >= ceil_micros(utc(start))
            if end is not None:
                keep &= micros < ceil_micros(utc(end))
            micros, values = micros[keep], values[:, keep]
        return bar_frame_from_columns(micros, values)

    def last_bar_open(self, key: PartitionKey) -> pd.Timestamp | None:
        """The open time of the last bar of partition ``key`` (None when it is not published or
        holds no bars), read from the file's footer - its timestamp statistics - without
        decoding a bar (an ingest asks it of every interval, and derives again only those a
        new base bar completes a bar of); a file without those statistics (another writer's)
        is read whole. :class:`~arena.data.errors.DamagedFile` when the footer cannot be read."""
        relative = key.relative.as_posix()
        try:
            source = self.market.open(relative)
        except FileNotFoundError:
            return None
        try:
            with source:
                meta = pq.ParquetFile(source, pre_buffer=False).metadata
        except (pa.ArrowException, OSError) as exc:
            raise DamagedFile(f"{self.root / relative}", _first_line(exc)) from exc
        if meta.num_rows == 0:
            return None
        stats = [meta.row_group(i).column(0).statistics for i in range(meta.num_row_groups)]
        if (meta.schema.column(0).name != "timestamp"
                or meta.schema.to_arrow_schema().field(0).type != _bar_schema().field(0).type
                or any(s is None or not s.has_min_max for s in stats)):
            bars = self.read_bars(key)
            return None if bars.empty else bars["timestamp"].iloc[-1]
        return pd.Timestamp(max(s.max_raw for s in stats), unit=TS_UNIT, tz="UTC")

    def read_bar_table(self, key: PartitionKey, columns: Sequence[str] = BAR_COLUMNS, *,
                       signature: object = _LOOK_UP) -> pa.Table:
        """One stored partition as an Arrow table of the lake's schema, ``columns`` only (bar
        order), without schema metadata; a window is then clipped in NumPy by the caller.

        Served from :attr:`bar_cache` while the file's signature is the one its columns were
        read under (``signature``: one the caller looked up, e.g. with :meth:`signatures` for
        a whole scan; by default taken now). Otherwise the file is read whole in this thread,
        without pre-buffering or the dataset layer (a partition is one small file: the fast
        way), decoding only the columns not kept yet; its bytes are first compared with the
        digest its publication recorded (:meth:`digest_verdict`, once per version of the file)
        and its pages' checksums verified as it is decoded. FileNotFoundError when the
        partition has no file; :class:`~arena.data.errors.DamagedFile` when its file is not
        the one published or not a bar partition."""
        return self._bar_table(key, columns, signature)[0]

    def checked_bar_table(self, key: PartitionKey, columns: Sequence[str] = BAR_COLUMNS, *,
                          signature: object = _LOOK_UP) -> tuple[pa.Table, str | None]:
        """:meth:`read_bar_table` and the table's :func:`arena.data.sanity.bar_problem`
        (judged once per file and set of columns while the file is kept)."""
        table, read_as = self._bar_table(key, columns, signature)
        problem = self.bar_cache.problem(key.relative.as_posix(), read_as, columns,
                                         lambda: bar_problem(table))
        return table, problem

    def _bar_table(self, key: PartitionKey, columns: Sequence[str], signature: object
                   ) -> tuple[pa.Table, object]:
        """The table and the signature of the file it was read from."""
        relative = key.relative.as_posix()
        columns = list(columns)
        if signature is _LOOK_UP:
            signature = self.market.signature(relative)
        cached = self.bar_cache.table(relative, signature, columns)
        if cached is not None:
            return cached, signature
        known = self.bar_cache.known_verdict(relative, signature)
        if known is not None and known.state == CHANGED:  # judged already: not read again
            raise DamagedFile(self.root / relative, str(known.problem))
        for _ in range(2):  # a second time only when another thread dropped the file's entry
            body, read_as = self._read_proven(relative, signature)
            table = self._decode(body, relative,
                                 self.bar_cache.missing(relative, read_as, columns))
            got = self.bar_cache.add(relative, read_as, table, columns)
            if got is not None:
                return got, read_as
            signature = read_as
        body, read_as = self._read_proven(relative, signature)
        return self._decode(body, relative, columns), read_as

    def _read_proven(self, relative: str, signature: object) -> tuple[pa.Buffer, object]:
        """The bytes of one bar file and the signature of the very file read, judged against
        the digest its publication recorded (once per signature: :attr:`bar_cache`);
        :class:`~arena.data.errors.DamagedFile` when they are not the ones published."""
        source, read_as = self.market.open_signed(relative, signature)
        with source:
            body = source.read_buffer()
        verdict = self.bar_cache.verdict(relative, read_as,
                                         lambda: self._judge(relative, read_as, body))
        if verdict.state == CHANGED:
            raise DamagedFile(self.root / relative, str(verdict.problem))
        return body, read_as

    def _judge(self, relative: str, signature: object, body: pa.Buffer) -> tuple[Verdict, bool]:
        """``body`` (the file of ``relative`` read under ``signature``) against the digests its
        publication recorded, and whether it was hashed (a file no record names is not)."""
        accepted = self.market.recorded(relative, signature)
        if accepted is None:
            return Verdict(UNRECORDED), False
        return judge(sha256_hex(body), accepted), True

    def digest_verdict(self, key: PartitionKey) -> Verdict:
        """``key``'s file against the digest its publication recorded (:data:`~arena.data.
        digests.WHOLE`, :data:`~arena.data.digests.UNRECORDED` or :data:`~arena.data.digests.
        CHANGED`; :data:`~arena.data.digests.MISSING` for a recorded partition without a file),
        judged once per version of the file. FileNotFoundError for a partition the lake never
        held."""
        relative = key.relative.as_posix()
        signature = self.market.signature(relative)
        known = self.bar_cache.known_verdict(relative, signature)
        if known is not None:
            return known
        try:
            self._read_proven(relative, signature)
        except DamagedFile as exc:
            return Verdict(CHANGED, exc.problem)
        except FileNotFoundError:
            if self.recorded(key):
                return Verdict(MISSING, MISSING_PROBLEM)
            raise
        found = self.bar_cache.known_verdict(relative, signature)
        return found if found is not None else Verdict(WHOLE)

    def _decode(self, body: pa.Buffer, relative: str, columns: Sequence[str]) -> pa.Table:
        """``columns`` of one bar file, of the lake's schema (its pages' checksums verified)."""
        try:
            table = pq.ParquetFile(pa.BufferReader(body), pre_buffer=False,
                                   page_checksum_verification=True).read(
                columns=list(columns), use_threads=False).replace_schema_metadata(None)
            schema = pa.schema([_bar_schema().field(c) for c in columns])
            if not table.schema.equals(schema):  # a file of another writer: Arrow converts it
                table = table.select(list(columns)).cast(schema)
        except (pa.ArrowException, OSError, KeyError) as exc:
            # a file that is there but is not a bar partition (truncated, 0 bytes, bytes
            # that do not decompress, another schema): named, never read as no bars
            raise DamagedFile(f"{self.root / relative}", _first_line(exc)) from exc
        return table

    def partitions(self, provider: str | None = None, interval: str | None = None) -> list[PartitionKey]:
        """Every published bar partition, optionally of one provider and/or interval."""
        keys = []
        for relative in self.market.keys("bars"):  # bars/provider=p/interval=i/symbol=s/...
            key = _partition_of(relative)
            if (provider is None or key.provider == provider) and (interval is None or key.interval == interval):
                keys.append(key)
        return keys

    # ------------------------------------------------------------------ publishing
    def stage(self, run_id: str, frames: Mapping[Key, pd.DataFrame],
              group: str | None = None) -> dict[Key, Path]:
        """Write every frame under ``staging/<run_id>/[<group>/]`` (nothing published yet)."""
        staged: dict[Key, Path] = {}
        os.makedirs(self._staging(run_id, group), exist_ok=True)
        for key, frame in frames.items():
            path = self.staged_path(run_id, key, group)
            if isinstance(key, PartitionKey):
                _write_bars(frame, path)
            else:
                frame.to_parquet(path, index=False, compression="zstd")
            staged[key] = path
        return staged

    def staged_path(self, run_id: str, key: Key, group: str | None = None) -> Path:
        """Where :meth:`stage` writes ``key``: side by side in the run's (or asset's) one
        staging folder, under :func:`staged_name`."""
        return self._staging(run_id, group) / staged_name(key)

    def staged(self, run_id: str, group: str | None = None) -> dict[Key, Path]:
        """Every file staged for the run (or one asset of it), by key."""
        folder = self._staging(run_id, group)
        found = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
        return {key_of_staged(path.name): path for path in found}

    def read_table(self, key: TableKey) -> pd.DataFrame:
        """A funding/earnings table (empty frame if absent)."""
        try:
            source = self.market.open(key.relative.as_posix())
        except FileNotFoundError:
            return pd.DataFrame()
        with source:  # one small file: read whole, without the dataset layer (5x faster)
            return pq.ParquetFile(source, pre_buffer=False).read(use_threads=False).to_pandas()

    def publish(self, run_id: str, staged: Mapping[Key, Path], group: str | None = None) -> None:
        """Publish staged files: the lake shows either all of the set (one asset, or a whole
        run) or none of it, whichever store holds the market (:mod:`arena.data.market_store`).
        The caller holds :meth:`writer_lock`."""
        run_dir = self._staging(run_id, group)
        journal = self.journal_dir(run_id, group)
        try:
            digests = self.market.publish(
                {key.relative.as_posix(): src for key, src in staged.items()}, journal)
        finally:  # published or rolled back: the next read of these files opens them
            self.bar_cache.forget(key.relative.as_posix() for key in staged)
        # the files just put in place are the ones whose digests were recorded: proven
        for relative, signature in self.market.signatures(sorted(digests)).items():
            self.bar_cache.trust(relative, signature, Verdict(WHOLE))
        shutil.rmtree(journal, ignore_errors=True)
        with suppress(OSError):  # the run's journal folder, once its last publication is made
            journal.parent.rmdir()
        shutil.rmtree(run_dir, ignore_errors=True)

    def journal_dir(self, run_id: str, group: str | None = None) -> Path:
        """Where a publication of a local market keeps its intent journal and the previous files
        (``journal/<run id>/<group>/``) until the whole set is in place: outside ``staging/``,
        so neither the run's own clean-up nor :meth:`clean_stale_staging` removes what a torn
        publication is rolled back from (:mod:`arena.data.recovery`)."""
        return self.root / "journal" / run_id / (group or "_run")

    def journals(self) -> list[Path]:
        """Every publication journal folder left behind (each a publication a killed process
        left torn, or one being made now by the holder of the writer lock)."""
        top = self.root / "journal"
        return sorted(p for p in top.glob("*/*") if p.is_dir()) if top.is_dir() else []

    def quarantine(self, run_id: str, group: str | None = None,
                   reason: str | None = None) -> Path | None:
        """Move a failed run's (or one asset's) staged files aside, never read as data, with the
        reason in ``reason.txt``; returns where they went (None when nothing was staged)."""
        src = self._staging(run_id, group)
        if not src.exists():
            return None
        dst = self.root / "quarantine" / run_id
        if group is not None:
            dst = dst / group
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.exists():
            shutil.rmtree(dst)
        os.replace(src, dst)
        if reason:
            (dst / "reason.txt").write_text(reason + "\n", encoding="utf-8")
        return dst

    def discard(self, run_id: str, group: str | None = None) -> None:
        """Remove what is left of a run's (or one asset's) staging folder."""
        shutil.rmtree(self._staging(run_id, group), ignore_errors=True)

    def _staging(self, run_id: str, group: str | None) -> Path:
        run_dir = self.root / "staging" / run_id
        return run_dir if group is None else run_dir / group

    # ------------------------------------------------------------------ locks
    @contextmanager
    def writer_lock(self, timeout: float = WRITER_LOCK_TIMEOUT) -> Iterator[None]:
        """The lake's one writer lock (``_locks/writer.lock``): hold it to read what is stored,
        merge and swap, so no publication is made from a read another run has overtaken."""
        path = self.root / "_locks" / "writer.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with FileLock(path, timeout=timeout):
                yield
        except Timeout as exc:
            raise TimeoutError(f"another ingest held the lake's writer lock ({path}) for more "
                               f"than {timeout:.0f} s") from exc

    @contextmanager
    def run_lock(self, run_id: str) -> Iterator[None]:
        """Held by a live run while its ``staging/<run_id>`` exists (released when it ends, or
        by the system when its process dies); the folder's ``_owner.json`` names the process."""
        path = self._run_lock_path(run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:  # the folder and the lock file go whatever happens: an interrupt, a full disk
            with FileLock(path, timeout=-1):
                owner = self.root / "staging" / run_id / "_owner.json"
                try:
                    owner.parent.mkdir(parents=True, exist_ok=True)
                    owner.write_text(json.dumps({"pid": os.getpid(), "run_id": run_id}),
                                     encoding="utf-8")
                    yield
                finally:
                    self.discard(run_id)
        finally:
            with suppress(OSError):  # a read-only lake: the free lock file is harmless
                path.unlink(missing_ok=True)

    def _run_lock_path(self, run_id: str) -> Path:
        return self.root / "_locks" / "runs" / f"{run_id}.lock"

    def clean_stale_staging(self) -> list[str]:
        """Remove the staging folders of dead runs (their run lock is free); returns their ids.
        A live run's folder is left alone: its process holds the lock; so is a dead run's whose
        publication journal is left (:mod:`arena.data.recovery` rolls it forward from there)."""
        staging = self.root / "staging"
        removed = []
        for run_dir in sorted(staging.iterdir()) if staging.is_dir() else []:
            if (self.root / "journal" / run_dir.name).is_dir():
                continue  # a torn publication's staged files: kept to roll it forward
            lock_path = self._run_lock_path(run_dir.name)
            lock_path.parent.mkdir(parents=True, exist_ok=True)
            lock = FileLock(lock_path, timeout=0)
            try:
                lock.acquire()
            except Timeout:
                continue  # a live run
            try:
                shutil.rmtree(run_dir, ignore_errors=True)
                removed.append(run_dir.name)
            finally:
                lock.release()
                lock_path.unlink(missing_ok=True)
        return removed

    # ------------------------------------------------------------------ records
    def write_json(self, relative: str | Path, payload: Mapping[str, object]) -> Path:
        """Write a JSON record atomically (temp file + rename)."""
        return write_text(self.root / relative, json.dumps(payload, indent=2, default=str))

    def manifests(self) -> list[Path]:
        return sorted((self.root / "manifests" / "ingest").glob("*.json"))


def merge_bars(existing: pd.DataFrame, fetched: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Union of stored and fetched bars (fetched wins on the same timestamp; the last of fetched
    duplicates wins), sorted by time, as a frame of the bar columns.

    Returns the merged frame and how many stored bars the fetch revised (changed values). Only
    the stored bars from the fetch's first timestamp on are compared; the older ones are carried
    over as they are (a daily run touches the tail of a long series). NumPy throughout: an
    ingest merges a few hundred small series."""
    if fetched.empty:
        return existing[list(BAR_COLUMNS)].reset_index(drop=True), 0
    cols = list(BAR_COLUMNS[1:])
    if existing.empty:  # nothing stored: the fetched bars alone, sorted and deduplicated
        old_t, old_v = np.empty(0, dtype="int64"), np.empty((len(cols), 0))
    else:
        old_t, old_v = utc_micros(existing["timestamp"]), _columns(existing, cols)
    if (np.diff(old_t) < 0).any():
        order = np.argsort(old_t, kind="stable")
        old_t, old_v = old_t[order], old_v[:, order]
    new_t, new_v = utc_micros(fetched["timestamp"]), _columns(fetched, cols)
    order = np.argsort(new_t, kind="stable")
    new_t, new_v = new_t[order], new_v[:, order]
    last = np.r_[new_t[1:] != new_t[:-1], True]  # the last of each run of equal times
    new_t, new_v = new_t[last], new_v[:, last]
    cut = int(np.searchsorted(old_t, new_t[0]))
    pos = np.clip(np.searchsorted(new_t, old_t[cut:]), 0, len(new_t) - 1)
    replaced = new_t[pos] == old_t[cut:]
    changed = int((old_v[:, cut:][:, replaced] != new_v[:, pos[replaced]]).any(axis=0).sum())
    keep = np.r_[np.ones(cut, dtype=bool), ~replaced]
    times = np.concatenate([old_t[keep], new_t])
    values = np.concatenate([old_v[:, keep], new_v], axis=1)
    if (np.diff(times) < 0).any():
        order = np.argsort(times, kind="stable")
        times, values = times[order], values[:, order]
    return bar_frame_from_columns(times, np.ascontiguousarray(values)), changed


def _columns(frame: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """The (len(cols), n) float64 values of ``cols``, one row per column (the layout of a bar
    frame's value block; selecting a sub-frame first costs more than the copy)."""
    return np.vstack([frame[c].to_numpy(dtype="float64") for c in cols])


def concat_partitions(frames: Iterable[tuple[PartitionKey, pd.DataFrame]]) -> pd.DataFrame:
    """One long frame with ``symbol`` and ``interval`` columns (the validation batch)."""
    parts = [f.assign(symbol=k.symbol, interval=k.interval) for k, f in frames if not f.empty]
    if not parts:
        return empty_bars().assign(symbol=pd.Series([], dtype=str), interval=pd.Series([], dtype=str))
    return pd.concat(parts, ignore_index=True)


def swap_dir(staging: Path, final: Path) -> None:
    """Publish directory ``staging`` as ``final`` in one atomic step.

    ``final`` is a symbolic link to a versioned sibling (``.<name>.v-<ns>``) and is replaced by
    one ``os.replace`` of a new link: a reader opening ``final/<file>`` gets the old set or the
    new one, never a mix and never nothing. The previous version stays (a reader that listed it
    can finish); older ones are removed. A real directory at ``final`` (a lake copied without its
    links) is moved aside first. On failure ``final`` is left as it was."""
    version = final.with_name(f".{final.name}.v-{time.time_ns():020d}")
    os.rename(staging, version)
    link = final.with_name(f".{final.name}.link-{uuid.uuid4().hex[:8]}")
    legacy = None
    try:
        os.symlink(version.name, link)
        if final.is_dir() and not final.is_symlink():
            legacy = final.with_name(f".{final.name}.legacy-{uuid.uuid4().hex[:8]}")
            os.rename(final, legacy)
        os.replace(link, final)
    except BaseException:
        link.unlink(missing_ok=True)
        if legacy is not None and not final.exists():
            os.rename(legacy, final)
        shutil.rmtree(version, ignore_errors=True)
        raise
    if legacy is not None:
        shutil.rmtree(legacy, ignore_errors=True)
    for old in sorted(final.parent.glob(f".{final.name}.v-*"))[:-2]:  # keep current + previous
        shutil.rmtree(old, ignore_errors=True)
