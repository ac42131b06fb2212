"""One ingest run, its steps in order: the plan, each asset's fetch as a step of the runner (the
command line's threads, a flow's tasks), then the build, validation and publication of the
batch (:func:`~arena.data.ingest.publish.finish_ingest`)."""

from __future__ import annotations

import threading
import time

from arena.core.runner import INLINE, Runner
from arena.core.universe import Universe
from arena.data.errors import ProviderError
from arena.data.ingest.fetch import AssetFetch, fetch
from arena.data.ingest.plan import plan_ingest
from arena.data.ingest.publish import IngestResult, ProgressFn, finish_ingest, quiet
from arena.data.lake import Lake
from arena.data.providers.base import Provider


def run_ingest(provider: Provider, universe: Universe, *, start: object, end: object,
               lake: Lake | None = None, now: object | None = None,
               progress: ProgressFn | None = None, full: bool = False,
               interval: str | None = None, runner: Runner = INLINE,
               data_docs: bool = False) -> IngestResult:
    """Fetch, validate and publish one provider's bars for ``universe`` over ``[start, end)``
    (``interval``: a watch run of a finer interval than the provider's base, see
    :func:`plan_ingest`). Each asset's fetch is a step of ``runner`` (:func:`fetch`: the
    command line's threads, a flow's tasks), retried only on transient vendor errors.
    ``data_docs``: build Data Docs for this run (else once a day and for a failed validation).

    Raises :class:`~arena.data.ingest.errors.IngestError` (after writing the manifest) when any asset did not publish; the
    others are published (all-or-nothing per asset).
    """
    lake = lake or Lake()
    plan = plan_ingest(provider, universe, start=start, end=end, now=now, full=full,
                       interval=interval, data_docs=data_docs)
    notify = progress or quiet
    t0 = time.perf_counter()
    counter = _Counter(notify, "fetch", len(plan.assets))
    results = runner.map(fetch, list(plan.assets), provider, plan, lake, counter,
                         capture=(ProviderError,))
    fetches = [r for r in results if isinstance(r, AssetFetch)]
    errors = {a.symbol: f"{type(r).__name__}: {r}" for a, r in zip(plan.assets, results,
                                                                    strict=True)
              if isinstance(r, ProviderError)}
    timings = {"fetch": time.perf_counter() - t0}
    return finish_ingest(lake, plan, universe, fetches, errors, timings, notify)


class _Counter:
    """Counts finished fetches for the progress callback (fetches finish in any order, from
    several threads)."""

    def __init__(self, notify: ProgressFn, stage: str, total: int) -> None:
        self.notify, self.stage, self.total = notify, stage, total
        self.done = 0
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            self.done += 1
            self.notify(self.stage, self.done, self.total)

    def __reduce__(self) -> tuple[object, ...]:  # sent elsewhere (a task's parameters): silent
        return (_Counter, (quiet, self.stage, self.total))
