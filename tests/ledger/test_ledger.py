"""The ledger: round trip of every table, exactly-once writes across threads and processes, crash
recovery, the fold, DuckDB in place, the secret guard."""

from __future__ import annotations

import multiprocessing as mp
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from arena.app.verify import verify
from arena.core.types import CallRecord, Message
from arena.data.lake import Lake
from arena.engine.broker import LevelMove
from arena.engine.outcomes import CycleOutcome
from arena.engine.portfolio import CLOSE, LONG, OPEN, SHORT, Fill, Portfolio, fee, fold
from arena.engine.rules import Rejection
from arena.ledger.chain import read_link
from arena.ledger.records import (
    CycleRecord,
    MonitorRecord,
    RecordKey,
    RecordStatus,
    equity_snapshot,
)
from arena.ledger.store import Ledger, LedgerBusy, LedgerError, SecretInRecord

TRADED, FORFEITED = CycleOutcome.TRADED, CycleOutcome.FORFEITED
C1, C2, C3 = (pd.Timestamp(t, tz="UTC") for t in ("2025-11-26 16:00", "2025-11-27 16:00",
                                                    "2025-11-28 16:00"))
SYSTEM = "You are a disciplined trader. Answer in JSON."
USER = "Universe table ...\nYour portfolio: $10,000 cash."
PROMPT = f"{SYSTEM}\n\n{USER}"
SPAWN = mp.get_context("spawn")


def _fill(at, symbol, side, kind, qty, price, pnl=0.0, index=0, level=None, automatic=False):
    return Fill(at, symbol, side, kind, qty, price, fee(qty * price), realised_pnl=pnl,
                decision_index=index, automatic=automatic, invalidation_price=level,
                thesis="t" if kind == OPEN else "", invalidation="i" if kind == OPEN else "")


OPEN_ETH = _fill(C1, "ETH", LONG, OPEN, 2.0, 3000.0, level=2800.0)
CLOSE_ETH = _fill(C2, "ETH", LONG, CLOSE, 1.0, 3100.0, pnl=100.0)
OPEN_BTC = _fill(C2, "BTC", SHORT, OPEN, 0.01, 90000.0, index=1, level=95000.0)
STOP_BTC = _fill(pd.Timestamp("2025-11-28 03:15", tz="UTC"), "BTC", SHORT, CLOSE, 0.01, 95500.0,
                 pnl=-55.0, index=None, automatic=True)


def full_record(contestant: str = "momentum", at: pd.Timestamp = C1, prompt: str = PROMPT,
                response: str = '{"decisions": []}') -> CycleRecord:
    """Cycle 1: an open, a rejected second open, then a repair round whose hold moves the level."""
    d_open = {"action": "open_long", "symbol": "ETH", "percent_of_equity": 60.0,
              "invalidation_price": 2800.0, "confidence": 0.9, "thesis": "t", "invalidation": "i"}
    d_sol = {**d_open, "symbol": "SOL", "invalidation_price": 120.0}
    d_hold = {"action": "hold", "symbol": "ETH", "invalidation_price": 2900.0}
    after = fold([OPEN_ETH])
    return CycleRecord(
        contestant=contestant, cycle_at=at, status=TRADED, prompt=prompt,
        messages=(Message("system", SYSTEM), Message("user", USER), Message("assistant", response),
                  Message("user", "SOL was rejected: new_position_limit. Answer again."),
                  Message("assistant", "fixed")),
        responses={"answer": response, "repair": "fixed"},
        decisions={"answer": [d_open, d_sol], "repair": [d_hold]},
        rejections={"answer": [Rejection(1, "open_long", "SOL", "new_position_limit", "one per cycle")]},
        fills={"answer": [OPEN_ETH]},
        levels={"repair": [LevelMove(0, "ETH", 2900.0)]},
        calls=(CallRecord(contestant, "decision", "openai/m", 9000, 300, 1.5, 0.02, 1),
               CallRecord(contestant, "repair", "openai/m", 9400, 80, 0.5, None, 0, None)),
        equity=equity_snapshot(after.with_level("ETH", 2900.0), {"ETH": 3000.0}),
        parse_errors={}, errors=("note",))


def simple_record(contestant: str, at: pd.Timestamp, fills=(), status=TRADED) -> CycleRecord:
    return CycleRecord(contestant, at, status, prompt=PROMPT, responses={"answer": "{}"},
                       fills={"answer": list(fills)} if fills else {})


# ------------------------------------------------------------------------------ round trip
def test_record_round_trips_every_table(tmp_path):
    ledger = Ledger(tmp_path)
    record = full_record()
    assert ledger.record_cycle(C1, "momentum", lambda: record) == RecordStatus.RECORDED
    assert ledger.has(C1, "momentum") and not ledger.has(C2, "momentum")
    assert ledger.records() == [RecordKey(C1, "momentum")]
    d = ledger.record_dir(C1, "momentum")
    assert d == tmp_path / "ledger/cycles/cycle=2025-11-26T16-00-00/contestant=momentum"
    assert sorted(p.name for p in d.iterdir()) == sorted(
        [f"{n}.parquet" for n in ("outcome", "calls", "messages", "responses", "decisions",
                                  "rejections", "fills", "levels", "equity")] + ["chain.json"])

    assert ledger.fills("momentum") == [OPEN_ETH]  # every Fill field rebuilt exactly
    assert ledger.responses("momentum", C1) == {"answer": '{"decisions": []}', "repair": "fixed"}
    assert ledger.messages("momentum", C1) == list(record.messages)

    out = ledger.table("outcome").iloc[0]
    assert (out.status, bool(out.repaired), out.n_calls, out.n_fills, out.n_rejections) == (
        "traded", True, 2, 1, 1)
    assert list(out.errors) == ["note"] and pd.isna(out.parse_error_answer)
    calls = ledger.table("calls")
    assert list(calls.role) == ["decision", "repair"] and list(calls.tokens_in) == [9000, 9400]
    assert calls.cost_usd.iloc[0] == 0.02 and pd.isna(calls.cost_usd.iloc[1])
    decisions = ledger.table("decisions")
    assert list(zip(decisions["round"], decisions.decision_index, decisions.symbol, strict=True)) == [
        ("answer", 0, "ETH"), ("answer", 1, "SOL"), ("repair", 0, "ETH")]
    rej = ledger.table("rejections").iloc[0]
    assert (rej["round"], rej.decision_index, rej.code) == ("answer", 1, "new_position_limit")
    levels = ledger.table("levels")
    assert list(zip(levels.symbol, levels.invalidation_price, strict=True)) == [("ETH", 2900.0)]
    eq = ledger.table("equity").iloc[0]
    assert eq.positions == 1 and eq.equity == pytest.approx(10_000 - OPEN_ETH.fee)
    fills = ledger.table("fills")
    assert str(fills.cycle_at.dtype) == "datetime64[us, UTC]" and fills.contestant.iloc[0] == "momentum"

    # the prompt is stored once by its hash; messages that are part of it only reference it
    msgs = ledger.table("messages")
    assert msgs.content.isna().tolist() == [True, True, False, False, False]
    sha = out.prompt_sha256
    assert (tmp_path / "ledger/prompts" / f"{sha}.txt").read_text() == PROMPT
    ledger.record_cycle(C1, "trend", lambda: full_record("trend"))  # same prompt, other contestant
    assert [p.name for p in (tmp_path / "ledger/prompts").iterdir()] == [f"{sha}.txt"]


# ------------------------------------------------------------------------------ exactly once
def test_second_record_of_a_key_does_not_build(tmp_path):
    ledger, calls = Ledger(tmp_path), []

    def build():
        calls.append(1)
        return simple_record("momentum", C1, [OPEN_ETH])

    assert ledger.record_cycle(C1, "momentum", build) == RecordStatus.RECORDED
    assert ledger.record_cycle(C1, "momentum", build) == RecordStatus.ALREADY_RECORDED
    _assert_verified_whole(ledger)
    assert Ledger(tmp_path).record_cycle(C1, "momentum", build) == "already recorded"
    assert len(calls) == 1 and ledger.fills("momentum") == [OPEN_ETH]


def test_threads_racing_on_one_key_build_once(tmp_path):
    ledger, calls, barrier = Ledger(tmp_path), [], threading.Barrier(6)
    statuses = []

    def build():
        calls.append(1)
        time.sleep(0.05)
        return simple_record("momentum", C1, [OPEN_ETH])

    def run():
        barrier.wait(timeout=20)
        statuses.append(ledger.record_cycle(C1, "momentum", build))

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert sorted(statuses) == sorted([RecordStatus.RECORDED] + [RecordStatus.ALREADY_RECORDED] * 5)


def _race_worker(root: str, side: str, keys: list[str], barrier, results) -> None:
    ledger = Ledger(root)
    for key in keys:
        at = pd.Timestamp(key, tz="UTC")

        def build(at=at, key=key):
            with open(side, "a") as f:
                f.write(f"{os.getpid()} {key}\n")
            time.sleep(0.05)
            return simple_record("momentum", at, [_fill(at, "ETH", LONG, OPEN, 1.0, 3000.0)])

        try:
            barrier.wait(timeout=20)
            results.put((key, str(ledger.record_cycle(at, "momentum", build))))
        except Exception as e:  # reported to the test, which fails instead of hanging
            results.put((key, f"error: {e!r}"))


def test_processes_started_together_build_once(tmp_path):
    side, n = tmp_path / "builds.txt", 3
    keys = [f"2025-11-{day} 16:00" for day in range(20, 25)]  # five races
    barrier, results = SPAWN.Barrier(n), SPAWN.Queue()
    procs = [SPAWN.Process(target=_race_worker, args=(str(tmp_path), str(side), keys, barrier,
                                                      results), daemon=True) for _ in range(n)]
    for p in procs:
        p.start()
    got = [results.get(timeout=60) for _ in range(n * len(keys))]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    lines = side.read_text().splitlines()
    for key in keys:
        assert sum(line.endswith(key) for line in lines) == 1, lines
        assert sorted(s for k, s in got if k == key) == ["already recorded"] * (n - 1) + ["recorded"]
    # each cycle's trade is in the ledger once
    assert len(Ledger(tmp_path).fills("momentum")) == len(keys)


# ------------------------------------------------------------------------------ crash recovery
def _crash_in_build(root: str, side: str) -> None:
    def build():
        with open(side, "a") as f:
            f.write("crashed run\n")
        os._exit(3)

    Ledger(root).record_cycle(C1, "momentum", build)


class _CrashWhileWriting(Ledger):
    written = 0

    def _write_table(self, path: Path, table) -> None:
        super()._write_table(path, table)
        type(self).written += 1
        if self.written == 3:
            os._exit(4)


def _crash_while_writing(root: str) -> None:
    _CrashWhileWriting(root).record_cycle(C1, "momentum", lambda: simple_record("momentum", C1, [OPEN_ETH]))


def _hold_lock_forever(root: str, ready) -> None:
    def build():
        ready.set()
        time.sleep(120)

    Ledger(root).record_cycle(C1, "momentum", build)


def _assert_nothing_visible(ledger: Ledger) -> None:
    assert not ledger.has(C1, "momentum") and ledger.records() == [] and ledger.fills("momentum") == []
    assert ledger.table("fills").empty
    _assert_verified_whole(ledger)


def _assert_verified_whole(ledger: Ledger) -> None:
    """``arena season verify``'s check finds the lake whole: a kill leaves no damage."""
    found = verify(Lake(ledger.dir.parent))
    assert not found.damaged, [f.describe() for f in found.findings]


def _recover(ledger: Ledger) -> None:
    calls = []

    def build():
        calls.append(1)
        return simple_record("momentum", C1, [OPEN_ETH])

    # wait=0: a single non-blocking try, LedgerBusy if the dead run's lock were still held
    assert ledger.record_cycle(C1, "momentum", build, wait=0) == RecordStatus.RECORDED
    assert calls == [1]
    assert ledger.fills("momentum") == [OPEN_ETH]
    assert ledger.record_cycle(C1, "momentum", build) == RecordStatus.ALREADY_RECORDED


def test_crash_inside_build_leaves_no_record_and_no_lock(tmp_path):
    side = tmp_path / "builds.txt"
    p = SPAWN.Process(target=_crash_in_build, args=(str(tmp_path), str(side)), daemon=True)
    p.start()
    p.join(60)
    assert p.exitcode == 3 and side.read_text() == "crashed run\n"
    ledger = Ledger(tmp_path)
    _assert_nothing_visible(ledger)
    _recover(ledger)


def test_crash_while_writing_files_leaves_no_visible_record(tmp_path):
    p = SPAWN.Process(target=_crash_while_writing, args=(str(tmp_path),), daemon=True)
    p.start()
    p.join(60)
    assert p.exitcode == 4
    ledger = Ledger(tmp_path)
    staged = list((tmp_path / "ledger/_staging").iterdir())
    assert len(staged) == 1 and len(list(staged[0].iterdir())) == 3  # really half-written
    _assert_nothing_visible(ledger)
    rows = duckdb.connect().execute(
        f"select count(*) from glob('{tmp_path}/ledger/cycles/**/*.parquet')").fetchall()
    assert rows == [(0,)]
    _recover(ledger)
    assert list((tmp_path / "ledger/_staging").iterdir()) == []  # the leftover was cleaned


def test_killed_lock_holder_does_not_block(tmp_path):
    ready = SPAWN.Event()
    p = SPAWN.Process(target=_hold_lock_forever, args=(str(tmp_path), ready), daemon=True)
    p.start()
    assert ready.wait(60)
    ledger = Ledger(tmp_path)
    with pytest.raises(LedgerBusy):  # alive: it holds the lock
        ledger.record_cycle(C1, "momentum", lambda: simple_record("momentum", C1), wait=0.2)
    os.kill(p.pid, signal.SIGKILL)
    p.join(30)
    assert (tmp_path / "ledger/_locks/contestant=momentum.lock").read_text().strip() == str(p.pid)
    _assert_nothing_visible(ledger)
    _recover(ledger)


def test_stale_lock_file_of_a_dead_pid_does_not_block(tmp_path):
    p = SPAWN.Process(target=os.getpid)
    p.start()
    p.join(60)
    lock = tmp_path / "ledger/_locks/contestant=momentum.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text(f"{p.pid}\n")
    _recover(Ledger(tmp_path))


def test_failing_build_writes_nothing_and_can_be_rerun(tmp_path):
    ledger = Ledger(tmp_path)

    def boom():
        raise RuntimeError("model down")

    with pytest.raises(RuntimeError, match="model down"):
        ledger.record_cycle(C1, "momentum", boom)
    with pytest.raises(LedgerError, match="not momentum"):
        ledger.record_cycle(C1, "momentum", lambda: simple_record("trend", C1))
    with pytest.raises(ValueError, match="rounds"):
        ledger.record_cycle(C1, "momentum", lambda: CycleRecord("momentum", C1, TRADED,
                                                                responses={"third": "x"}))
    _assert_nothing_visible(ledger)
    _recover(ledger)


# ------------------------------------------------------------------------------ the fold
def _season(ledger: Ledger) -> None:
    cycle2 = simple_record("momentum", C2, [CLOSE_ETH, OPEN_BTC])
    ledger.record_cycle(C1, "momentum", full_record)
    ledger.record_cycle(C2, "momentum", lambda: cycle2)
    ledger.record_monitor(C2, C3, "momentum", lambda: MonitorRecord(
        "momentum", C2, C3, [STOP_BTC], checked={"BTC": 45, "ETH": 96}))
    ledger.record_cycle(C3, "momentum", lambda: simple_record("momentum", C3, status=FORFEITED))
    ledger.record_cycle(C1, "trend", lambda: simple_record("trend", C1))


def test_portfolio_is_the_fold_of_the_recorded_events(tmp_path):
    ledger = Ledger(tmp_path)
    _season(ledger)
    assert ledger.fills("momentum") == [OPEN_ETH, CLOSE_ETH, OPEN_BTC, STOP_BTC]
    expected = fold([CLOSE_ETH, OPEN_BTC, STOP_BTC], fold([OPEN_ETH]).with_level("ETH", 2900.0))
    state = ledger.portfolio("momentum")
    assert state == expected
    assert state.positions["ETH"].quantity == 1.0 and state.positions["ETH"].invalidation_price == 2900.0
    assert (state.cash, state.fees_paid) == (fold(ledger.fills("momentum")).cash,
                                             fold(ledger.fills("momentum")).fees_paid)
    assert state.realised_pnl == pytest.approx(45.0)
    assert ledger.portfolio("trend") == Portfolio()
    assert ledger.portfolio("trend", start=Portfolio(cash=5.0)).cash == 5.0
    # recording a cycle again changes nothing
    assert ledger.record_cycle(C2, "momentum", lambda: simple_record("momentum", C2, [OPEN_BTC])) \
        == RecordStatus.ALREADY_RECORDED
    assert ledger.portfolio("momentum") == expected


def _folded(ledger: Ledger, name: str) -> Portfolio:
    """The contestant's state folded from its first record (a start is given: no book)."""
    return ledger.portfolio(name, start=Portfolio())


def test_a_new_process_continues_the_book_and_reads_only_the_later_records(tmp_path, monkeypatch):
    """Each step a fresh Ledger, as each live tick and cycle is a process of its own: its state
    continues the book, equal to the fold from the first record. Each commit keeps the book
    (its history just checked whole), so a reader after it reads no record; a book one record
    behind (its write lost) is continued by reading the newest record only."""
    steps = [lambda led: led.record_cycle(C1, "momentum", full_record),
             lambda led: led.record_cycle(C2, "momentum", lambda: simple_record(
                 "momentum", C2, [CLOSE_ETH, OPEN_BTC])),
             lambda led: led.record_monitor(C2, C3, "momentum", lambda: MonitorRecord(
                 "momentum", C2, C3, [STOP_BTC], checked={"BTC": 45})),
             lambda led: led.record_cycle(C3, "momentum", lambda: simple_record(
                 "momentum", C3, status=FORFEITED))]
    read: list[int] = []
    original = Ledger._read_events

    def counting(self, cycles, monitor):
        read.append(len(cycles) + len(monitor))
        return original(self, cycles, monitor)

    monkeypatch.setattr(Ledger, "_read_events", counting)
    book = tmp_path / "ledger" / "_books" / "contestant=momentum.json"
    kept = None
    for step in steps:
        step(Ledger(tmp_path))
        read.clear()
        state = Ledger(tmp_path).portfolio("momentum")
        assert read == []  # the book holds every record
        assert state == _folded(Ledger(tmp_path), "momentum")
        if kept is not None:  # the book before this step's record, as if its write was lost
            fresh = book.read_text()
            book.write_text(kept)
            read.clear()
            assert Ledger(tmp_path).portfolio("momentum") == state
            assert read == [1]  # the newest record only
            book.write_text(fresh)
        kept = book.read_text()
    assert state.realised_pnl == pytest.approx(45.0)
    assert list(state.positions) == list(_folded(Ledger(tmp_path), "momentum").positions)


@pytest.mark.parametrize("damage", ["garbled", "another record", "record moved aside"])
def test_a_book_that_does_not_match_the_records_is_folded_again(tmp_path, damage, caplog):
    ledger = Ledger(tmp_path)
    _season(ledger)
    expected = Ledger(tmp_path).portfolio("momentum")  # writes the book
    book = tmp_path / "ledger" / "_books" / "contestant=momentum.json"
    assert book.is_file()
    if damage == "garbled":
        book.write_text("{not json")
    elif damage == "another record":  # a book of other records: its last one is not ours
        text = book.read_text().replace("cycle=", "cycle=1")
        book.write_text(text)
    else:  # the monitor's stop leaves (a repair moved it aside): the state must not hold it
        shutil.move(ledger.monitor_dir(C2, C3, "momentum"), tmp_path / "aside")
        before, expected = expected, _folded(Ledger(tmp_path), "momentum")
        assert expected != before and "BTC" in expected.positions
    assert Ledger(tmp_path).portfolio("momentum") == expected
    if damage == "garbled":
        assert "cannot be read" in caplog.text


def test_monitor_records_are_once_per_window_and_never_overlap(tmp_path):
    ledger = Ledger(tmp_path)
    _season(ledger)
    again = ledger.record_monitor(C2, C3, "momentum", lambda: pytest.fail("built twice"))
    assert again == RecordStatus.ALREADY_RECORDED
    with pytest.raises(LedgerError, match="overlaps"):
        ledger.record_monitor(C2 + pd.Timedelta("1h"), C3 + pd.Timedelta("1h"), "momentum",
                              lambda: pytest.fail("must not build"))
    with pytest.raises(ValueError, match="outside the window"):
        ledger.record_monitor(C3, C3 + pd.Timedelta("1D"), "momentum",
                              lambda: MonitorRecord("momentum", C3, C3 + pd.Timedelta("1D"), [STOP_BTC]))
    with pytest.raises(LedgerError, match="append-only"):  # before a cycle already recorded
        ledger.record_monitor(C1 - pd.Timedelta("1h"), C1 - pd.Timedelta("30min"), "momentum",
                              lambda: pytest.fail("must not build"))
    out = ledger.table("outcome", monitor=True)
    assert list(out.n_fills) == [1] and out.checked.iloc[0] == '{"BTC": 45, "ETH": 96}'


def test_duckdb_reads_the_tables_in_place_with_typed_keys(tmp_path):
    ledger = Ledger(tmp_path)
    _season(ledger)
    con = duckdb.connect()
    q = f"select * from read_parquet('{ledger.pattern('fills')}', hive_partitioning=true)"
    types = dict((r[0], r[1]) for r in con.execute(f"describe {q}").fetchall())
    assert types["cycle_at"] == "TIMESTAMP WITH TIME ZONE" and types["contestant"] == "VARCHAR"
    assert types["quantity"] == "DOUBLE" and types["automatic"] == "BOOLEAN"
    rows = con.execute(f"select contestant, symbol, kind, cycle_at from ({q}) "
                       "order by cycle_at, round, seq").fetchall()
    assert [r[:3] for r in rows] == [("momentum", "ETH", "open"), ("momentum", "ETH", "close"),
                                     ("momentum", "BTC", "open")]
    assert pd.Timestamp(rows[0][3]) == C1
    n = con.execute(f"select count(*), count(distinct status) from "
                    f"read_parquet('{ledger.pattern('outcome')}', hive_partitioning=true)").fetchall()
    assert n == [(4, 2)]
    m = con.execute(f"select window_end, symbol, automatic from "
                    f"read_parquet('{ledger.pattern('fills', monitor=True)}', hive_partitioning=true)"
                    ).fetchall()
    assert [(pd.Timestamp(m[0][0]), m[0][1], m[0][2])] == [(C3, "BTC", True)]
    assert ledger.table("fills").shape[0] == 3 and ledger.table("calls", "trend").empty


# ------------------------------------------------------------------------------ secrets
def test_a_secret_in_the_record_is_refused_and_nothing_written(tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_API_KEY", "sk-fake-0123456789abcdef")
    ledger = Ledger(tmp_path)
    leaky = full_record(response="here is my key sk-fake-0123456789abcdef, thanks")
    with pytest.raises(SecretInRecord, match=r"\$FAKE_API_KEY") as err:
        ledger.record_cycle(C1, "momentum", lambda: leaky)
    assert "sk-fake" not in str(err.value)
    assert not ledger.has(C1, "momentum")
    assert not (tmp_path / "ledger/prompts").exists()
    assert [p for p in (tmp_path / "ledger").rglob("*") if p.is_file() and p.suffix != ".lock"] == []
    with pytest.raises(SecretInRecord, match="prompt"):
        ledger.record_cycle(C1, "momentum", lambda: full_record(
            prompt=PROMPT + " sk-fake-0123456789abcdef"))
    assert ledger.record_cycle(C1, "momentum", full_record) == RecordStatus.RECORDED


def test_keys_are_path_safe_whole_seconds(tmp_path):
    ledger = Ledger(tmp_path)
    with pytest.raises(ValueError, match="path-safe"):
        ledger.has(C1, "../evil")
    with pytest.raises(ValueError, match="whole seconds"):
        ledger.has(C1 + pd.Timedelta("1ms"), "momentum")
    with pytest.raises(KeyError):
        ledger.responses("momentum", C1)


# ------------------------------------------------------------------------------ text a model sends
HALF_EMOJI = "to the moon \ud83d"  # a lone surrogate: Python holds it, UTF-8 cannot


def test_text_utf8_cannot_hold_never_fails_a_record(tmp_path):
    """Regression: a lone surrogate in a response, a transcript, a thesis, a symbol or an error
    once crashed the write (``surrogates not allowed``) after the trades had executed."""
    ledger = Ledger(tmp_path)
    raw = '{"decisions": [{"action": "open_long", "symbol": "ETH\ud83d", "thesis": "' + HALF_EMOJI + '"}]}'
    opened = Fill(C1, "ETH", LONG, OPEN, 1.0, 3000.0, 3.0, decision_index=0,
                  invalidation_price=2800.0, thesis=HALF_EMOJI, invalidation="i")
    record = CycleRecord(
        "momentum", C1, TRADED, prompt=PROMPT,
        messages=(Message("system", SYSTEM), Message("user", USER), Message("assistant", raw)),
        responses={"answer": raw}, decisions={"answer": [{"action": "open_long", "symbol": "ETH\ud83d",
                                                          "confidence": float("nan")}]},
        rejections={"answer": [Rejection(0, "open_long", "ETH\ud83d", "unknown_symbol", "ETH\ud83d?")]},
        fills={"answer": [opened]}, errors=(f"repair: {HALF_EMOJI}",),
        notes={"answer": ["cleaned"]})
    assert ledger.record_cycle(C1, "momentum", lambda: record) == RecordStatus.RECORDED
    assert ledger.responses("momentum", C1) == {"answer": raw}  # exact, surrogate included
    row = ledger.record_rows("responses", C1, "momentum")[0]
    assert row["text"] == raw.replace("\ud83d", "\ufffd") and row["notes"] == ["cleaned"]
    [fill] = ledger.fills("momentum")
    assert fill.thesis == "to the moon \ufffd"
    decision = ledger.table("decisions").iloc[0]
    assert decision.symbol == "ETH\ufffd" and '"confidence": "NaN"' in decision.decision
    assert ledger.messages("momentum", C1)[-1].content == raw.replace("\ud83d", "\ufffd")
    # and DuckDB reads every table in place
    con = duckdb.connect()
    for table in ("responses", "decisions", "rejections", "fills", "outcome", "messages"):
        con.execute(f"select * from read_parquet('{ledger.pattern(table)}')").fetchall()
    assert con.execute(f"select json_extract_string(decision, '$.confidence') from "
                       f"read_parquet('{ledger.pattern('decisions')}')").fetchall() == [("NaN",)]


def test_a_malformed_decision_is_recorded_as_sent(tmp_path):
    ledger = Ledger(tmp_path)
    record = CycleRecord("momentum", C1, CycleOutcome.NO_TRADE, prompt=PROMPT,
                         responses={"answer": "{}"},
                         decisions={"answer": ["close ETH", {"action": 5, "symbol": "SOL"}]})
    ledger.record_cycle(C1, "momentum", lambda: record)
    rows = ledger.table("decisions")
    assert rows.decision.tolist() == ['"close ETH"', '{"action": 5, "symbol": "SOL"}']
    assert rows.action.isna().all() and rows.symbol.isna().tolist() == [True, False]


def test_an_unknown_status_is_refused(tmp_path):
    with pytest.raises(ValueError, match="executed"):
        Ledger(tmp_path).record_cycle(C1, "momentum", lambda: simple_record("momentum", C1,
                                                                            status="executed"))
    assert Ledger(tmp_path).records() == []


def test_a_record_written_before_the_responses_notes_still_reads(tmp_path):
    """Records of an older ledger lack ``responses.notes``/``raw_json``: readers see nulls, the
    schema file is brought up to date, and DuckDB reads old and new records by column name."""
    import pyarrow.parquet as pq

    ledger = Ledger(tmp_path)
    ledger.record_cycle(C1, "momentum", lambda: simple_record("momentum", C1))
    old_columns = ["cycle_at", "contestant", "round", "text", "chars", "extra"]
    for path in (ledger.record_dir(C1, "momentum") / "responses.parquet",
                 ledger.dir / "cycles/cycle=_schema/contestant=_schema/responses.parquet"):
        pq.write_table(pq.ParquetFile(path).read().select(old_columns), path)
    # an older ledger has no chain either (arena.ledger.chain): its records are unchained
    (ledger.record_dir(C1, "momentum") / "chain.json").unlink()
    (ledger.dir / "_heads/contestant=momentum.json").unlink()
    shutil.rmtree(ledger.dir / "_verified")
    fresh = Ledger(tmp_path)
    fresh.record_cycle(C2, "momentum", lambda: simple_record("momentum", C2))
    schema_file = fresh.dir / "cycles/cycle=_schema/contestant=_schema/responses.parquet"
    assert "raw_json" in pq.read_schema(schema_file).names
    assert fresh.responses("momentum", C1) == {"answer": "{}"}
    assert fresh.table("responses").notes.isna().tolist() == [True, False]
    sql = (f"select count(*), count(raw_json) from read_parquet('{fresh.pattern('responses')}', "
           "union_by_name = true)")
    assert duckdb.connect().execute(sql).fetchone() == (2, 0)


def test_a_cycle_behind_the_contestants_history_is_refused_before_it_runs(tmp_path):
    """After an operational failure left a gap, a later cycle may be recorded; playing the gap
    afterwards would fold its trades before records made without them."""
    ledger, built = Ledger(tmp_path), []
    ledger.record_cycle(C2, "momentum", lambda: simple_record("momentum", C2))
    with pytest.raises(LedgerError, match="append-only"):
        ledger.record_cycle(C1, "momentum", lambda: built.append(1) or simple_record("momentum", C1))
    ledger.record_monitor(C2, C3, "momentum", lambda: MonitorRecord("momentum", C2, C3))
    with pytest.raises(LedgerError, match="append-only"):
        ledger.record_cycle(C2 + pd.Timedelta(hours=1), "momentum",
                            lambda: built.append(1) or simple_record("momentum", C1))
    assert built == [] and ledger.records() == [RecordKey(C2, "momentum")]
    assert ledger.record_cycle(C3, "momentum", lambda: simple_record("momentum", C3)) \
        == RecordStatus.RECORDED  # the window ending at the cycle folds before it: fine


def test_the_state_at_or_after_the_last_record_is_the_book_and_before_it_the_fold(
        tmp_path, monkeypatch):
    """``portfolio(until=t)``: at or after the contestant's last record (a day's report of the
    cycle just played) it is the book's state, reading no record in a new process; before it,
    the fold of the records up to ``t``."""
    ledger = Ledger(tmp_path)
    _season(ledger)
    full = Ledger(tmp_path).portfolio("momentum")  # writes the book
    read: list[int] = []
    original = Ledger._read_events
    monkeypatch.setattr(Ledger, "_read_events",
                        lambda self, c, m: read.append(len(c) + len(m)) or original(self, c, m))
    last = max(k.cycle_at for k in ledger.records("momentum"))
    assert Ledger(tmp_path).portfolio("momentum", until=last) == full and read == []
    assert Ledger(tmp_path).portfolio("momentum", until=last + pd.Timedelta(days=1)) == full
    early = min(k.cycle_at for k in ledger.records("momentum"))
    folded = Portfolio()
    for fill in Ledger(tmp_path).fills("momentum"):
        if fill.at <= early:
            folded = folded.apply(fill)
    assert Ledger(tmp_path).portfolio("momentum", until=early).cash == folded.cash
    assert read  # the records were read for it


def _age(folder: Path, seconds: float) -> int:
    """Set ``folder``'s modification time ``seconds`` in the past; that time (ns)."""
    mtime = time.time_ns() - int(seconds * 1e9)
    os.utime(folder, ns=(mtime, mtime))
    return mtime


def test_reads_within_reading_share_one_listing_and_a_commit_lists_afresh(tmp_path, monkeypatch):
    """Within reading(), a thread's reads take every contestant's records from one listing of
    each kind; a record another process commits meanwhile shows after the block, but a commit
    of this ledger within it lists under its lock: it follows that record in the chain."""
    mine, other = Ledger(tmp_path), Ledger(tmp_path)
    other.record_cycle(C1, "momentum", lambda: simple_record("momentum", C1))
    other.record_cycle(C1, "reverse", lambda: simple_record("reverse", C1))
    listed: list[str] = []
    original = Ledger._list
    monkeypatch.setattr(Ledger, "_list", lambda self, kind, who: listed.append(kind)
                        or original(self, kind, who))
    with mine.reading():
        assert [k.contestant for k in mine.records()] == ["momentum", "reverse"]
        assert mine.portfolio("momentum") == mine.portfolio("reverse") == Portfolio()
        assert mine.records("reverse") == [RecordKey(C1, "reverse")]
        assert sorted(listed) == ["cycles", "monitor"]  # once per kind, for everyone
        other.record_cycle(C2, "momentum", lambda: simple_record("momentum", C2))
        assert mine.records("momentum") == [RecordKey(C1, "momentum")]  # the listing kept
        assert mine.record_cycle(C3, "momentum", lambda: simple_record("momentum", C3)) \
            == RecordStatus.RECORDED
        assert mine.records("momentum") == [RecordKey(c, "momentum") for c in (C1, C2, C3)]
    assert mine.records("momentum") == [RecordKey(c, "momentum") for c in (C1, C2, C3)]
    link = read_link(mine.record_dir(C3, "momentum"))
    assert link is not None and link.previous is not None
    assert link.previous.key == mine.record_dir(C2, "momentum").relative_to(mine.dir).as_posix()
    seen: list[list[RecordKey]] = []  # another thread's reads are not within this one's block
    with mine.reading():
        mine.records()
        other.record_cycle(C2, "reverse", lambda: simple_record("reverse", C2))
        worker = threading.Thread(target=lambda: seen.append(mine.records("reverse")))
        worker.start()
        worker.join()
    assert seen == [[RecordKey(C1, "reverse"), RecordKey(C2, "reverse")]]


def test_a_listing_reused_from_an_earlier_one_still_sees_every_later_record(tmp_path):
    """The listing reuses a settled folder's contestants while its time stays: a record another
    process commits later into an old cycle (a forfeit recorded at the next cycle) moves that
    time, and a folder modified within the timestamp granularity is never reused."""
    writer, reader = Ledger(tmp_path), Ledger(tmp_path)  # two processes' instances
    writer.record_cycle(C1, "momentum", lambda: simple_record("momentum", C1))
    writer.record_cycle(C2, "momentum", lambda: simple_record("momentum", C2))
    old = writer.record_dir(C1, "momentum").parent
    _age(old, 60)
    assert reader.records() == [RecordKey(C1, "momentum"), RecordKey(C2, "momentum")]
    assert reader.records("reverse") == []
    writer.record_cycle(C1, "reverse", lambda: simple_record("reverse", C1, status=FORFEITED))
    assert reader.records("reverse") == [RecordKey(C1, "reverse")]
    assert [k.contestant for k in reader.records()] == ["momentum", "reverse", "momentum"]
    # a change the file system's clock did not see (the folder's time put back where it was)
    recent = writer.record_dir(C2, "momentum").parent
    stamp = _age(recent, 0.5)  # modified just now: listed, never reused
    assert reader.records("reverse") == [RecordKey(C1, "reverse")]
    writer.record_cycle(C2, "reverse", lambda: simple_record("reverse", C2))
    os.utime(recent, ns=(stamp, stamp))
    assert reader.records("reverse") == [RecordKey(C1, "reverse"), RecordKey(C2, "reverse")]
    # the reused listing is the listing: a settled folder read from the cache gives the same
    settled = Ledger(tmp_path)
    _age(recent, 60)
    first = settled.folders()
    assert settled.folders() == first == Ledger(tmp_path).folders()
    assert len(first) == 4
