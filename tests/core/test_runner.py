"""The runner of the command line honours a step's retry policy as a flow's task does
(tests/flows/test_ingest_flow.py), and a fan-out captures the errors it is told to."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from arena.core.runner import Inline, Retry, steady_heap, step


class Transient(Exception):
    pass


class Permanent(Exception):
    pass


def _flaky(failures: list[Exception]):
    calls = []

    @step("flaky-{item}", retry=Retry(delays=(2.0, 10.0, 30.0),
                                       when=lambda e: isinstance(e, Transient)))
    def flaky(item: int) -> int:
        calls.append(item)
        if failures:
            raise failures.pop(0)
        return item * 10

    return flaky, calls


def test_a_transient_error_is_retried_after_the_policys_waits():
    waits: list[float] = []
    flaky, calls = _flaky([Transient("429"), Transient("503")])
    assert Inline(sleep=waits.append).run(flaky, 4) == 40
    assert calls == [4, 4, 4] and waits == [2.0, 10.0]


def test_a_permanent_error_fails_at_once_and_a_transient_one_after_the_last_attempt():
    waits: list[float] = []
    flaky, calls = _flaky([Permanent("bad symbol")])
    with pytest.raises(Permanent):
        Inline(sleep=waits.append).run(flaky, 1)
    assert calls == [1] and waits == []
    flaky, calls = _flaky([Transient("429")] * 4)
    with pytest.raises(Transient):
        Inline(sleep=waits.append).run(flaky, 1)
    assert len(calls) == 4 and waits == [2.0, 10.0, 30.0]


def test_a_fan_out_captures_the_errors_it_is_told_to_and_keeps_the_order():
    @step("each-{item}")
    def each(item: int) -> int:
        if item == 2:
            raise Permanent(f"item {item}")
        return item

    got = Inline(workers=3).map(each, [1, 2, 3], capture=(Permanent,))
    assert got[0] == 1 and got[2] == 3 and isinstance(got[1], Permanent)
    with pytest.raises(Permanent):
        Inline(workers=3).map(each, [1, 2, 3])


def test_a_fan_out_raises_the_error_that_stopped_it_not_an_item_it_kept_from_starting():
    """Item 5 fails; the items whose threads look at the gate after it never start, and those
    come earlier in the order: the error raised is still item 5's (a race: tried 100 times)."""
    @step("each-{item}")
    def each(item: int) -> int:
        if item == 5:
            raise Permanent(f"item {item}")
        return item

    for _ in range(100):
        with pytest.raises(Permanent, match="item 5"):
            Inline(workers=8).map(each, list(range(8)))


def test_a_fan_out_runs_its_items_at_once():
    barrier = threading.Barrier(4, timeout=20)

    @step("wait-{item}")
    def wait(item: int) -> int:
        barrier.wait()  # breaks (BrokenBarrierError) unless all four are in at once
        return item

    assert Inline(workers=4).map(wait, [1, 2, 3, 4]) == [1, 2, 3, 4]


def test_a_fan_out_is_as_wide_as_its_items_unless_the_step_says_otherwise():
    """64 items: all in at once (a barrier of 64); a step of width 2: never more than two."""
    barrier = threading.Barrier(64, timeout=30)

    def wait(item):
        barrier.wait()  # broken unless all 64 are in together
        return item

    assert Inline().map(wait, list(range(64))) == list(range(64))

    lock, inside, most = threading.Lock(), [0], [0]
    pair = threading.Barrier(2, timeout=30)

    @step("narrow-{item}", width=2)
    def narrow(item):
        with lock:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        pair.wait()  # two run together...
        with lock:
            inside[0] -= 1
        return item

    assert Inline().map(narrow, list(range(6))) == list(range(6))
    assert most[0] == 2  # ...and never three
    assert Inline(workers=1).width(narrow, 6) == 1  # the runner's own bound wins when lower
    with pytest.raises(ValueError, match="at least 1"):
        step("bad", width=0)


def test_every_thread_of_a_fan_out_is_running_before_its_first_item_starts():
    """A pool starts a thread per item submitted, each start waiting for the interpreter lock
    the running items hold: the fan-out starts its threads first, so the first item already
    sees all sixteen."""
    seen: list[int] = []
    lock = threading.Lock()

    def each(item):
        with lock:
            seen.append(threading.active_count())
        return item

    before = threading.active_count()
    assert Inline().map(each, list(range(16))) == list(range(16))
    assert min(seen) - before >= 16


def test_a_failed_item_cancels_the_items_not_started_and_the_running_ones_finish():
    """Width 2, four items: the first fails while the second runs; the second finishes, the
    last two never start, and the failure reaches the caller."""
    started: list[int] = []
    finished: list[int] = []
    second_in = threading.Event()

    @step("item-{item}", width=2)
    def each(item):
        started.append(item)
        if item == 0:
            second_in.wait(20)
            raise Permanent("the first item fails")
        second_in.set()
        threading.Event().wait(0.2)
        finished.append(item)
        return item

    with pytest.raises(Permanent):
        Inline().map(each, [0, 1, 2, 3])
    assert sorted(started) == [0, 1] and finished == [1]


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_a_steady_heap_keeps_the_collector_off_what_was_alive_and_collects_it_after():
    """Inside, what was alive on entry is out of the collector's reach (a full pass leaves a
    garbage cycle made before alone); on exit it is collected as before, and a heap frozen by
    someone else stays frozen."""
    gc.collect()
    assert gc.get_freeze_count() == 0
    node = _Node()
    ref = weakref.ref(node)
    with steady_heap():
        assert gc.get_freeze_count() > 0
        del node
        gc.collect()
        assert ref() is not None  # frozen: the full pass did not look at it
        fresh = weakref.ref(_Node())
        gc.collect()
        assert fresh() is None  # what the fan-out makes is collected as usual
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert ref() is None  # nothing stays alive for it

    gc.freeze()
    try:
        with steady_heap():
            pass
        assert gc.get_freeze_count() > 0  # someone else's freeze is theirs to undo
    finally:
        gc.unfreeze()
