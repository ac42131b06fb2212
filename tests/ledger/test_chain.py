"""The ledger's continuity (:mod:`arena.ledger.chain`): a record missing, unreadable or changed
refuses its contestant's next record, by file name and before anything is built; a whole chain
is verified; a crash between a record's rename and its head's replace is rolled forward."""

from __future__ import annotations

import json
import shutil
from itertools import pairwise

import pandas as pd
import pyarrow.parquet as pq
import pytest

from arena.data.errors import DamagedFile
from arena.engine.portfolio import Portfolio
from arena.ledger import verified
from arena.ledger.chain import CHAIN_FILE, BrokenChain, read_head, read_link, verify_contestant
from arena.ledger.records import MonitorRecord, RecordStatus
from arena.ledger.store import Ledger
from tests.ledger.test_ledger import C1, C2, C3, CLOSE_ETH, OPEN_ETH, STOP_BTC, simple_record

C4 = pd.Timestamp("2025-11-29 16:00", tz="UTC")


def _three(tmp_path) -> Ledger:
    """momentum: cycles C1 (opens ETH), C2 (closes half), a monitor window (C2, C3], C3."""
    ledger = Ledger(tmp_path)
    ledger.record_cycle(C1, "momentum", lambda: simple_record("momentum", C1, [OPEN_ETH]))
    ledger.record_cycle(C2, "momentum", lambda: simple_record("momentum", C2, [CLOSE_ETH]))
    ledger.record_monitor(C2, C3, "momentum", lambda: MonitorRecord("momentum", C2, C3))
    ledger.record_cycle(C3, "momentum", lambda: simple_record("momentum", C3))
    return ledger


def _builds(ledger: Ledger, at: pd.Timestamp = C4):
    """Try to record momentum at ``at``; the list says whether ``build`` ran."""
    built: list[bool] = []

    def build():
        built.append(True)
        return simple_record("momentum", at)

    return built, lambda: ledger.record_cycle(at, "momentum", build)


def test_each_record_links_to_the_one_before_and_the_head_names_the_last(tmp_path):
    ledger = _three(tmp_path)
    keys = ledger.chain_keys("momentum")
    assert keys == ["cycles/cycle=2025-11-26T16-00-00/contestant=momentum",
                    "cycles/cycle=2025-11-27T16-00-00/contestant=momentum",
                    "monitor/window=2025-11-27T16-00-00_2025-11-28T16-00-00/contestant=momentum",
                    "cycles/cycle=2025-11-28T16-00-00/contestant=momentum"]
    links = [read_link(ledger.dir / k) for k in keys]
    assert links[0].previous is None
    for before, after in pairwise(links):
        assert (after.previous.key, after.previous.digest) == (before.key, before.digest)
    assert set(links[0].files) == {p.name for p in (ledger.dir / keys[0]).glob("*.parquet")}
    assert read_head(ledger.dir, "momentum").key == keys[-1]
    assert verify_contestant(ledger.dir, "momentum", keys) == ([], 0)
    other = Ledger(tmp_path)  # another contestant's chain is its own
    other.record_cycle(C1, "equal-weight", lambda: simple_record("equal-weight", C1))
    assert read_link(other.record_dir(C1, "equal-weight")).previous is None


def test_a_deleted_last_record_refuses_the_next_cycle_instead_of_a_fresh_book(tmp_path):
    """Without the chain the fold would start again from the remaining records."""
    ledger = _three(tmp_path)
    last = ledger.record_dir(C3, "momentum")
    shutil.rmtree(last)
    built, record = _builds(Ledger(tmp_path))
    with pytest.raises(BrokenChain, match=rf"{last} is missing: it is momentum's last record"):
        record()
    assert built == [] and not Ledger(tmp_path).has(C4, "momentum")
    damage, _ = verify_contestant(ledger.dir, "momentum", Ledger(tmp_path).chain_keys("momentum"))
    assert [d.path for d in damage] == [str(last)]


def test_a_zero_byte_or_changed_file_of_the_last_record_is_named(tmp_path):
    ledger = _three(tmp_path)
    fills = ledger.record_dir(C3, "momentum") / "fills.parquet"
    fills.write_bytes(b"")
    built, record = _builds(Ledger(tmp_path))
    with pytest.raises(BrokenChain, match=rf"{fills} has changed since it was recorded"):
        record()
    assert built == []
    fills.unlink()
    with pytest.raises(BrokenChain, match=rf"{fills} is missing \(the record was written with it\)"):
        record()
    assert built == []


def test_a_changed_older_file_is_found_by_the_whole_chain_and_named(tmp_path, monkeypatch):
    """A readable file of an older record rewritten (a fill's quantity doubled): the whole
    chain names the file, and the next sweep refuses the contestant rather than fold it."""
    monkeypatch.setattr(verified, "SWEEP_EVERY", 1)
    ledger = _three(tmp_path)
    fills = ledger.record_dir(C1, "momentum") / "fills.parquet"
    table = pq.ParquetFile(fills).read()
    pq.write_table(table.set_column(table.schema.get_field_index("quantity"), "quantity",
                                    [[4.0]]), fills)
    damage, unchained = verify_contestant(ledger.dir, "momentum", ledger.chain_keys("momentum"))
    assert unchained == 0
    assert [d.path for d in damage] == [str(fills)]
    assert "has changed since it was recorded" in damage[0].describe()
    built, record = _builds(Ledger(tmp_path))
    with pytest.raises(BrokenChain, match=rf"{fills} has changed since it was recorded"):
        record()
    assert built == []


def test_a_deleted_middle_record_is_named_by_the_record_after_it(tmp_path):
    ledger = _three(tmp_path)
    middle = ledger.record_dir(C2, "momentum")
    shutil.rmtree(middle)
    damage, _ = verify_contestant(ledger.dir, "momentum", Ledger(tmp_path).chain_keys("momentum"))
    assert [d.path for d in damage] == [str(middle)]
    assert "follows it in the chain" in damage[0].describe()
    built, record = _builds(Ledger(tmp_path))  # its book would lose the middle record's fills
    with pytest.raises(BrokenChain, match=rf"{middle} is missing: .* follows it"):
        record()
    assert built == []


def test_a_new_process_hashes_only_the_records_it_has_not_proven(tmp_path, monkeypatch):
    """Every commit checks the whole history, but a record proven before (the verified point,
    :mod:`arena.ledger.verified`) costs a ``stat`` per file: a new process's next record hashes
    the files of its own link and nothing else."""
    import arena.ledger.chain as chain

    _three(tmp_path)
    ledger = Ledger(tmp_path)  # a new process
    hashed: list[str] = []
    real = chain.file_sha256
    monkeypatch.setattr(chain, "file_sha256", lambda p: hashed.append(p.name) or real(p))
    ledger.record_cycle(C4, "momentum", lambda: simple_record("momentum", C4))
    assert hashed.count("fills.parquet") == 1 and hashed.count("equity.parquet") == 1  # its link
    hashed.clear()
    c5 = C4 + pd.Timedelta(days=1)
    ledger.record_cycle(c5, "momentum", lambda: simple_record("momentum", c5))
    assert hashed.count("fills.parquet") == 1


def test_a_crash_between_the_rename_and_the_head_is_rolled_forward(tmp_path):
    ledger = _three(tmp_path)
    keys = ledger.chain_keys("momentum")
    behind = read_link(ledger.dir / keys[-2])
    (ledger.dir / "_heads/contestant=momentum.json").write_text(
        json.dumps({"key": behind.key, "digest": behind.digest}))
    assert verify_contestant(ledger.dir, "momentum", keys) == ([], 0)
    built, record = _builds(Ledger(tmp_path))
    assert record() == RecordStatus.RECORDED and built == [True]
    assert read_link(Ledger(tmp_path).record_dir(C4, "momentum")).previous.key == keys[-1]


def test_a_head_that_names_another_digest_is_refused(tmp_path):
    ledger = _three(tmp_path)
    head = ledger.dir / "_heads/contestant=momentum.json"
    raw = json.loads(head.read_text())
    head.write_text(json.dumps({**raw, "digest": "0" * 64}))
    with pytest.raises(BrokenChain, match="is not the record momentum's head names"):
        _builds(Ledger(tmp_path))[1]()
    head.write_text("{not json")
    with pytest.raises(BrokenChain, match=rf"{head} cannot be read"):
        _builds(Ledger(tmp_path))[1]()


def test_records_written_before_the_chain_are_unchained_not_damaged(tmp_path):
    ledger = _three(tmp_path)
    for key in ledger.chain_keys("momentum"):
        (ledger.dir / key / CHAIN_FILE).unlink()
    (ledger.dir / "_heads/contestant=momentum.json").unlink()
    shutil.rmtree(ledger.dir / "_verified")  # an older ledger has no verified point either
    built, record = _builds(Ledger(tmp_path))
    assert record() == RecordStatus.RECORDED and built == [True]
    keys = Ledger(tmp_path).chain_keys("momentum")
    link = read_link(ledger.dir / keys[-1])
    assert (link.previous.key, link.previous.digest) == (keys[-2], None)
    assert verify_contestant(ledger.dir, "momentum", keys) == ([], 4)


def test_an_unreadable_ledger_file_is_a_damaged_file_named_not_a_traceback(tmp_path):
    ledger = _three(tmp_path)
    (ledger.dir / "_books/contestant=momentum.json").unlink()  # a reader that folds it
    fills = ledger.record_dir(C1, "momentum") / "fills.parquet"
    fills.write_bytes(b"PAR1" + b"\x00" * 64)
    with pytest.raises(DamagedFile, match=rf"{fills} is damaged"):
        Ledger(tmp_path).portfolio("momentum")
    fills.unlink()
    with pytest.raises(DamagedFile, match=rf"{fills} is damaged: the file is missing"):
        Ledger(tmp_path).portfolio("momentum")
    equity = ledger.record_dir(C3, "momentum") / "outcome.parquet"
    equity.write_bytes(b"")
    with pytest.raises(DamagedFile, match=rf"{equity} is damaged"):
        Ledger(tmp_path).record_rows("outcome", C3, "momentum")


def test_the_monitor_window_of_a_broken_contestant_is_refused_too(tmp_path):
    ledger = _three(tmp_path)
    shutil.rmtree(ledger.record_dir(C3, "momentum"))
    end = C4 - pd.Timedelta(hours=1)
    with pytest.raises(BrokenChain):
        Ledger(tmp_path).record_monitor(C3, end, "momentum",
                                        lambda: MonitorRecord("momentum", C3, end, (STOP_BTC,)))


def _double_quantity(fills) -> None:
    table = pq.ParquetFile(fills).read()
    pq.write_table(table.set_column(table.schema.get_field_index("quantity"), "quantity",
                                    [[q * 2 for q in table.column("quantity").to_pylist()]]),
                   fills)


def test_an_older_record_changed_after_the_book_refuses_the_next_sweep(tmp_path, monkeypatch):
    """The book holds the state after every record, so the fold no longer reads the older
    ones; the sweep checks them all the same: a record changed under the book refuses the
    contestant (by file name, nothing built), while a reader keeps the book's state."""
    monkeypatch.setattr(verified, "SWEEP_EVERY", 1)
    ledger = _three(tmp_path)
    book = Ledger(tmp_path).portfolio("momentum")
    old = ledger.record_dir(C1, "momentum") / "fills.parquet"
    _double_quantity(old)
    built, record = _builds(Ledger(tmp_path))
    with pytest.raises(BrokenChain, match=rf"{old} has changed since it was recorded"):
        record()
    assert built == [] and Ledger(tmp_path).portfolio("momentum") == book
    damage, _ = verify_contestant(ledger.dir, "momentum", ledger.chain_keys("momentum"))
    assert [d.path for d in damage] == [str(old)]


def test_a_book_whose_checksum_does_not_hold_is_not_trusted(tmp_path, caplog):
    """A book edited by hand (its checksum fails) is folded from the first record; one an
    earlier version kept (no format: it may have been folded around a deleted record) too."""
    ledger = _three(tmp_path)
    folded = Ledger(tmp_path).portfolio("momentum", start=Portfolio())
    book = tmp_path / "ledger" / "_books" / "contestant=momentum.json"
    data = json.loads(book.read_text())
    data["portfolio"]["cash"] = data["portfolio"]["cash"] + 1000.0
    book.write_text(json.dumps(data))
    assert Ledger(tmp_path).portfolio("momentum") == folded
    assert "does not match its checksum" in caplog.text
    del data["format"]
    book.write_text(json.dumps(data))
    assert Ledger(tmp_path).portfolio("momentum") == folded
    assert _builds(ledger)[1]() == RecordStatus.RECORDED  # a commit keeps it again
    assert json.loads(book.read_text())["format"] == 2
