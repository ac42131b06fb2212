"""Candle validation: one Great Expectations run over every series of an ingest.

``validate_bars`` takes all bars of an ingest (every symbol and interval concatenated), computes
each series' statistics as columns (:mod:`arena.data.validation.stats`), validates that one frame
with the suite of ``expectations/candles.py`` (one run: Great Expectations costs ~75 ms per
validated frame), and reports one :class:`CheckResult` per (symbol, interval, check) with a
sentence naming the problem. Great Expectations is imported on first use (5-6 s), never at import.

Checks: ``bar_count`` (never zero; missing share within tolerance), ``off_calendar`` (no bar
where the calendar expects none), ``ohlc`` (no nulls; positive finite prices; volume >= 0;
low <= open, close <= high), ``unique_timestamps``, ``increasing_timestamps``,
``aligned_timestamps`` (interval grid), ``splice`` (a level shift the series makes alone,
without volume, that does not revert: :mod:`arena.data.validation.jumps`), ``staleness`` and
``incomplete_bars`` (both judged against ``as_of``).

A splice check that fails only at the newest bars of its series (where reversion cannot be seen
yet) is "suspect at the newest bar": ``success`` False and ``suspect`` True, ``observed["since"]``
the first suspect bar. :meth:`ValidationReport.suspects` lists them, so a caller can hold back
that series' bars from that time and judge them again at the next run.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from arena.core.lazy import lazy_import
from arena.core.sessions import NYSE, utc
from arena.data.price_files import UnusableInputError, load_price_file, read_price_file
from arena.data.validation import stats as cs
from arena.data.validation.config import ValidationConfig, Window
from arena.data.validation.html import write_pages
from arena.data.validation.messages import describe

pd = lazy_import("pandas")

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckResult:
    """One check of one series; ``observed`` holds JSON-ready numbers behind the message."""

    symbol: str
    interval: str
    check: str
    success: bool
    observed: dict[str, Any] = field(default_factory=dict, hash=False)
    message: str = ""
    suspect: bool = False  # splice: failed only at the newest bars (reversion not yet visible)


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of one validation run; ``ge_result`` is the raw Great Expectations result."""

    success: bool
    results: tuple[CheckResult, ...]
    as_of: pd.Timestamp | None = None
    bars: int = 0
    seconds: float = 0.0
    ge_statistics: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    ge_result: Any = field(default=None, repr=False, hash=False, compare=False)

    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if not r.success]

    def suspects(self) -> dict[tuple[str, str], pd.Timestamp]:
        """(symbol, interval) -> the first bar (open time) of every series whose only failures
        are newest-bar splice suspects: its bars from that time on may be quarantined and judged
        again when later bars show whether the move reverted."""
        failed = self.failed()
        only = {(r.symbol, r.interval) for r in failed if r.suspect} - {
            (r.symbol, r.interval) for r in failed if not r.suspect}
        return {(r.symbol, r.interval): pd.Timestamp(r.observed["since"]) for r in failed
                if r.suspect and (r.symbol, r.interval) in only}

    def failed_keys(self) -> set[tuple[str, str]]:
        """(symbol, interval) of every series with at least one failed check."""
        return {(r.symbol, r.interval) for r in self.failed()}

    def to_dict(self) -> dict[str, Any]:
        series = {(r.symbol, r.interval) for r in self.results}
        return {
            "suite": "candles", "success": self.success,
            "as_of": None if self.as_of is None else self.as_of.isoformat(),
            "bars": self.bars, "series": len(series), "checks": len(self.results),
            "failed": len(self.failed()), "seconds": round(self.seconds, 4),
            "great_expectations": self.ge_statistics,
            "results": [{"symbol": r.symbol, "interval": r.interval, "check": r.check,
                         "success": r.success, "suspect": r.suspect, "observed": r.observed,
                         "message": r.message}
                        for r in self.results],
        }

    def write(self, directory: str | os.PathLike[str], name: str = "candle_validation.json") -> Path:
        """Store the JSON result in ``directory`` (atomically) and return its path.

        ``directory`` is ``<validation root>/<run id>``: the run's HTML page and summary are
        written beside the JSON and the index of the root is rebuilt
        (:func:`arena.data.validation.html.write_pages`). A page that cannot be written is
        logged, never raised: the stored result is what the run needs."""
        target = Path(directory) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        text = json.dumps(self.to_dict(), indent=2, default=str)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
        try:
            write_pages(target.parent, json.loads(text))
        except Exception:
            _log.warning("validation pages of %s not written", target.parent, exc_info=True)
        return target

    def build_data_docs(self, directory: str | os.PathLike[str], *, run_name: str = "ingest"
                        ) -> Path:
        """Data Docs of this run in ``directory`` (see :func:`build_data_docs`)."""
        return build_data_docs(self, directory, run_name=run_name)

    def summary(self) -> str:
        series = len({(r.symbol, r.interval) for r in self.results})
        head = f"candle validation {'passed' if self.success else 'FAILED'}: {self.bars} bars, " \
               f"{series} series, {len(self.results)} checks"
        failed = self.failed()
        if not failed:
            return head
        shown = "; ".join(r.message for r in failed[:3])
        more = f" (+{len(failed) - 3} more)" if len(failed) > 3 else ""
        return f"{head}, {len(failed)} failed: {shown}{more}"


def validate_bars(bars: pd.DataFrame, windows: Sequence[Window], *, as_of: pd.Timestamp | None,
                  config: ValidationConfig = ValidationConfig(),
                  market: Mapping[tuple[str, str], pd.Series] | None = None) -> ValidationReport:
    """Validate every series of ``bars`` (columns ``symbol``, ``interval`` + the bar columns)
    against what ``windows`` asked for, in one Great Expectations run. ``as_of`` (the ingest's
    "now") judges staleness and completeness; ``None`` skips both (they pass).

    ``market``: for a batch without its benchmark (one series, say), the benchmark's closes per
    (calendar, interval), indexed by bar open time (e.g. SPY's bars from the lake): the splice
    check then judges moves net of it. Without it such a batch has no market and every move is
    judged on its own."""
    started = time.perf_counter()
    as_of = None if as_of is None else utc(as_of)
    frame, stats = cs.prepare(bars, windows, as_of=as_of, config=config, market=market)
    ge_result = _run_suite(frame, config)
    failures, errors = _unexpected_rows(ge_result)
    by_key: dict[tuple[str, str], dict[str, list[int]]] = {}
    symbols, intervals = frame["symbol"].to_numpy(), frame["interval"].to_numpy()
    for check, row_ids in failures.items():
        for rid in row_ids:
            by_key.setdefault((symbols[rid], intervals[rid]), {}).setdefault(check, []).append(rid)
    positions = frame.groupby(["symbol", "interval"], sort=False).indices
    no_rows = frame.iloc[:0]
    results = list(errors)
    for window in windows:
        key = (window.symbol, window.interval)
        failed = by_key.get(key, {})
        rows = frame.iloc[positions[key]] if failed else no_rows  # only failures need the rows
        for check in cs.CHECKS:
            failing = frame.loc[sorted(failed[check])] if check in failed else no_rows
            observed, message = describe(check, stats[key], rows, failing, config)
            results.append(CheckResult(key[0], key[1], check, failing.empty, observed, message,
                                       suspect=bool(observed.get("suspect"))))
    success = bool(ge_result.success) and all(r.success for r in results)
    return ValidationReport(
        success=success, results=tuple(results), as_of=as_of, bars=int(frame[cs.IS_BAR].sum()),
        seconds=time.perf_counter() - started, ge_statistics=dict(ge_result.statistics),
        ge_result=ge_result)


def validate_file(path: str | os.PathLike[str], *, interval: str = "1d", calendar: str = NYSE,
                  as_of: pd.Timestamp | None = None, symbol: str | None = None,
                  config: ValidationConfig = ValidationConfig(),
                  market: Mapping[tuple[str, str], pd.Series] | None = None) -> ValidationReport:
    """Validate one price file as one series (``arena validate PATH``). ``as_of=None`` judges
    staleness against the file's own last bar, so a historical file passes. Raises
    :class:`UnusableInputError` when the file is not price data."""
    bars, label = read_price_file(path, symbol=symbol)
    frame = bars.assign(symbol=label, interval=interval)
    return validate_bars(frame, [Window(label, interval, calendar)], as_of=as_of, config=config,
                         market=market)


def build_data_docs(report: ValidationReport, directory: str | os.PathLike[str], *,
                    run_name: str = "ingest") -> Path:
    """Render the report's Great Expectations result as Data Docs (static HTML) in ``directory``
    and return the path of ``index.html``. Separate from validation (~0.15 s): once per ingest.
    Earlier runs already in ``directory`` stay listed in the index."""
    if report.ge_result is None:
        raise ValueError("this report carries no Great Expectations result")
    from great_expectations.core.run_identifier import RunIdentifier
    from great_expectations.data_context.types.resource_identifiers import (
        ExpectationSuiteIdentifier,
        ValidationResultIdentifier,
    )

    context = _new_context()
    directory = Path(directory).resolve()
    context.add_data_docs_site(site_name="arena", site_config={
        "class_name": "SiteBuilder", "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"},
        "store_backend": {"class_name": "TupleFilesystemStoreBackend",
                          "base_directory": str(directory)}})
    run_time = None if report.as_of is None else report.as_of.to_pydatetime()
    run_id = RunIdentifier(run_name=run_name, run_time=run_time)
    result = report.ge_result
    result.meta["run_id"] = run_id
    key = ValidationResultIdentifier(
        expectation_suite_identifier=ExpectationSuiteIdentifier(name=result.suite_name),
        run_id=run_id, batch_identifier="candles")
    context.validation_results_store.set(key, result)
    context.build_data_docs(site_names=["arena"])
    return directory / "index.html"


_LOCK = threading.Lock()  # one shared context; validations run one at a time


def _new_context() -> Any:
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return context


@lru_cache(maxsize=1)
def _batch_definition() -> Any:
    asset = _new_context().data_sources.add_pandas("arena").add_dataframe_asset("candles")
    return asset.add_batch_definition_whole_dataframe("prepared candles")


def _run_suite(frame: pd.DataFrame, config: ValidationConfig) -> Any:
    from arena.data.validation.expectations.candles import candle_suite

    with _LOCK:
        batch = _batch_definition().get_batch(batch_parameters={"dataframe": frame})
        return batch.validate(candle_suite(config), result_format={
            "result_format": "COMPLETE", "unexpected_index_column_names": [cs.ROW_ID],
            "partial_unexpected_count": 20})


def _unexpected_rows(ge_result: Any) -> tuple[dict[str, set[int]], list[CheckResult]]:
    """Per check: the unexpected row ids; plus a failed result for any expectation that could
    not be evaluated (so an error never reads as a pass)."""
    failures: dict[str, set[int]] = {}
    errors: list[CheckResult] = []
    for res in ge_result.results:
        meta = res.expectation_config.meta or {}
        check, problem = meta.get("check", "suite"), meta.get("problem", "failed")
        info = res.exception_info or {}
        raised = [i for i in ([info] if "raised_exception" in info else info.values())
                  if isinstance(i, dict) and i.get("raised_exception")]
        rows = (res.result or {}).get("unexpected_index_list") or []
        if raised or (not res.success and not rows):
            why = raised[0].get("exception_message") if raised else "failed without naming rows"
            kind = res.expectation_config.type
            errors.append(CheckResult("*", "*", check, False, {"expectation": kind},
                                      f"{kind} ({problem}) could not be evaluated: {why}"))
            continue
        failures.setdefault(check, set()).update(int(row[cs.ROW_ID]) for row in rows)
    return failures, errors


__all__ = ["CheckResult", "UnusableInputError", "ValidationConfig", "ValidationReport", "Window",
           "build_data_docs", "load_price_file", "validate_bars", "validate_file"]
