"""Validating a run's partitions: one validation run over the batch (an asset that makes it
raise is found and left out, with the error), and Great Expectations' Data Docs of the lake's
validation runs - built once a day, for a failed validation or when asked for, here or, inside
:func:`docs_beside`, in a process of their own."""

from __future__ import annotations

import json
import logging
import multiprocessing
import sys
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from arena.core.sessions import bar_close_times
from arena.core.universe import Universe
from arena.data.ingest.build import AssetPartitions
from arena.data.ingest.plan import IngestPlan
from arena.data.lake import Lake, PartitionKey, write_text
from arena.data.validation.checks import Window, validate_series
from arena.data.validation.config import ValidationConfig

_log = logging.getLogger(__name__)


def validate_partitions(parts: Sequence[AssetPartitions], universe: Universe, *,
                        start: pd.Timestamp, as_of: pd.Timestamp, base: str,
                        lake: Lake | None = None, provider: str | None = None):
    """One validation run over the bars each asset adds, with their context (a ValidationReport).

    Base series are counted from the asked ``start`` (older stored history is judged against the
    calendar but not counted, so a long history cannot dilute a hole in the new bars); derived
    series from their first bar. The end is judged by staleness at ``as_of``, or at the lake's
    horizon when a backfill merges into bars stored beyond ``as_of``. The market of a calendar
    whose benchmark the batch does not hold (a run of one symbol) is the benchmark's stored bars
    from ``lake``.
    """
    bar_frames = [(k, judged) for p in parts for k, (judged, _) in p.judge.items()]
    windows = [Window(symbol=k.symbol, interval=k.interval, calendar=universe[k.symbol].calendar,
                      start=_count_from(start, judged, since) if k.interval == base else None,
                      judged_from=since)
               for p in parts for k, (judged, since) in p.judge.items()]
    lasts: dict[str, list[pd.Timestamp]] = {}  # per calendar: the last bar of each base series
    for k, f in bar_frames:
        if k.interval == base and not f.empty:
            lasts.setdefault(universe[k.symbol].calendar, []).append(f["timestamp"].iloc[-1])
    horizon = max((bar_close_times(calendar, base, pd.DatetimeIndex(times)).max()
                   for calendar, times in lasts.items()), default=as_of)
    market = _stored_market(lake, provider, universe, {k for k, _ in bar_frames})
    return validate_series([(w, judged) for w, (_, judged) in zip(windows, bar_frames,
                                                                  strict=True)],
                           as_of=max(as_of, horizon), market=market)


def _count_from(start: pd.Timestamp, judged: pd.DataFrame, since: pd.Timestamp | None
                ) -> pd.Timestamp:
    """Where the bar count of a base series starts: the asked start, or - for the bars an
    incremental run validates - no earlier than the first of them (older ones were counted when
    they were published)."""
    if since is None or judged.empty:
        return start
    return max(start, judged["timestamp"].iloc[0])


def _stored_market(lake: Lake | None, provider: str | None, universe: Universe,
                   keys: set[PartitionKey]) -> dict[tuple[str, str], pd.Series]:
    """The stored closes of each calendar's benchmark (SPY, BTC) at the batch's intervals, for
    the calendars whose benchmark the batch does not hold."""
    if lake is None or provider is None:
        return {}
    held = {k.symbol for k in keys}
    out = {}
    for calendar, symbol in ValidationConfig().benchmarks:
        if symbol in held:
            continue
        for interval in {k.interval for k in keys if universe[k.symbol].calendar == calendar}:
            bars = lake.read_bars(PartitionKey(provider, interval, symbol))
            if not bars.empty:
                out[(calendar, interval)] = bars.set_index("timestamp")["close"]
    return out


DOCS_BUILT = "arena_built.json"  # in the Data Docs folder: the day and run of the last build


class _DocsBeside:
    """Where :func:`data_docs` builds: here (the default), or, inside :func:`docs_beside`, in
    a process of its own while the caller goes on, waited for when the block ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.pool: Any = None
        self.pending: list[tuple[Any, str]] = []


_beside = _DocsBeside()


@contextmanager
def docs_beside() -> Iterator[None]:
    """Inside this block, an ingest's Data Docs are built in a process of their own (Great
    Expectations' import and build, 5-6 s, on another core) while the block goes on - a
    replay's days; the block's end waits for them (a build that failed is logged, as always).
    A process that imported Great Expectations already builds them itself, as outside it.
    Nesting is allowed; the outermost block waits."""
    with _beside.lock:
        _beside.depth += 1
    try:
        yield
    finally:
        with _beside.lock:
            _beside.depth -= 1
            done = _beside.depth == 0
            pending, pool = (_beside.pending, _beside.pool) if done else ([], None)
            if done:
                _beside.pending, _beside.pool = [], None
        for future, run_id in pending:
            try:
                future.result(timeout=600)
            except Exception:
                _log.warning("Data Docs of %s not built", run_id, exc_info=True)
        if pool is not None:
            pool.shutdown(wait=True)


def _build_docs(report, root: Path, run_id: str, day: str) -> Path:
    """Build the Data Docs of one run and note the day of the build (in a process of its own
    under :func:`docs_beside`)."""
    index = report.build_data_docs(root, run_name=run_id)
    write_text(root / DOCS_BUILT, json.dumps({"day": day, "run_id": run_id}))
    return index


def data_docs(lake: Lake, report, plan: IngestPlan) -> Path | None:
    """Great Expectations' Data Docs of the lake's validation runs (the index; None: never
    built). They are built for the first run of each UTC day that validated, for every run that
    failed validation and for a run asked for them (``plan.data_docs``): building them imports
    Great Expectations (5-6 s), which the hourly run of a few hundred bars does not pay. Every
    run keeps its own result and page beside them (``validation/<run id>``). A build that fails
    is logged: the stored result is what the run needs. Inside :func:`docs_beside` the build
    runs in a process of its own, and the index returned is where it will be."""
    root = lake.root / "validation" / "docs"
    marker, day = root / DOCS_BUILT, f"{plan.started:%Y-%m-%d}"
    try:
        last = json.loads(marker.read_text(encoding="utf-8")).get("day")
    except (OSError, ValueError, AttributeError):
        last = None
    if plan.data_docs or not report.success or last != day:
        with _beside.lock:
            # a process that has Great Expectations imported already builds them itself
            if _beside.depth and "great_expectations" not in sys.modules:
                if _beside.pool is None:
                    _beside.pool = ProcessPoolExecutor(
                        max_workers=1, mp_context=multiprocessing.get_context("spawn"))
                _beside.pending.append((_beside.pool.submit(_build_docs, report, root,
                                                            plan.run_id, day), plan.run_id))
                return root / "index.html"
        try:
            _build_docs(report, root, plan.run_id, day)
        except Exception:
            _log.warning("Data Docs of %s not built", plan.run_id, exc_info=True)
    index = root / "index.html"
    return index if index.exists() else None


def validate_plan(parts: list[AssetPartitions], universe: Universe, plan: IngestPlan,
                  lake: Lake):
    """:func:`validate_partitions` of a batch of the plan's run."""
    return validate_partitions(parts, universe, start=plan.start, as_of=plan.end,
                               base=plan.base, lake=lake, provider=plan.provider)


def validate_batch(parts: list[AssetPartitions], universe: Universe, plan: IngestPlan, lake: Lake):
    """One validation run over the batch; if it raises, the assets that make it raise are found
    one by one and left out (with the error), and the rest is validated again."""
    if not parts:
        return None, {}
    try:
        return validate_plan(parts, universe, plan, lake), {}
    except Exception:
        raised: dict[str, list[str]] = {}
        for part in parts:
            try:
                validate_plan([part], universe, plan, lake)
            except Exception as exc:
                raised[part.symbol] = [f"{type(exc).__name__}: {exc}"]
        if not raised or len(raised) == len(parts):  # not one asset's doing
            raise
        rest = [p for p in parts if p.symbol not in raised]
        return (validate_plan(rest, universe, plan, lake) if rest else None), raised
