"""A contestant's history is checked before its next record, back to its first one
(:mod:`arena.ledger.verified`): a record deleted, or a file of an older record deleted, added or
replaced, refuses that contestant at its next commit, and a file of an older record changed in
place (which the fold no longer reads) at the next sweep, by file name before anything is built,
while the others record; the records proven before cost a ``stat``, not a hash."""

from __future__ import annotations

import json
import os
import shutil

import pandas as pd
import pytest

from arena.engine.portfolio import Portfolio
from arena.ledger import verified
from arena.ledger.chain import CHAIN_FILE, BrokenChain, make_link, read_head, read_link
from arena.ledger.records import SCHEMAS, MonitorRecord, RecordStatus
from arena.ledger.store import Ledger
from arena.ledger.verified import SWEEP_EVERY, check_chain, journal_path
from tests.ledger.test_chain import C4, _three
from tests.ledger.test_ledger import C1, C2, C3, OPEN_ETH, simple_record

MONITOR = "monitor"
CYCLE_FILES = (*(f"{name}.parquet" for name in SCHEMAS), CHAIN_FILE)
MONITOR_FILES = ("outcome.parquet", "fills.parquet", CHAIN_FILE)


def _season(tmp_path) -> Ledger:
    """momentum (:func:`_three`: cycles C1, C2, a window (C2, C3], C3) and equal-weight (cycles
    C1-C3), each with its book kept after its last record."""
    ledger = _three(tmp_path)
    for at in (C1, C2, C3):
        ledger.record_cycle(at, "equal-weight", lambda at=at: simple_record("equal-weight", at))
    for name in ("momentum", "equal-weight"):  # as a cycle's build reads it
        Ledger(tmp_path).portfolio(name)
    return ledger


def _next_cycle(tmp_path) -> tuple[list[str], dict[str, object]]:
    """C4 for both contestants in a new process's ledger: who was built, and each outcome
    (its status, or the refusal)."""
    ledger, built, out = Ledger(tmp_path), [], {}
    for name in ("momentum", "equal-weight"):
        def build(name=name):
            built.append(name)
            return simple_record(name, C4)
        try:
            out[name] = ledger.record_cycle(C4, name, build)
        except BrokenChain as exc:
            out[name] = exc
    return built, out


def _damage(path, how: str, monkeypatch=None) -> None:
    """``how``: deleted, or emptied or changed in place (one byte, the size kept). A file
    changed in place waits for the sweep (the record's folder does not move): with
    ``monkeypatch``, the next commit is one."""
    if how == "deleted":
        path.unlink()
        return
    if how == "emptied":
        path.write_bytes(b"")
    else:
        body = bytearray(path.read_bytes())
        body[len(body) // 2] ^= 0xFF
        path.write_bytes(bytes(body))
    if monkeypatch is not None:
        monkeypatch.setattr(verified, "SWEEP_EVERY", 1)


def _refused_alone(tmp_path, path) -> BrokenChain:
    """momentum is refused naming ``path`` and the repair, nothing is built or recorded for
    it; equal-weight records."""
    built, out = _next_cycle(tmp_path)
    refusal = out["momentum"]
    assert isinstance(refusal, BrokenChain), refusal
    assert str(path) in str(refusal) and "arena season verify --restore-from" in str(refusal)
    assert built == ["equal-weight"] and out["equal-weight"] == RecordStatus.RECORDED
    fresh = Ledger(tmp_path)
    assert not fresh.has(C4, "momentum") and fresh.has(C4, "equal-weight")
    return refusal


def test_a_deleted_older_record_refuses_its_contestant_not_a_fold_around_it(tmp_path):
    """The break found on the landed product: the first record (it opened ETH) deleted under a
    book that holds it; a reader folds what is left (no ETH, $10,000), but keeps that to itself,
    and the next cycle records nothing from it."""
    ledger = Ledger(tmp_path)
    for at, fills in ((C1, [OPEN_ETH]), (C2, []), (C3, [])):
        for name in ("momentum", "equal-weight"):
            ledger.record_cycle(at, name, lambda at=at, name=name, fills=fills:
                                simple_record(name, at, fills))
    book_path = ledger.dir / "_books/contestant=momentum.json"
    book, kept = Ledger(tmp_path).portfolio("momentum"), book_path.read_text()
    assert "ETH" in book.positions
    first = ledger.record_dir(C1, "momentum")
    shutil.rmtree(first)
    assert "ETH" not in Ledger(tmp_path).portfolio("momentum", start=Portfolio()).positions
    Ledger(tmp_path).portfolio("momentum")  # a reader: the book is not written from its fold
    assert book_path.read_text() == kept
    refusal = _refused_alone(tmp_path, first)
    assert f"{first} is missing: " in str(refusal)


@pytest.mark.parametrize("name", CYCLE_FILES)
@pytest.mark.parametrize("how", ["changed", "emptied", "deleted"])
def test_each_file_of_an_older_cycle_record_damaged_refuses_its_contestant(tmp_path, name, how,
                                                                            monkeypatch):
    ledger = _season(tmp_path)
    path = ledger.record_dir(C1, "momentum") / name
    _damage(path, how, monkeypatch)
    _refused_alone(tmp_path, path)


@pytest.mark.parametrize("name", MONITOR_FILES)
@pytest.mark.parametrize("how", ["changed", "emptied", "deleted"])
def test_each_file_of_an_older_monitor_record_damaged_refuses_its_contestant(tmp_path, name,
                                                                               how, monkeypatch):
    ledger = _season(tmp_path)
    path = ledger.monitor_dir(C2, C3, "momentum") / name
    _damage(path, how, monkeypatch)
    _refused_alone(tmp_path, path)


def test_a_file_changed_in_place_is_refused_by_the_sweep_and_from_then_on(tmp_path):
    """What a commit looks at of an older record is its folder (a file deleted, added or
    replaced moves it); a file written over in place, which the fold no longer reads (the book
    holds it), is found by the sweep every SWEEP_EVERY records. The commits before it keep the
    book's state, which the damage cannot reach; the sweep refuses the contestant by file name,
    and so does every commit after it until the file is restored."""
    ledger = Ledger(tmp_path)
    at = [C1 + pd.Timedelta(days=d) for d in range(3 * SWEEP_EVERY)]
    ledger.record_cycle(at[0], "momentum", lambda: simple_record("momentum", at[0], [OPEN_ETH]))
    for t in at[1:3]:
        ledger.record_cycle(t, "momentum", lambda t=t: simple_record("momentum", t))
    swept = [check_chain(ledger.dir, "momentum", ledger.chain_keys("momentum"),
                         reads_from=3).swept]  # the sweep came at the second record
    path = ledger.record_dir(at[0], "momentum") / "fills.parquet"
    _damage(path, "changed")
    book = Ledger(tmp_path).portfolio("momentum")
    assert "ETH" in book.positions
    recorded = 0
    for t in at[3:]:
        try:
            Ledger(tmp_path).record_cycle(t, "momentum", lambda t=t: simple_record("momentum", t))
        except BrokenChain as exc:
            assert f"{path} has changed since it was recorded" in str(exc)
            break
        recorded += 1
        assert Ledger(tmp_path).portfolio("momentum") == book  # the fold never read the file
    # the sweep came at the second commit, so the 4th to the 8th record and the 9th sweeps
    assert swept == [False] and recorded == SWEEP_EVERY - 2
    with pytest.raises(BrokenChain, match=f"{path} has changed"):  # the sweep point moved back
        check_chain(ledger.dir, "momentum", ledger.chain_keys("momentum"), reads_from=10**6)


def test_a_deleted_monitor_record_refuses_its_contestant(tmp_path):
    ledger = _season(tmp_path)
    window = ledger.monitor_dir(C2, C3, "momentum")
    shutil.rmtree(window)
    _refused_alone(tmp_path, window)


def test_an_older_link_made_again_over_a_changed_file_is_refused(tmp_path, monkeypatch):
    """A record's ``chain.json`` written anew over a changed file holds together on its own,
    but is not the link the chain proved (the next record names the old digest)."""
    ledger = _season(tmp_path)
    folder = ledger.record_dir(C1, "momentum")
    _damage(folder / "equity.parquet", "changed", monkeypatch)
    link = read_link(folder)
    make_link(folder, link.key, link.previous)
    _refused_alone(tmp_path, folder / CHAIN_FILE)


def test_an_older_link_edited_is_refused(tmp_path):
    ledger = _season(tmp_path)
    path = ledger.record_dir(C2, "momentum") / CHAIN_FILE
    raw = json.loads(path.read_text())
    raw["files"]["fills.parquet"] = "0" * 64
    path.write_text(json.dumps(raw))
    _refused_alone(tmp_path, path)


def test_the_monitor_of_a_damaged_history_is_refused_too(tmp_path, monkeypatch):
    ledger = _season(tmp_path)
    path = ledger.record_dir(C1, "momentum") / "levels.parquet"
    _damage(path, "emptied", monkeypatch)
    end = C4 - pd.Timedelta(hours=1)
    with pytest.raises(BrokenChain, match=str(path)):
        Ledger(tmp_path).record_monitor(C3, end, "momentum",
                                        lambda: MonitorRecord("momentum", C3, end))


# ------------------------------------------------------------------------ the verified point
def test_unchanged_files_are_not_hashed_again_and_a_moved_signature_is(tmp_path):
    """A counter: the records proven before cost no hash; a file whose signature moved (its
    time touched, its content the same) is hashed once, then proven again; a file added to a
    record's folder has the record proven anew; without the journal every file is hashed and
    the journal written anew."""
    ledger = _three(tmp_path)
    keys = ledger.chain_keys("momentum")
    checked = check_chain(ledger.dir, "momentum", keys)
    assert (checked.records, checked.hashed) == (4, 0)
    assert checked.files == 3 * len(CYCLE_FILES) + len(MONITOR_FILES) + len(keys)  # + folders
    touched = ledger.record_dir(C1, "momentum") / "fills.parquet"
    os.utime(touched, ns=(1, 1))
    assert check_chain(ledger.dir, "momentum", keys).hashed == 1
    assert check_chain(ledger.dir, "momentum", keys).hashed == 0
    stray = ledger.record_dir(C2, "momentum") / "extra.parquet"
    stray.write_bytes(b"PAR1")
    with pytest.raises(BrokenChain, match=rf"{stray} was not part of the record"):
        check_chain(ledger.dir, "momentum", keys)
    stray.unlink()
    assert check_chain(ledger.dir, "momentum", keys).hashed == len(CYCLE_FILES) - 1
    journal_path(ledger.dir, "momentum").unlink()
    assert check_chain(ledger.dir, "momentum", keys).hashed == checked.files - 2 * len(keys)
    assert check_chain(ledger.dir, "momentum", keys).hashed == 0


def test_a_damaged_journal_line_is_ignored_not_believed(tmp_path):
    """A journal line that does not match its checksum is no proof: its record is checked again
    from its link (and found whole), never taken for damage."""
    ledger = _three(tmp_path)
    path = journal_path(ledger.dir, "momentum")
    lines = path.read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"cycles/', '"cycles/x', 1)
    path.write_text("".join(lines) + '{"torn')
    keys = ledger.chain_keys("momentum")
    checked = check_chain(ledger.dir, "momentum", keys)
    assert checked.hashed == len(CYCLE_FILES) - 1  # the first record's files, its link aside
    assert _builds_c4(tmp_path) == RecordStatus.RECORDED


def _builds_c4(tmp_path) -> RecordStatus:
    return Ledger(tmp_path).record_cycle(C4, "momentum", lambda: simple_record("momentum", C4))


def test_without_the_journal_a_deleted_record_is_still_named_by_the_link_after_it(tmp_path):
    ledger = _three(tmp_path)
    shutil.rmtree(ledger.dir / "_verified")
    first = ledger.record_dir(C1, "momentum")
    shutil.rmtree(first)
    with pytest.raises(BrokenChain, match=rf"{first} is missing: .* follows it"):
        _builds_c4(tmp_path)


def test_a_head_and_its_record_deleted_together_are_found_by_the_journal(tmp_path):
    """Without the verified point, deleting the last record and the head would leave a chain
    one record shorter that holds together."""
    ledger = _three(tmp_path)
    last = ledger.record_dir(C3, "momentum")
    shutil.rmtree(last)
    (ledger.dir / "_heads/contestant=momentum.json").unlink()
    with pytest.raises(BrokenChain, match=rf"{last} is missing: it was proven part of "):
        _builds_c4(tmp_path)


def test_a_lost_head_is_written_again_when_nothing_is_lost(tmp_path):
    """A head missing while the newest record is the one proven last (or the first record's,
    lost to a crash right after its rename) is written again, not refused."""
    ledger = _three(tmp_path)
    head = ledger.dir / "_heads/contestant=momentum.json"
    before = json.loads(head.read_text())
    head.unlink()
    assert _builds_c4(tmp_path) == RecordStatus.RECORDED
    link = read_link(Ledger(tmp_path).record_dir(C4, "momentum"))
    assert (link.previous.key, link.previous.digest) == (before["key"], before["digest"])
    assert read_head(ledger.dir, "momentum").key == link.key
    lone = Ledger(tmp_path)
    lone.record_cycle(C1, "solo", lambda: simple_record("solo", C1))
    (ledger.dir / "_heads/contestant=solo.json").unlink()
    shutil.rmtree(ledger.dir / "_verified")
    assert lone.record_cycle(C2, "solo", lambda: simple_record("solo", C2)) == \
        RecordStatus.RECORDED


# -------------------------------------------------------------- a kill between record and head
def _killed_before_its_head(root: str, at: str) -> None:
    """Record momentum's cycle at ``at``, the process killed right after the record's rename,
    before its head is written."""
    import arena.ledger.store as store

    def killed(*_args) -> None:
        os._exit(9)

    store.write_head = killed
    when = pd.Timestamp(at)
    Ledger(root).record_cycle(when, "momentum", lambda: simple_record("momentum", when))


@pytest.mark.parametrize("first", [True, False], ids=["first record", "later record"])
def test_a_kill_between_a_record_and_its_head_is_healed_not_damage(tmp_path, first):
    """Nothing was lost: ``arena season verify`` heals the head (exit 0) and the next record
    follows the killed one."""
    from arena.app.verify import verify
    from arena.data.lake import Lake
    from tests.ledger.test_ledger import SPAWN

    if not first:
        Ledger(tmp_path).record_cycle(C1, "momentum", lambda: simple_record("momentum", C1))
    killed = C1 if first else C2
    process = SPAWN.Process(target=_killed_before_its_head, args=(str(tmp_path),
                                                                  killed.isoformat()))
    process.start()
    process.join(60)
    assert process.exitcode == 9
    ledger = Ledger(tmp_path)
    assert ledger.has(killed, "momentum")
    found = verify(Lake(tmp_path))
    assert found.damaged == [] and [f.fixed.split(":")[0] for f in found.findings] == ["healed"]
    assert read_head(ledger.dir, "momentum").key == ledger.chain_keys("momentum")[-1]
    assert verify(Lake(tmp_path)).findings == []
    assert _builds_c4(tmp_path) == RecordStatus.RECORDED
    link = read_link(Ledger(tmp_path).record_dir(C4, "momentum"))
    assert link.previous.key == ledger.record_dir(killed, "momentum").relative_to(
        ledger.dir).as_posix()
