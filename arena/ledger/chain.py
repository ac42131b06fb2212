"""The ledger's continuity: every record is a link of its contestant's hash chain.

A contestant's portfolio is the fold over its records, so a record that goes missing, or a file
of one that changes, silently changes every later book: a deleted record would restart the
contestant from $10,000 and a damaged fill would move its cash. The chain makes both loud.

* Each record folder holds ``chain.json``, written in the staging folder before the record's one
  rename, so it appears with the record: the SHA-256 of each of the record's Parquet files, the
  key and digest of the contestant's previous record (``null`` for the first), and the record's
  own digest (the SHA-256 of those three, canonical JSON).
* ``_heads/contestant=<name>.json`` names the contestant's last record and its digest; it is
  replaced (atomically) right after each commit. A crash between the record's rename and the
  head's replace leaves a head one record behind, which the next write recognises (the newest
  record's ``previous`` is the head) and rolls forward; or, after a contestant's first record,
  no head at all, which the next write (or ``arena season verify``) writes again: nothing was
  lost in either case.

Before a contestant's next record is built (under its lock, before any model is called), its
history is checked back to its first record (:func:`arena.ledger.verified.check_chain`): every
record the chain names is there, each link follows the record before it, every file hashes as
recorded - the files whose signature has not moved since they were last proven are not hashed
again, and the files of older records written over in place are looked at by the contestant's
periodic sweep - and the head names the last record. Otherwise
:class:`BrokenChain`, naming the file and the repair, and nothing is recorded for that
contestant. :func:`verify_contestant` walks the whole chain and hashes every file (``arena
season verify``), and the rows dbt reads are checked once, before they are copied
(:mod:`arena.pipeline.ledger_tables`).

Records written before the chain existed carry no ``chain.json``: they are reported as
unchained, never as damage, and the first chained record links to the newest of them by key.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from arena.data.digests import file_sha256 as file_sha256  # re-exported
from arena.ledger.errors import LedgerError

CHAIN_FILE = "chain.json"
HEADS_DIR = "_heads"


class BrokenChain(LedgerError):
    """A contestant's ledger history is not what its chain recorded (a record or file missing,
    unreadable or changed): nothing is recorded for that contestant until it is restored."""

    def __init__(self, message: str, *, path: Path | str) -> None:
        super().__init__(message)
        self.path = str(path)


@dataclass(frozen=True)
class Previous:
    """The record a link follows: its key (the folder relative to the ledger) and its digest
    (``None`` for a record written before the chain)."""

    key: str
    digest: str | None


@dataclass(frozen=True)
class Link:
    """One record's ``chain.json``."""

    key: str
    files: dict[str, str]
    previous: Previous | None
    digest: str

    def as_json(self) -> dict[str, object]:
        previous = None if self.previous is None else {"key": self.previous.key,
                                                        "digest": self.previous.digest}
        return {"key": self.key, "files": self.files, "previous": previous,
                "digest": self.digest}


@dataclass(frozen=True)
class Damage:
    """One thing :func:`verify_contestant` found wrong, naming the path to restore."""

    contestant: str
    path: str
    problem: str

    def describe(self) -> str:
        return self.problem



def _digest(key: str, files: dict[str, str], previous: Previous | None) -> str:
    body = {"key": key, "files": dict(sorted(files.items())),
            "previous": None if previous is None else [previous.key, previous.digest]}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
                          ).hexdigest()


def _record_files(folder: Path) -> dict[str, str]:
    return {p.name: file_sha256(p) for p in sorted(folder.glob("*.parquet"))}


def make_link(folder: Path, key: str, previous: Previous | None) -> Link:
    """The link of the record whose files are in ``folder`` (its staging folder) under ``key``;
    written into the folder as ``chain.json`` (and fsynced) before the record is renamed."""
    files = _record_files(folder)
    link = Link(key, files, previous, _digest(key, files, previous))
    path = folder / CHAIN_FILE
    with open(path, "w", encoding="utf-8") as f:
        json.dump(link.as_json(), f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    return link


def read_link(folder: Path) -> Link | None:
    """The link stored in a record folder; ``None`` for a record written before the chain.
    :class:`BrokenChain` when the file is there but unreadable."""
    path = folder / CHAIN_FILE
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise BrokenChain(f"{path} cannot be read ({type(exc).__name__}: {exc})", path=path) from exc
    try:
        prev = raw["previous"]
        return Link(str(raw["key"]), {str(k): str(v) for k, v in raw["files"].items()},
                    None if prev is None else Previous(str(prev["key"]), prev["digest"]),
                    str(raw["digest"]))
    except (KeyError, TypeError, AttributeError) as exc:
        raise BrokenChain(f"{path} is not a chain link (missing {exc})", path=path) from exc


def holds(link: Link) -> bool:
    """Whether a link's digest is the digest of its contents (a link edited by hand is not)."""
    return _digest(link.key, link.files, link.previous) == link.digest


def check_link(folder: Path) -> Link | None:
    """:func:`read_link`, then every file of the record hashed against it and the digest
    recomputed; :class:`BrokenChain` naming the first file that is missing, extra or changed."""
    link = read_link(folder)
    if link is None:
        return None
    found = {p.name for p in folder.glob("*.parquet")}
    for name in sorted(set(link.files) | found):
        path = folder / name
        if name not in found:
            raise BrokenChain(f"{path} is missing (the record was written with it)", path=path)
        if name not in link.files:
            raise BrokenChain(f"{path} was not part of the record when it was written", path=path)
        check_file(path, link.files[name])
    if not holds(link):
        raise BrokenChain(f"{folder / CHAIN_FILE} does not hold together (its digest does not "
                          "match its contents)", path=folder / CHAIN_FILE)
    return link


def check_file(path: Path, recorded: str, hint: str = "") -> None:
    """:class:`BrokenChain` unless ``path`` is there, readable, and hashes to ``recorded``;
    ``hint``: what to do, appended to the message."""
    tail = f"; {hint}" if hint else ""
    try:
        actual = file_sha256(path)
    except FileNotFoundError:
        raise BrokenChain(f"{path} is missing (the record was written with it){tail}",
                          path=path) from None
    except OSError as exc:
        raise BrokenChain(f"{path} cannot be read: {exc.strerror or exc}{tail}",
                          path=path) from exc
    if actual != recorded:
        raise BrokenChain(f"{path} has changed since it was recorded (its SHA-256 is "
                          f"{actual[:12]}..., the chain says {recorded[:12]}...){tail}", path=path)


# ------------------------------------------------------------------------------------- heads
def head_path(ledger_dir: Path, contestant: str) -> Path:
    return ledger_dir / HEADS_DIR / f"contestant={contestant}.json"


def read_head(ledger_dir: Path, contestant: str) -> Previous | None:
    path = head_path(ledger_dir, contestant)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return Previous(str(raw["key"]), str(raw["digest"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BrokenChain(f"{path} cannot be read ({type(exc).__name__}: {exc})", path=path) from exc


def write_head(ledger_dir: Path, contestant: str, link: Link | Previous) -> None:
    """Point the contestant's head at ``link`` (atomic replace, fsynced)."""
    path = head_path(ledger_dir, contestant)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump({"key": link.key, "digest": link.digest}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# ------------------------------------------------------------------------------------- checks
def restore_hint(contestant: str) -> str:
    """What to do about a contestant's damaged history (the end of every refusal's line)."""
    return (f"nothing is recorded for {contestant} until it is restored (arena season verify "
            "--restore-from <mirror>)")


def verify_contestant(ledger_dir: Path, contestant: str, records: Iterable[str]
                      ) -> tuple[list[Damage], int]:
    """Walk the contestant's whole chain: every record there, every file as recorded, each link
    following the one before, the head naming the last. ``records``: the record keys found, in
    fold order. Returns the damage found and how many records predate the chain (unchained,
    not damage)."""
    keys = list(records)
    damage: list[Damage] = []

    def damaged(path: Path | str, text: str) -> None:
        damage.append(Damage(contestant, str(path), text))

    unchained = 0
    previous: Previous | None = None  # the link before this record, as found on disk
    for key in keys:
        folder = ledger_dir / key
        try:
            link = check_link(folder)
        except BrokenChain as exc:
            damaged(exc.path, str(exc))
            previous = Previous(key, "?")  # judged: the next link is checked on its own
            continue
        if link is None:
            if previous is not None and previous.digest is not None:
                damaged(folder / CHAIN_FILE, f"{folder / CHAIN_FILE} is missing (every record "
                        "after the chain began carries one)")
            else:
                unchained += 1
            previous = Previous(key, None)
            continue
        if link.key != key:
            damaged(folder / CHAIN_FILE, f"{folder / CHAIN_FILE} belongs to the record {link.key}")
        elif link.previous is not None and (previous is None or previous.key != link.previous.key):
            damaged(ledger_dir / link.previous.key, f"{ledger_dir / link.previous.key} is missing: "
                    f"{key} follows it in the chain")
        elif (link.previous is not None and previous is not None and previous.digest != "?"
              and link.previous.digest != previous.digest):
            damaged(ledger_dir / previous.key, f"{ledger_dir / previous.key} is not the record "
                    f"{key} follows (its digest differs)")
        elif link.previous is None and previous is not None:
            damaged(folder / CHAIN_FILE, f"{folder / CHAIN_FILE} starts a new chain after "
                    f"{previous.key}")
        previous = Previous(link.key, link.digest)
    try:
        head = read_head(ledger_dir, contestant)
    except BrokenChain as exc:
        damaged(exc.path, str(exc))
        return damage, unchained
    if head is not None:
        folder = ledger_dir / head.key
        if not folder.is_dir():
            damaged(folder, f"{folder} is missing: it is {contestant}'s last record (the "
                    "ledger's head names it)")
        elif keys and head.key != keys[-1]:
            last = ledger_dir / keys[-1]
            link = read_link(last)
            if link is None or link.previous != head:  # else: a head one behind, rolled forward
                damaged(last, f"{last} is newer than {contestant}'s last chained record "
                        f"{head.key}, and the chain does not know it")
    elif previous is not None and previous.digest not in (None, "?"):
        path = head_path(ledger_dir, contestant)
        damaged(path, f"{path} is missing")
    return damage, unchained
