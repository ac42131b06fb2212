"""The verified point: each contestant's chain as it was last proven whole, so that every commit
checks its history back to the first record for the price of a ``stat`` per record, and every
file it reads for the price of a ``stat`` per file.

The fold of a contestant's book reads every record it has, so a record deleted, a file changed
or emptied anywhere in its history changes every later book. Hashing the whole history at every
commit would cost a year's files per contestant per cycle; hashing only the records after the
book (as the fold reads them) misses the older ones. The verified point keeps what was proven:

* ``_verified/contestant=<name>.jsonl``, a journal of the records proven part of the chain, one
  line each (appended as they are proven, a line later for the same key replacing the earlier):
  its key, its digest, the key of the record it follows, and the signature of each of its files
  (``chain.json`` included) and of its folder when they were hashed - size and modification time
  (ns). A file written over in place moves its own time; a file deleted, added or replaced (an
  editor's save, a copy) moves its folder's. Each line starts with a checksum of its own: a
  damaged line is ignored, never believed.
* :func:`check_chain`, under the contestant's lock before a record is built, lists the
  contestant's records (:meth:`arena.ledger.store.Ledger.chain_keys`) and compares them with the
  journal: a record the journal names that the listing lacks is a deleted record; a record whose
  predecessor is not the one it was proven with, or whose folder moved, is checked again whole
  from its link; a file whose signature moved is hashed again against the link (``chain.json``
  against the digest proven), and only those; records not yet proven (the newest, or all of them
  the first time) are checked whole (:func:`arena.ledger.chain.check_link`) and linked to the
  one before. Any damage is a :class:`~arena.ledger.chain.BrokenChain` naming the file and the
  repair, and nothing is recorded for that contestant.
* **How far back each file is looked at.** Every record's folder is looked at on every commit
  (a file deleted, added or replaced anywhere in the history moves it), and every file of the
  records the commit reads (those after the contestant's book; all of them without one) and of
  the records since the last **sweep**. A sweep looks at every file of every record, and comes
  every :data:`SWEEP_EVERY` records (and whenever the book is missing, or the journal lost): a
  file of an older record written over in place - which no fold reads any more, since the book
  holds its effect - is found by the next sweep, or at once by ``arena season verify``. Damage
  found moves the sweep back before the damaged record, so every later commit looks at its files
  until it is restored. A commit thus pays a ``stat`` per record of its history and a ``stat``
  per file of its last few records, not one per file of a year; the journal's ``{"swept": key}``
  line names the newest record the last sweep looked at whole.
* :func:`remember` adds a record just committed, with the signatures of the files just hashed.

The signatures of a whole history are read in one call (:func:`signatures`: Arrow's file system,
which holds the interpreter's lock once for all of them): the turns of a cycle check their
histories at once, beside threads busy in Python, and a ``stat`` per file from Python would wait
for the lock after every file.

The journal is a cache, not the chain: lost or unreadable, the history is checked again from the
links and the journal written anew (without it a record deleted together with its successor's
link is not told apart from a shorter history; the links still name every other deletion).
Within a process the journal is read once and then only the lines appended since.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyarrow.fs import LocalFileSystem

from arena.core.files import write_bytes
from arena.ledger import chain
from arena.ledger.chain import (
    CHAIN_FILE,
    BrokenChain,
    Previous,
    check_link,
    head_path,
    read_head,
    read_link,
    restore_hint,
    write_head,
)

VERIFIED_DIR = "_verified"
SWEEP_EVERY = 7  # records after the last sweep that make the next commit's check a sweep
FOLDER = "."  # a record's own folder, among its signatures
Signature = tuple[int, int]  # size (-1 for a folder), modification time in ns
_FS = LocalFileSystem()
log = logging.getLogger(__name__)


def signatures(paths: list[str]) -> list[Signature | None]:
    """The signature of each of ``paths`` (``None``: not there), read in one call that holds
    the interpreter's lock once (see the module docstring)."""
    out: list[Signature | None] = []
    for info in _FS.get_file_info(paths):
        mtime = info.mtime_ns  # None: not there; a folder has no size
        out.append(None if mtime is None else (-1 if info.size is None else info.size, mtime))
    return out


def record_signatures(folder: Path) -> dict[str, Signature]:
    """The signatures of a record's folder (:data:`FOLDER`) and of its files (its Parquet
    files and ``chain.json``)."""
    names = [FOLDER] + [e.name for e in os.scandir(folder)
                        if e.name == CHAIN_FILE or e.name.endswith(".parquet")]
    found = signatures([str(folder / name) for name in names])
    return {name: sig for name, sig in zip(names, found, strict=True) if sig is not None}


@dataclass(frozen=True)
class Proven:
    """One record as the journal holds it: its key, digest (``None``: written before the
    chain), the key of the record before it, and the signatures of its folder and files when
    they were hashed."""

    key: str
    digest: str | None
    previous: str | None
    files: dict[str, Signature]

    def line(self) -> bytes:
        """Its journal line: the checksum of the JSON that follows it, a space, the JSON."""
        body = json.dumps([self.key, self.digest, self.previous,
                           {name: list(sig) for name, sig in sorted(self.files.items())}],
                          separators=(",", ":")).encode()
        return _line_sum(body) + b" " + body + b"\n"


def _line_sum(body: bytes) -> bytes:
    return hashlib.sha256(body).hexdigest()[:16].encode()


@dataclass(frozen=True)
class Swept:
    """The journal's sweep point: the newest record whose every file the last sweep looked at
    (``None``: none, so the next commit sweeps)."""

    key: str | None

    def line(self) -> bytes:
        body = json.dumps({"swept": self.key}, separators=(",", ":")).encode()
        return _line_sum(body) + b" " + body + b"\n"


@dataclass(frozen=True)
class _Held:
    """What a commit looks at of one proven record: the names (:data:`FOLDER` first), paths and
    proven signatures of its folder and files."""

    names: tuple[str, ...]
    paths: tuple[str, ...]
    sigs: tuple[Signature, ...]

    def folder(self) -> _Held:
        """Its folder alone (a record written before the chain has none: nothing)."""
        at = self.names.index(FOLDER) if FOLDER in self.names else None
        if at is None:
            return _Held((), (), ())
        return _Held((FOLDER,), (self.paths[at],), (self.sigs[at],))


def _parse(line: bytes) -> Proven | Swept | None:
    """A journal line's record (or sweep point), or ``None`` for a line that is damaged (or torn
    by a crash)."""
    recorded, _, body = line.partition(b" ")
    if recorded != _line_sum(body):
        return None
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict):
            key = parsed["swept"]
            return Swept(None if key is None else str(key))
        key, digest, previous, files = parsed
        return Proven(str(key), None if digest is None else str(digest),
                      None if previous is None else str(previous),
                      {str(n): (int(s[0]), int(s[1])) for n, s in files.items()})
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None


@dataclass
class _Journal:
    """One contestant's journal as this process read it: the records by key (in the order first
    proven), and where the read stopped (``offset``, after the last whole line, and that line,
    to tell an appended journal from one replaced meanwhile)."""

    path: Path
    proven: dict[str, Proven] = field(default_factory=dict)
    swept: str | None = None
    offset: int = 0
    inode: int | None = None
    tail: bytes = b""
    lines: int = 0
    # key -> the paths of its folder and files and their signatures, made once per proof
    _signed: dict[str, _Held] = field(default_factory=dict)

    def signed(self, ledger_dir: Path, proven: Proven, *, folder_only: bool = False) -> _Held:
        """What is looked at of a proven record: its folder and files (or its folder alone),
        their paths and signatures as proven."""
        held = self._signed.get(proven.key)
        if held is None:
            base = str(ledger_dir)
            held = self._signed[proven.key] = _Held(
                tuple(proven.files), tuple(_path(base, proven.key, n) for n in proven.files),
                tuple(proven.files.values()))
        if folder_only:
            return held.folder()
        return held

    def _prove(self, proven: Proven) -> None:
        """Hold ``proven`` as its key's proof (re-proven: its place is the newest)."""
        self.proven.pop(proven.key, None)
        self._signed.pop(proven.key, None)
        self.proven[proven.key] = proven

    def refresh(self) -> None:
        """Read what was appended since (another process's commits), or the whole journal
        when it was replaced, truncated or removed."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._reset(None)
            return
        if st.st_ino != self.inode or st.st_size < self.offset:
            self._reset(st.st_ino)
        elif st.st_size == self.offset:
            return
        start = self.offset - len(self.tail)
        try:
            with open(self.path, "rb") as f:
                f.seek(start)
                data = f.read()
        except OSError as exc:
            log.warning("the verified point %s cannot be read (%s): the history is checked from "
                        "its links", self.path, exc)
            self._reset(None)
            return
        if not data.startswith(self.tail):  # replaced by a journal of the same inode and length
            self._reset(st.st_ino)
            return self.refresh()
        self._take(data[len(self.tail):])

    def _reset(self, inode: int | None) -> None:
        self.proven, self.offset, self.inode, self.tail, self.lines = {}, 0, inode, b"", 0
        self._signed, self.swept = {}, None

    def _take(self, data: bytes) -> None:
        whole = data.rfind(b"\n") + 1  # a torn last line (a crash while appending) is left
        for line in data[:whole].splitlines():
            self.lines += 1
            parsed = _parse(line)
            if isinstance(parsed, Swept):
                self.swept = parsed.key
            elif parsed is not None:
                self._prove(parsed)
        if whole:
            self.offset += whole
            self.tail = data[:whole].splitlines(keepends=True)[-1]

    def append(self, records: Sequence[Proven], swept: Swept | None = None) -> None:
        """Add ``records`` and the sweep point ``swept`` (a process holding the contestant's
        lock); the journal is written anew when most of its lines are replaced ones. A failure
        is logged: it is a cache."""
        if swept is not None and swept.key == self.swept:
            swept = None
        if not records and swept is None:
            return
        for r in records:
            self._prove(r)
        lines: list[Proven | Swept] = [*records]
        if swept is not None:
            self.swept = swept.key
            lines.append(swept)
        try:
            if self.lines + len(lines) > 2 * len(self.proven) + 64:
                self._rewrite()
                return
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "ab") as f:
                torn = f.tell() != self.offset  # a torn line at the end: start on a line of its own
                data = (b"\n" if torn else b"") + b"".join(r.line() for r in lines)
                f.write(data)
                end = f.tell()
            self.inode = os.stat(self.path).st_ino
            self.lines += len(lines) + torn
            self.offset, self.tail = end, data.splitlines(keepends=True)[-1]
        except OSError as exc:
            log.warning("the verified point %s is not written (%s): the next commit checks the "
                        "new records again", self.path, exc)

    def _rewrite(self) -> None:
        data = b"".join(r.line() for r in self.proven.values()) + Swept(self.swept).line()
        write_bytes(self.path, data)
        self.inode, self.offset = os.stat(self.path).st_ino, len(data)
        self.lines = len(self.proven) + 1
        self.tail = data.splitlines(keepends=True)[-1] if data else b""


_JOURNALS: dict[str, _Journal] = {}  # journal path -> what this process read of it
_JOURNALS_LOCK = threading.Lock()


def journal_path(ledger_dir: Path, contestant: str) -> Path:
    return ledger_dir / VERIFIED_DIR / f"contestant={contestant}.jsonl"


def _journal(ledger_dir: Path, contestant: str) -> _Journal:
    """The contestant's journal, brought up to date (its commits hold the contestant's lock,
    so one thread at a time works on it)."""
    path = journal_path(ledger_dir, contestant)
    with _JOURNALS_LOCK:
        journal = _JOURNALS.setdefault(os.fspath(path), _Journal(path))
    journal.refresh()
    return journal


def proven_records(ledger_dir: Path, contestant: str) -> dict[str, Proven]:
    """The records the contestant's journal holds (read afresh, for ``arena season verify``)."""
    journal = _Journal(journal_path(ledger_dir, contestant))
    journal.refresh()
    return journal.proven


# --------------------------------------------------------------------------------- the check
@dataclass
class Checked:
    """What :func:`check_chain` found: the record the next one follows, how many records and
    files it looked at, and how many files it hashed (the rest matched their signatures)."""

    last: Previous | None = None
    records: int = 0
    files: int = 0
    hashed: int = 0
    swept: bool = False
    digests: dict[str, str | None] = field(default_factory=dict)


def check_chain(ledger_dir: Path, contestant: str, records: list[str], *,
                reads_from: int = 0) -> Checked:
    """Check the contestant's history (see the module docstring) and its head, and return what
    its next record follows (``last``). ``records``: its record keys in fold order, newest last;
    ``reads_from``: the first of them the commit's fold reads (its book holds the ones before;
    0, the default, sweeps). A head left one record behind by a crash is rolled forward, and a
    head missing while nothing is lost (the first record's, or the newest record proven before)
    is written again. :class:`BrokenChain` naming the file and the repair for any damage."""
    hint = restore_hint(contestant)
    head = read_head(ledger_dir, contestant)
    if head is not None and not (ledger_dir / head.key).is_dir():
        folder = ledger_dir / head.key
        raise BrokenChain(f"{folder} is missing: it is {contestant}'s last record (the ledger's "
                          f"head names it); {hint}", path=folder)
    journal = _journal(ledger_dir, contestant)
    newest_known = bool(records) and records[-1] in journal.proven
    checked = _walk(ledger_dir, contestant, records, journal, hint, reads_from)
    checked.last = _follow_head(ledger_dir, contestant, records, head, checked, newest_known,
                                hint)
    return checked


def _walk(ledger_dir: Path, contestant: str, records: list[str], journal: _Journal,
          hint: str, reads_from: int) -> Checked:
    """Every record of ``records`` against the journal, in order (the records the last sweep
    looked at and the fold does not read, by their folders alone, unless this is a sweep); the
    records proven anew, and the sweep point, are appended to it."""
    listed = set(records)
    gone = [key for key in journal.proven if key not in listed]
    if gone:
        followers = {p.previous: p.key for p in journal.proven.values()}
        path = ledger_dir / gone[0]
        after = followers.get(gone[0])
        why = (f"{after} follows it in {contestant}'s chain" if after
               else f"it was proven part of {contestant}'s chain")
        raise BrokenChain(f"{path} is missing: {why}; {hint}", path=path)
    out = Checked()
    plan = _proven_in_place(records, journal)
    # records[:light] are looked at by their folders alone: swept before, and not read now
    swept_at = records.index(journal.swept) if journal.swept in listed else -1
    light = min(reads_from, swept_at + 1)
    out.swept = light == 0 or len(records) - light >= SWEEP_EVERY
    if out.swept:
        light = 0
    held = [None if p is None else journal.signed(ledger_dir, p, folder_only=i < light)
            for i, p in enumerate(plan)]
    expected = [sig for h in held if h is not None for sig in h.sigs]
    found = signatures([path for h in held if h is not None for path in h.paths])
    still = found == expected  # the usual answer, for one comparison of what is looked at
    now = iter(found)
    before: Previous | None = None
    new: list[Proven] = []
    swept: Swept | None = None
    try:
        for at, (key, proven, looked) in enumerate(zip(records, plan, held, strict=True)):
            try:
                if looked is None:
                    again = _prove(ledger_dir, contestant, key, before, out, hint)
                elif still:
                    again, out.files = None, out.files + len(looked.names)
                else:
                    current = [next(now) for _ in looked.names]
                    again = _recheck(ledger_dir, contestant, proven, looked.names, current,
                                     before, out, hint)
            except BrokenChain:
                if out.swept or at <= swept_at:  # every later commit looks at it whole
                    swept = Swept(None if before is None else before.key)
                raise
            proven = again or proven
            if again is not None:
                new.append(again)
            out.records += 1
            out.digests[key] = proven.digest
            before = Previous(key, proven.digest)
        if out.swept and records:
            swept = Swept(records[-1])
    finally:  # the records proven before any damage stay proven
        journal.append(new, swept)
    out.last = before
    return out


def _proven_in_place(records: list[str], journal: _Journal) -> list[Proven | None]:
    """Each record's proof in the journal, where it was proven after the record it follows
    now (else None: it is proven anew)."""
    plan: list[Proven | None] = []
    previous = None
    for key in records:
        proven = journal.proven.get(key)
        plan.append(proven if proven is not None and proven.previous == previous else None)
        previous = key
    return plan


def _path(ledger_dir: Path | str, key: str, name: str) -> str:
    return f"{ledger_dir}/{key}" if name == FOLDER else f"{ledger_dir}/{key}/{name}"


def _recheck(ledger_dir: Path, contestant: str, proven: Proven, names: Sequence[str],
             now: list[Signature | None], before: Previous | None, out: Checked,
             hint: str) -> Proven | None:
    """A proven record against the signatures ``now`` of its folder and files ``names`` (all
    of them, or its folder alone): the files whose signature moved hashed again
    (``chain.json``: its digest must be the one proven), the whole record when its folder
    moved. The record with its new signatures, or ``None`` when none moved."""
    out.files += len(names)
    moved: dict[str, Signature] = {}
    for name, current in zip(names, now, strict=True):
        sig = proven.files[name]
        if current == sig:
            continue
        if current is None:
            path = _path(ledger_dir, proven.key, name)
            raise BrokenChain(f"{path} is missing (the record was written with it); {hint}",
                              path=path)
        moved[name] = current
    if not moved:
        return None
    folder = ledger_dir / proven.key
    link = _link_of(folder, proven, hint)  # the link it was proven with, or damage
    if FOLDER in moved:  # a file deleted, added or replaced: the record proven anew
        return _prove(ledger_dir, contestant, proven.key, before, out, hint)
    for name in moved:
        if name != CHAIN_FILE:
            out.hashed += 1
            chain.check_file(folder / name, link.files.get(name, ""), hint)
    return Proven(proven.key, proven.digest, proven.previous, {**proven.files, **moved})


def _link_of(folder: Path, proven: Proven, hint: str) -> chain.Link:
    """The record's link, checked against the digest it was proven with."""
    path = folder / CHAIN_FILE
    try:
        link = read_link(folder)
    except BrokenChain as exc:
        raise BrokenChain(f"{exc}; {hint}", path=exc.path) from exc
    if link is None:
        raise BrokenChain(f"{path} is missing (the record was written with it); {hint}",
                          path=path)
    if not chain.holds(link) or link.digest != proven.digest or link.key != proven.key:
        raise BrokenChain(f"{path} has changed since it was recorded (it is not the link "
                          f"{proven.key} was proven with); {hint}", path=path)
    return link


def _prove(ledger_dir: Path, contestant: str, key: str, before: Previous | None, out: Checked,
           hint: str) -> Proven:
    """A record not proven yet (or whose predecessor moved): its link checked whole, every
    file hashed, and its place after ``before``."""
    folder = ledger_dir / key
    try:
        files = record_signatures(folder)
        link = check_link(folder)
    except FileNotFoundError:
        raise BrokenChain(f"{folder} is missing: it went while the ledger was listed; {hint}",
                          path=folder) from None
    except BrokenChain as exc:
        raise BrokenChain(f"{exc}; {hint}", path=exc.path) from exc
    out.files += len(files)
    previous_key = None if before is None else before.key
    if link is None:  # written before the chain: only ever before its first link
        if before is not None and before.digest is not None:
            raise BrokenChain(f"{folder / CHAIN_FILE} is missing (every record after the chain "
                              f"began carries one); {hint}", path=folder / CHAIN_FILE)
        return Proven(key, None, previous_key, {})
    out.hashed += len(link.files)
    _check_place(ledger_dir, contestant, key, link, before, hint)
    return Proven(key, link.digest, previous_key, files)


def _check_place(ledger_dir: Path, contestant: str, key: str, link: chain.Link,
                 before: Previous | None, hint: str) -> None:
    """:class:`BrokenChain` unless ``link`` (the record ``key``'s) follows ``before``."""
    path = ledger_dir / key / CHAIN_FILE
    if link.key != key:
        raise BrokenChain(f"{path} belongs to the record {link.key}; {hint}", path=path)
    if link.previous is not None and (before is None or link.previous.key != before.key):
        gone = ledger_dir / link.previous.key
        raise BrokenChain(f"{gone} is missing: {key} follows it in {contestant}'s chain; {hint}",
                          path=gone)
    if link.previous is None and before is not None and before.digest is not None:
        raise BrokenChain(f"{path} starts a new chain after {before.key}; {hint}", path=path)
    if (link.previous is not None and before is not None and before.digest is not None
            and link.previous.digest != before.digest):
        raise BrokenChain(f"{ledger_dir / before.key} is not the record {key} follows (its "
                          f"digest differs); {hint}", path=ledger_dir / before.key)


def _follow_head(ledger_dir: Path, contestant: str, records: list[str], head: Previous | None,
                 checked: Checked, newest_known: bool, hint: str) -> Previous | None:
    """What the next record follows, from the head and the checked history: the head when it
    names the last record; the last record when the head is one behind (a crash between a
    record's rename and its head's write: rolled forward) or missing while nothing is lost
    (written again)."""
    last = checked.last
    if last is None or last.digest is None:
        return last  # no record, or a history written before the chain: linked to by key
    if head is None:
        if not (newest_known or _starts_chain(ledger_dir, last.key)):
            path = head_path(ledger_dir, contestant)
            raise BrokenChain(f"{path} is missing, but {contestant}'s records are chained and its "
                              f"newest was never proven; nothing is recorded for {contestant} "
                              "until arena season verify finds the chain whole (--repair writes "
                              "the head again, --restore-from <mirror> restores what is gone)",
                              path=path)
        write_head(ledger_dir, contestant, last)  # its write was cut short, nothing is lost
        return last
    if head == last:
        return head
    if checked.digests.get(head.key, head.digest) != head.digest:
        path = ledger_dir / head.key / CHAIN_FILE
        raise BrokenChain(f"{path} is not the record {contestant}'s head names; {hint}", path=path)
    if len(records) >= 2 and head == Previous(records[-2], checked.digests[records[-2]]):
        write_head(ledger_dir, contestant, last)  # a crash after its rename: roll forward
        return last
    newer = ledger_dir / last.key
    raise BrokenChain(f"{newer} is newer than {contestant}'s last chained record {head.key}, "
                      f"and the chain does not know it; {hint}", path=newer)


def _starts_chain(ledger_dir: Path, key: str) -> bool:
    """Whether the record ``key`` is its chain's first link (its head can only have been lost
    to a crash right after its rename)."""
    link = read_link(ledger_dir / key)
    return link is not None and (link.previous is None or link.previous.digest is None)


def remember(ledger_dir: Path, contestant: str, link: chain.Link,
             files: dict[str, Signature]) -> None:
    """Add a record just committed (``files``: the signatures of the files its link hashed)
    to the contestant's journal."""
    journal = _journal(ledger_dir, contestant)
    previous = None if link.previous is None else link.previous.key
    journal.append([Proven(link.key, link.digest, previous, files)])
