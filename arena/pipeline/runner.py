"""How the pipeline's steps are run: in this process, or as the tasks of a Prefect flow.

The steps of a cycle and of a season are written once (:mod:`arena.pipeline.cycle`,
:mod:`arena.pipeline.season`), as plain functions that call their sub-steps through a
:class:`Runner`. The command line runs them with :class:`Inline` (a thread pool for the fan-out);
the Prefect flows pass a runner that submits each step as a task (``arena.flows.tasks``), so the
order of the steps is decided in one place and the UI shows one task per step run.

A step may carry a run name template (:func:`step`), e.g. ``"play-{contestant.name}"``, formatted
with the step's arguments; a runner uses it to name what it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def step(run_name: str) -> Callable[[F], F]:
    """Mark a function as a pipeline step named ``run_name`` (a template over its parameters)."""

    def mark(fn: F) -> F:
        fn.run_name = run_name  # type: ignore[attr-defined]
        return fn

    return mark


class Runner(Protocol):
    def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """Run one step and return its result."""
        ...

    def map(self, fn: Callable[..., T], items: Sequence[Any], /, *args: Any,
            **kwargs: Any) -> list[T]:
        """Run ``fn(item, *args, **kwargs)`` for every item, concurrently; results in order."""
        ...


class Inline:
    """Steps run in this process; a fan-out uses a bounded thread pool. When the fan-out is
    interrupted (Ctrl-C, SIGTERM) the steps already running finish - each records whole or
    not at all - and the ones not started are cancelled."""

    def __init__(self, workers: int = 4) -> None:
        self.workers = max(1, workers)

    def run(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        return fn(*args, **kwargs)

    def map(self, fn: Callable[..., T], items: Sequence[Any], /, *args: Any,
            **kwargs: Any) -> list[T]:
        pool = ThreadPoolExecutor(max_workers=self.workers)
        try:
            results = list(pool.map(lambda item: fn(item, *args, **kwargs), items))
        except BaseException:  # an interrupt or an error: the items not started never start
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return results


INLINE = Inline()
