"""How the steps of a job are run: in this process, or as the tasks of a Prefect flow.

The steps of an ingest, a cycle and a season are written once (:mod:`arena.data.ingest`,
:mod:`arena.pipeline.cycle`, :mod:`arena.pipeline.season`), as plain functions that call their
sub-steps through a :class:`Runner`. The command line runs them with :class:`Inline` (a thread
pool for the fan-out); the Prefect flows pass a runner that submits each step as a task
(``arena.flows.tasks.PrefectRunner``), so the order of the steps is decided in one place and the
UI shows one task per step run.

A step may carry a run name template (:func:`step`), e.g. ``"play-{contestant.name}"``, formatted
with the step's arguments, a :class:`Retry` policy (a vendor's rate limit) and a ``width``: how
many of its items a fan-out runs at once (a vendor's politeness; none: every item at once, so a
cycle's model calls all start together and the cycle lasts as long as its slowest call). Every
runner honours all three, so a step behaves the same on the command line and in a flow.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Retry:
    """Run a step again after ``delays`` seconds (one attempt more per delay) when it raised an
    error ``when`` says may heal (a rate limit, an outage); any other error fails at once."""

    delays: tuple[float, ...]
    when: Callable[[BaseException], bool]


def step(run_name: str, *, retry: Retry | None = None, width: int | None = None
         ) -> Callable[[F], F]:
    """Mark a function as a step named ``run_name`` (a template over its parameters), retried
    by ``retry``; a fan-out of it runs at most ``width`` items at once (None: all of them)."""
    if width is not None and width < 1:
        raise ValueError(f"a step's width is at least 1, not {width}")

    def mark(fn: F) -> F:
        fn.run_name = run_name  # type: ignore[attr-defined]
        fn.retry = retry  # type: ignore[attr-defined]
        fn.width = width  # type: ignore[attr-defined]
        return fn

    return mark


def retry_of(fn: Callable[..., Any]) -> Retry | None:
    """The step's retry policy (None: a failure fails at once)."""
    return getattr(fn, "retry", None)


def width_of(fn: Callable[..., Any]) -> int | None:
    """How many items of the step a fan-out runs at once (None: every item at once)."""
    return getattr(fn, "width", None)


class Runner(Protocol):
    def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run one step and return its result."""
        ...

    def map(self, fn: Callable[..., T], items: Sequence[Any], /, *args: Any,
            capture: tuple[type[Exception], ...] = (), **kwargs: Any) -> list[T]:
        """Run ``fn(item, *args, **kwargs)`` for every item, concurrently; results in order. An
        item whose step raised one of ``capture`` (after its retries) gets the exception as its
        result; any other error propagates once the items started have finished."""
        ...


class _NotStarted(CancelledError):
    """An item of a fan-out that never ran: another item failed or the fan-out was interrupted."""


class Inline:
    """Steps run in this process; a fan-out runs its items on threads of its own, as many at
    once as the step's width allows (every item, unless the step says otherwise) and at most
    ``workers`` (None: no bound of the runner's). When the fan-out is interrupted (Ctrl-C,
    SIGTERM) the steps already running finish - each records whole or not at all - and the ones
    not started are cancelled. ``sleep`` waits between a step's retries (a test passes one that
    does not wait)."""

    def __init__(self, workers: int | None = None, *,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"a runner needs at least one worker, not {workers}")
        self.workers = workers
        self.sleep = sleep

    def width(self, fn: Callable[..., Any], items: int) -> int:
        """The threads a fan-out of ``items`` items of ``fn`` runs on."""
        bounds = [b for b in (width_of(fn), self.workers) if b is not None]
        return max(1, min([items, *bounds]))

    def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        policy = retry_of(fn)
        delays = policy.delays if policy is not None else ()
        for attempt, delay in enumerate((*delays, None), start=1):
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if delay is None or policy is None or not policy.when(exc):
                    raise
                log.warning("%s: attempt %d failed (%s); again in %.0f s", fn.__name__,
                            attempt, exc, delay)
                self.sleep(delay)
        raise AssertionError("unreachable")  # the last attempt returned or raised

    def map(self, fn: Callable[..., T], items: Sequence[Any], /, *args: Any,
            capture: tuple[type[Exception], ...] = (), **kwargs: Any) -> list[T]:
        def one(item: Any) -> Any:
            try:
                return self.run(fn, item, *args, **kwargs)
            except capture as exc:
                return exc

        width = self.width(fn, len(items))
        pool = ThreadPoolExecutor(max_workers=width,
                                  thread_name_prefix=getattr(fn, "__name__", "step"))
        # every item is handed to the pool (each submit starting its thread, which then waits on
        # the gate) before the first one runs: submitting waits for the interpreter lock, which
        # running items would hold in turn, so the last of 64 turns would start a second late
        go, stop = threading.Event(), threading.Event()

        def gated(item: Any) -> Any:
            go.wait()
            if stop.is_set():
                raise _NotStarted("the fan-out was interrupted before this item started")
            try:
                return one(item)
            except BaseException:  # the items not started yet stay so, whichever thread is next
                stop.set()
                raise

        try:
            futures = [pool.submit(gated, item) for item in items]
            go.set()
            wait(futures)
            # the error that stopped the fan-out, not an item it kept from starting (which may
            # come earlier in the order: its thread looked at the gate after the error)
            errors = [e for e in (f.exception() for f in futures) if e is not None]
            if errors:
                raise next((e for e in errors if not isinstance(e, _NotStarted)), errors[0])
            results = [f.result() for f in futures]
        except BaseException:  # an interrupt or an error: the items not started never start
            stop.set()
            go.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return results


INLINE = Inline()


@contextmanager
def steady_heap() -> Iterator[None]:
    """Leave the objects alive on entry (imported libraries, litellm's price map, the cycle's
    market: over a million in a cycle's process) out of the garbage collector's passes until
    exit. A full pass over them stops every thread for about a quarter of a second, and the
    allocations of a fan-out's start trigger one just as its calls are about to leave. On exit
    they are collected as before (nothing stays alive for it); a heap frozen by someone else
    stays frozen."""
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()
