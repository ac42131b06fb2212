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

import json
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from contextlib import suppress
from pathlib import Path, PurePosixPath
from typing import Protocol
from urllib.parse import parse_qsl, urlsplit

import pyarrow as pa
import pyarrow.fs as pafs

from arena.data.errors import MarketError

MARKET_FILE = "ops/market.json"
POINTER = "_current.json"
# the market's folders and the layout of their files (what the lake's keys address)
_LAYOUT = {"bars": "provider=*/interval=*/symbol=*/data.parquet",
           "funding": "provider=*/symbol=*/data.parquet", "events": "provider=*/symbol=*/data.parquet",
           "earnings": "provider=*/data.parquet"}
MARKET_DIRS = tuple(_LAYOUT)
# query options of a URI that would put a secret into the lake's record
_SECRET_OPTIONS = frozenset({"access_key", "secret_key", "session_token", "password", "token"})


class Market(Protocol):
    """What the lake asks of the store of its market data; keys are relative POSIX paths such
    as ``bars/provider=x/interval=1h/symbol=ETH/data.parquet``."""

    def describe(self) -> str: ...
    def exists(self, key: str) -> bool: ...
    def signature(self, key: str) -> object | None: ...
    def open(self, key: str) -> pa.NativeFile: ...
    def keys(self, top: str) -> list[str]: ...
    def publish(self, staged: Mapping[str, Path], scratch: Path) -> None: ...
    def local_dir(self) -> Path | None: ...


class LocalMarket:
    """The market as files under ``root``, each key one file replaced atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def describe(self) -> str:
        return str(self.root)

    def path(self, key: str) -> Path:
        return self.root / key

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def signature(self, key: str) -> tuple[int, int, int] | None:
        """Identity of a stored file (inode, size, mtime): ``os.replace`` of a new file
        changes it."""
        try:
            st = self.path(key).stat()
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def open(self, key: str) -> pa.NativeFile:
        return pa.OSFile(os.fspath(self.path(key)))

    def keys(self, top: str) -> list[str]:
        return sorted(p.relative_to(self.root).as_posix()
                      for p in (self.root / top).glob(_LAYOUT[top]))

    def local_dir(self) -> Path | None:
        return self.root

    def publish(self, staged: Mapping[str, Path], scratch: Path) -> None:
        """Move staged files into place, each with one atomic ``os.replace``.

        The previous file of every key is kept reachable (hard link, or a copy) in ``scratch``
        until the whole set is in place; if any move fails, the ones already made are rolled
        back, so the lake shows either all of the set or none of it."""
        # the previous files wait side by side in one flat folder: a folder tree per backup
        # would cost a mkdir and an rmdir per level of every key (the slowest calls of a publish)
        previous = scratch / "_previous"
        done: list[tuple[Path, Path | None]] = []
        try:
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
                # noted before the move: an interrupt right after it must still roll it back
                # (rolling back a move that did not happen restores the same file)
                done.append((dst, backup))
                os.replace(src, dst)
        except BaseException:  # an interrupt too: the lake shows none of the set
            for dst, backup in reversed(done):
                if backup is not None:
                    os.replace(backup, dst)
                else:
                    dst.unlink(missing_ok=True)
            raise


class ObjectMarket:
    """The market on a filesystem without atomic renames (object storage), published through
    versioned objects and one pointer object (see the module's docstring)."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._fs: pafs.FileSystem | None = None
        self._base = ""

    def __getstate__(self) -> dict[str, object]:  # a worker opens its own connection
        return {"uri": self.uri}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(str(state["uri"]))

    def describe(self) -> str:
        return self.uri

    @property
    def fs(self) -> pafs.FileSystem:
        if self._fs is None:
            fs, base = pafs.FileSystem.from_uri(self.uri)
            self._fs, self._base = fs, base.rstrip("/")
        return self._fs

    def _at(self, relative: str) -> str:
        """The filesystem path of ``relative``."""
        if self._fs is None:
            self.fs  # noqa: B018 - opening the filesystem sets the base
        return f"{self._base}/{relative}"

    # ------------------------------------------------------------------ reading
    def current(self) -> dict[str, str]:
        """The pointer: every key's current version (empty for a market never published)."""
        try:
            with self.fs.open_input_stream(self._at(POINTER)) as source:
                raw = source.readall()
        except FileNotFoundError:  # a market never published
            return {}
        try:
            files = json.loads(raw)["files"]
        except (ValueError, KeyError, TypeError) as exc:
            raise MarketError(f"the market's pointer {self.uri}/{POINTER} is not a pointer "
                              f"file ({type(exc).__name__}: {exc})") from exc
        return dict(files)

    def exists(self, key: str) -> bool:
        return key in self.current()

    def signature(self, key: str) -> str | None:
        return self.current().get(key)

    def open(self, key: str) -> pa.NativeFile:
        version = self.current().get(key)
        if version is None:
            raise FileNotFoundError(f"{self.uri}: no {key}")
        # a partition is one small object: one GET of the whole, then read from memory
        with self.fs.open_input_stream(self._at(version)) as source:
            return pa.BufferReader(source.readall())

    def keys(self, top: str) -> list[str]:
        return sorted(k for k in self.current() if k.startswith(f"{top}/"))

    def local_dir(self) -> Path | None:
        return None

    # ------------------------------------------------------------------ publishing
    def publish(self, staged: Mapping[str, Path], scratch: Path) -> None:
        """Upload every staged file as a new version, then replace the pointer (the one step
        that publishes the set). If anything fails before the pointer is replaced, the new
        versions are deleted and readers never saw them. The caller holds the lake's writer
        lock, so no other publication replaces the pointer between its read and its write."""
        del scratch  # nothing to keep aside: the old versions stay where they are
        pointer = self.current()
        stamp = f"v-{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        uploaded: list[str] = []
        try:
            for key, src in sorted(staged.items()):
                version = f"{PurePosixPath(key).parent}/{stamp}.parquet"
                uploaded.append(version)
                _upload(self.fs, src, self._at(version))
            previous = {key: pointer.get(key) for key in staged}
            new = {**pointer, **{key: uploaded[n] for n, key in enumerate(sorted(staged))}}
            self._write_pointer(new)
        except BaseException:
            for version in uploaded:
                _delete(self.fs, self._at(version))
            raise
        for key in staged:  # keep the current and the previous version of each key
            self._prune(key, {new[key], previous[key]})

    def _write_pointer(self, files: Mapping[str, str]) -> None:
        body = json.dumps({"format": 1, "files": dict(sorted(files.items()))}, indent=1)
        with self.fs.open_output_stream(self._at(POINTER)) as out:
            out.write(body.encode("utf-8"))

    def _prune(self, key: str, keep: set[str | None]) -> None:
        folder = str(PurePosixPath(key).parent)
        selector = pafs.FileSelector(self._at(folder), allow_not_found=True)
        for info in self.fs.get_file_info(selector):
            relative = f"{folder}/{info.base_name}"
            if info.type == pafs.FileType.File and info.base_name.startswith("v-") \
                    and relative not in keep:
                _delete(self.fs, info.path)


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
    parts = urlsplit(location)
    if parts.username or parts.password:
        raise MarketError(f"{parts.scheme}:// market URI with credentials in it: credentials "
                          "come from the environment (e.g. AWS_ACCESS_KEY_ID and "
                          "AWS_SECRET_ACCESS_KEY), never from a URI the lake stores")
    secret = sorted(k for k, _ in parse_qsl(parts.query) if k.lower() in _SECRET_OPTIONS)
    if secret:
        raise MarketError(f"market URI with {', '.join(secret)} in it: credentials come from "
                          "the environment, never from a URI the lake stores")
    if not parts.netloc and not parts.path.strip("/"):
        raise MarketError(f"market URI {location!r} names no bucket or path")
    try:
        pafs.FileSystem.from_uri(location)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError, OSError) as exc:
        raise MarketError(f"cannot open market URI {location!r}: {exc}") from exc
    return location


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
    return LocalMarket(Path(location)) if is_local(location) else ObjectMarket(location)


def market_has_data(market: Market) -> bool:
    return any(market.keys(top) for top in MARKET_DIRS)



def set_market(lake_root: Path, location: str) -> Market:
    """Record ``location`` as where the market data of the lake at ``lake_root`` lives; returns
    the new store. Refused (:class:`MarketError`) while the current store holds market data (a
    lake's bars never silently change location: start a new lake, or copy the files first) or
    when an object store's bucket cannot be found. The lake's own folders are the default:
    setting them removes the record."""
    location = check_uri(location)
    current = open_market(lake_root)
    new: Market = LocalMarket(Path(location)) if is_local(location) else ObjectMarket(location)
    if new.describe() == current.describe():
        return current
    if market_has_data(current):
        raise MarketError(f"the lake {lake_root} already holds market data at "
                          f"{current.describe()}: its market cannot move under it; start a new "
                          "lake for the new location, or copy the files there first")
    if isinstance(new, ObjectMarket):
        _check_reachable(new)
    record = lake_root / MARKET_FILE
    if isinstance(new, LocalMarket) and new.root == lake_root.resolve():
        record.unlink(missing_ok=True)
        return new
    record.parent.mkdir(parents=True, exist_ok=True)
    tmp = record.with_name(f".{record.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text(json.dumps({"location": location}, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, record)
    return new


def _check_reachable(market: ObjectMarket) -> None:
    """The bucket (the URI's first path component) exists and can be listed."""
    try:
        bucket = market._at("").strip("/").split("/")[0]
        info = market.fs.get_file_info(bucket)
        if info.type == pafs.FileType.NotFound:
            raise MarketError(f"no bucket {bucket!r} at {market.uri}: create it first")
        market.fs.get_file_info(pafs.FileSelector(market._at("").rstrip("/"),
                                                  allow_not_found=True))
    except MarketError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise MarketError(f"cannot reach the market at {market.uri}: {exc} (credentials and "
                          "endpoint come from the environment, e.g. AWS_ACCESS_KEY_ID, "
                          "AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL)") from exc


def copy_market(market: Market, top: str, dest: Path) -> int:
    """Write the current file of every key under ``top`` into ``dest`` (same relative paths);
    returns how many."""
    keys = market.keys(top)
    for key in keys:
        target = dest / key
        target.parent.mkdir(parents=True, exist_ok=True)
        with market.open(key) as source, open(target, "wb") as out:
            out.write(source.read())
    return len(keys)
