"""Candle validation: the candle suite checked over every series of an ingest at once.

``validate_bars`` takes all bars of an ingest (every symbol and interval concatenated), computes
each series' statistics as columns (:mod:`arena.data.validation.stats`), checks every expectation
of the suite (:mod:`arena.data.validation.suite`, declared once; ``expectations/candles.py``
builds the Great Expectations suite from the same declarations) over that one frame with NumPy,
and reports one :class:`CheckResult` per (symbol, interval, check) with a sentence naming the
problem. ``great_expectations=True`` runs the Great Expectations suite over the same frame too
(5-6 s to import, ~75 ms a run): a row either engine rejects fails, and a disagreement between
them is a failure of its own. Data Docs render any report, whichever engine checked it
(:func:`build_data_docs`). Great Expectations is imported on first use, never at import.

A batch of more than ``chunk_rows`` rows is checked a group of series at a time, after the
market's move at every bar has been computed over the whole batch (the only statistic that
crosses series): the report is the one of a single pass, and the memory is that of a group.

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
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from arena.core.sessions import NYSE, utc
from arena.data.price_files import UnusableInputError, load_price_file, read_price_file
from arena.data.validation import stats as cs
from arena.data.validation.config import ValidationConfig, Window
from arena.data.validation.html import write_pages
from arena.data.validation.messages import describe
from arena.data.validation.suite import (
    PARTIAL_UNEXPECTED,
    SUITE_NAME,
    Expectation,
    Outcome,
    candle_expectations,
    evaluate,
)

_log = logging.getLogger(__name__)
NUMPY = "numpy"  # the engine of every run (ValidationReport.engine)


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
class ExpectationResult:
    """One expectation of the suite over a run's frame, as Data Docs show it: its declaration,
    how many rows it judged (``element_count``; ``missing_count`` of them null, left out), how
    many it rejected and the values of the first of those (JSON-ready)."""

    expectation: Expectation
    success: bool
    element_count: int
    missing_count: int
    unexpected_count: int
    partial_unexpected_list: tuple[Any, ...] = ()

    def result(self) -> dict[str, Any]:
        """The expectation's result as Great Expectations reports it (format ``SUMMARY``)."""
        elements, unexpected = self.element_count, self.unexpected_count
        nonnull = elements - self.missing_count
        total = unexpected / elements * 100 if elements else None
        nonmissing = unexpected / nonnull * 100 if elements and nonnull else None
        values = list(self.partial_unexpected_list)
        out: dict[str, Any] = {
            "element_count": elements, "unexpected_count": unexpected,
            "unexpected_percent": nonmissing, "partial_unexpected_list": values,
            "missing_count": self.missing_count,
            "missing_percent": self.missing_count / elements * 100 if elements else None,
            "unexpected_percent_total": total, "unexpected_percent_nonmissing": nonmissing}
        keys = [tuple(v.values()) if isinstance(v, dict) else v for v in values]
        with suppress(TypeError):  # values that do not order (a null among numbers): no counts
            out["partial_unexpected_counts"] = [
                {"value": key, "count": n} for key, n in sorted(
                    Counter(keys).most_common(PARTIAL_UNEXPECTED), key=lambda x: (-x[1], x[0]))]
        return out

    def to_dict(self) -> dict[str, Any]:
        e = self.expectation
        return {"type": e.type, "kwargs": dict(e.kwargs), "check": e.check,
                "problem": e.problem, "description": e.description, "bars_only": e.bars_only,
                "success": self.success, "element_count": self.element_count,
                "missing_count": self.missing_count, "unexpected_count": self.unexpected_count,
                "partial_unexpected_list": list(self.partial_unexpected_list)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExpectationResult:
        """A result stored by :meth:`to_dict` (a run's ``candle_validation.json``)."""
        kwargs = {k: tuple(v) if k == "column_list" else v for k, v in data["kwargs"].items()}
        e = Expectation(data["type"], kwargs, data["check"], data["problem"],
                        data["description"], bool(data.get("bars_only")))
        return cls(e, bool(data["success"]), int(data["element_count"]),
                   int(data["missing_count"]), int(data["unexpected_count"]),
                   tuple(data.get("partial_unexpected_list") or ()))


@dataclass(frozen=True)
class ValidationReport:
    """The outcome of one validation run. ``expectations``: each expectation of the suite over
    the run's frame (what Data Docs show); ``engine``: what checked them (``numpy``, or
    ``numpy+great_expectations`` when Great Expectations ran too: ``ge_result`` is then its
    raw result)."""

    success: bool
    results: tuple[CheckResult, ...]
    as_of: pd.Timestamp | None = None
    bars: int = 0
    seconds: float = 0.0
    expectations: tuple[ExpectationResult, ...] = field(default=(), compare=False)
    engine: str = NUMPY
    ge_result: Any = field(default=None, repr=False, hash=False, compare=False)

    @property
    def statistics(self) -> dict[str, Any]:
        """The suite's statistics, as Great Expectations counts them."""
        n = len(self.expectations)
        ok = sum(r.success for r in self.expectations)
        return {"evaluated_expectations": n, "successful_expectations": ok,
                "unsuccessful_expectations": n - ok,
                "success_percent": ok / n * 100 if n else None}

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
            "suite": SUITE_NAME, "success": self.success,
            "as_of": None if self.as_of is None else self.as_of.isoformat(),
            "bars": self.bars, "series": len(series), "checks": len(self.results),
            "failed": len(self.failed()), "seconds": round(self.seconds, 4),
            # the suite's statistics (the suite is the Great Expectations one, whichever engine
            # checked it) and the engine
            "great_expectations": {**self.statistics, "engine": self.engine},
            "expectations": [r.to_dict() for r in self.expectations],
            "results": [{"symbol": r.symbol, "interval": r.interval, "check": r.check,
                         "success": r.success, "suspect": r.suspect, "observed": r.observed,
                         "message": r.message}
                        for r in self.results],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ValidationReport:
        """A report stored by :meth:`write` (its ``candle_validation.json``)."""
        as_of = None if data.get("as_of") is None else pd.Timestamp(data["as_of"])
        results = tuple(CheckResult(r["symbol"], r["interval"], r["check"], bool(r["success"]),
                                    dict(r.get("observed") or {}), r.get("message", ""),
                                    bool(r.get("suspect"))) for r in data.get("results", ()))
        return cls(bool(data["success"]), results, as_of, int(data.get("bars", 0)),
                   float(data.get("seconds", 0.0)),
                   tuple(ExpectationResult.from_dict(e) for e in data.get("expectations", ())),
                   (data.get("great_expectations") or {}).get("engine", NUMPY))

    def write(self, directory: str | os.PathLike[str], name: str = "candle_validation.json") -> Path:
        """Store the JSON result in ``directory`` (atomically) and return its path.

        ``directory`` is ``<validation root>/<run id>``: the run's HTML page and summary are
        written beside the JSON and the index of the root is rebuilt
        (:func:`arena.data.validation.html.write_pages`). A page that cannot be written is
        logged, never raised: the stored result is what the run needs."""
        target = Path(directory) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        # compact: Python's encoder writes an indented result several times slower (the
        # run's page is what people read)
        text = json.dumps(self.to_dict(), default=str, separators=(",", ":"))
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
                  market: Mapping[tuple[str, str], pd.Series] | None = None,
                  great_expectations: bool = False,
                  moves: tuple[np.ndarray, np.ndarray] | None = None) -> ValidationReport:
    """Validate every series of ``bars`` (columns ``symbol``, ``interval`` + the bar columns)
    against what ``windows`` asked for: the suite checked once over the batch. ``as_of`` (the
    ingest's "now") judges staleness and completeness; ``None`` skips both (they pass).
    ``moves``: the market's move at each row, from a larger batch (see
    :func:`validate_series`).

    ``market``: for a batch without its benchmark (one series, say), the benchmark's closes per
    (calendar, interval), indexed by bar open time (e.g. SPY's bars from the lake): the splice
    check then judges moves net of it. Without it such a batch has no market and every move is
    judged on its own. ``great_expectations``: run the Great Expectations suite over the same
    frame too (see the module docstring)."""
    started = time.perf_counter()
    as_of = None if as_of is None else utc(as_of)
    frame, stats = cs.prepare(bars, windows, as_of=as_of, config=config, market=market,
                              moves=moves)
    outcomes = evaluate(frame, candle_expectations(config))
    failures: dict[str, set[int]] = {}
    for outcome in outcomes:
        failures.setdefault(outcome.expectation.check, set()).update(
            int(i) for i in outcome.unexpected)
    errors: list[CheckResult] = []
    ge_result, engine = None, NUMPY
    if great_expectations:
        ge_result, engine = _run_suite(frame, config), f"{NUMPY}+great_expectations"
        ge_failures, errors = _unexpected_rows(ge_result)
        errors += _disagreements(outcomes, ge_result)
        for check, rows in ge_failures.items():
            failures.setdefault(check, set()).update(rows)
    results = errors + _check_results(frame, stats, windows, failures, config)
    return ValidationReport(
        success=all(r.success for r in results), results=tuple(results), as_of=as_of,
        bars=int(frame[cs.IS_BAR].sum()), seconds=time.perf_counter() - started,
        expectations=tuple(_expectation_result(frame, o) for o in outcomes), engine=engine,
        ge_result=ge_result)


# a batch of up to SINGLE_PASS_ROWS bars (an hourly run with its context) is prepared at once,
# a larger one CHUNK_ROWS at a time: preparing a bar peaks at ~730 bytes (its 33 columns and the
# statistics' intermediates)
SINGLE_PASS_ROWS = 150_000
CHUNK_ROWS = 50_000


def validate_series(series: Sequence[tuple[Window, pd.DataFrame]], *,
                    as_of: pd.Timestamp | None, config: ValidationConfig = ValidationConfig(),
                    market: Mapping[tuple[str, str], pd.Series] | None = None,
                    great_expectations: bool = False, chunk_rows: int = CHUNK_ROWS,
                    single_pass_rows: int = SINGLE_PASS_ROWS) -> ValidationReport:
    """:func:`validate_bars` of the series laid end to end (each frame: its window's bar
    columns): at once up to ``single_pass_rows`` bars, else a group of consecutive series of at
    most ``chunk_rows`` bars at a time (a longer series alone) once the market's move at every
    bar has been computed over the whole batch
    (:func:`arena.data.validation.stats.series_market`): the results are those of one pass over
    the batch, the memory that of a group (a first ingest of years of 15-minute bars). A
    report of several groups carries no Great Expectations result (its Data Docs render the
    expectations' results)."""
    windows = [w for w, _ in series]
    if sum(len(f) for _, f in series) <= single_pass_rows:
        return validate_bars(_end_to_end(series), windows, as_of=as_of, config=config,
                             market=market, great_expectations=great_expectations)
    started = time.perf_counter()
    moves = cs.series_market(series, config, market)
    reports, group, rows = [], [], 0
    for i, (_, bars) in enumerate([*series, (None, None)]):
        if group and (bars is None or rows + len(bars) > chunk_rows):
            reports.append(validate_bars(
                _end_to_end([series[j] for j in group]), [windows[j] for j in group],
                as_of=as_of, config=config, market=market, great_expectations=great_expectations,
                moves=(np.concatenate([moves[j][0] for j in group]),
                       np.concatenate([moves[j][1] for j in group]))))
            group, rows = [], 0
        if bars is not None:
            group.append(i)
            rows += len(bars)
    return _merged(reports, time.perf_counter() - started)


def _end_to_end(series: Sequence[tuple[Window, pd.DataFrame]]) -> pd.DataFrame:
    """One frame of the series' bars with ``symbol`` and ``interval`` columns."""
    full = [(w, bars) for w, bars in series if not bars.empty]
    if not full:
        return pd.DataFrame()
    frame = pd.concat([bars for _, bars in full], ignore_index=True)
    lengths = [len(bars) for _, bars in full]
    for column in ("symbol", "interval"):  # set once, not per series: a column per frame costs
        values = np.array([getattr(w, column) for w, _ in full], dtype=object)
        frame[column] = np.repeat(values, lengths)
    return frame


def _merged(reports: Sequence[ValidationReport], seconds: float) -> ValidationReport:
    """One report of the reports of consecutive groups of a batch's series."""
    first = reports[0]
    expectations = tuple(
        ExpectationResult(parts[0].expectation, all(p.success for p in parts),
                          sum(p.element_count for p in parts), sum(p.missing_count for p in parts),
                          sum(p.unexpected_count for p in parts),
                          tuple(v for p in parts for v in p.partial_unexpected_list
                                )[:PARTIAL_UNEXPECTED])
        for parts in zip(*(r.expectations for r in reports), strict=True))
    return ValidationReport(
        success=all(r.success for r in reports),
        results=tuple(x for r in reports for x in r.results), as_of=first.as_of,
        bars=sum(r.bars for r in reports), seconds=seconds, expectations=expectations,
        engine=first.engine)


def _check_results(frame: pd.DataFrame, stats: Mapping[tuple[str, str], cs.SeriesStats],
                   windows: Sequence[Window], failures: Mapping[str, set[int]],
                   config: ValidationConfig) -> list[CheckResult]:
    """One result per (window, check), in the windows' order; ``failures``: per check, the
    rows (positions in ``frame``) some expectation of it rejected."""
    by_key: dict[tuple[str, str], dict[str, list[int]]] = {}
    symbols, intervals = frame["symbol"].to_numpy(), frame["interval"].to_numpy()
    for check, row_ids in failures.items():
        for rid in row_ids:
            by_key.setdefault((symbols[rid], intervals[rid]), {}).setdefault(check, []).append(rid)
    positions = frame.groupby(["symbol", "interval"], sort=False).indices if by_key else {}
    no_rows = frame.iloc[:0]
    results = []
    for window in windows:
        key = (window.symbol, window.interval)
        failed = by_key.get(key, {})
        rows = frame.iloc[positions[key]] if failed else no_rows  # only failures need the rows
        for check in cs.CHECKS:
            failing = frame.iloc[sorted(failed[check])] if check in failed else no_rows
            observed, message = describe(check, stats[key], rows, failing, config)
            results.append(CheckResult(key[0], key[1], check, failing.empty, observed, message,
                                       suspect=bool(observed.get("suspect"))))
    return results


def _expectation_result(frame: pd.DataFrame, outcome: Outcome) -> ExpectationResult:
    columns = outcome.expectation.columns
    first = frame[columns].iloc[outcome.unexpected[:PARTIAL_UNEXPECTED]]
    if len(columns) == 1:
        values = tuple(_json_value(v) for v in first[columns[0]])
    else:
        values = tuple({c: _json_value(v) for c, v in zip(columns, row, strict=True)}
                       for row in first.itertuples(index=False))
    return ExpectationResult(outcome.expectation, outcome.success, outcome.elements,
                             outcome.missing, len(outcome.unexpected), values)


def _json_value(value: Any) -> Any:
    """A cell as the JSON value Data Docs show: a time as text, a null as None."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if isinstance(value, pd.Timestamp):
        return str(value)
    return value.item() if isinstance(value, np.generic) else value


def _disagreements(outcomes: Sequence[Outcome], ge_result: Any) -> list[CheckResult]:
    """A failed result for every expectation whose unexpected rows Great Expectations and the
    NumPy evaluation do not agree on (an evaluation that drifted from the suite)."""
    numpy_rows = {(o.expectation.type, o.expectation.check, o.expectation.problem):
                  {int(i) for i in o.unexpected} for o in outcomes}
    out = []
    for res in ge_result.results:
        meta = res.expectation_config.meta or {}
        key = (res.expectation_config.type, meta.get("check"), meta.get("problem"))
        rows = {int(r[cs.ROW_ID]) for r in (res.result or {}).get("unexpected_index_list") or []}
        mine = numpy_rows.pop(key, None)
        if mine is None or mine != rows:
            differ = sorted(rows ^ (mine or set()))
            out.append(CheckResult("*", "*", str(meta.get("check", "suite")), False,
                                   {"expectation": key[0], "rows": differ[:20]},
                                   f"{key[0]} ({meta.get('problem')}): Great Expectations and "
                                   f"the NumPy evaluation disagree on {len(differ)} row(s)"))
    for key in numpy_rows:  # declared, but not in Great Expectations' result
        out.append(CheckResult("*", "*", key[1], False, {"expectation": key[0]},
                               f"{key[0]} ({key[2]}): not evaluated by Great Expectations"))
    return out


def validate_file(path: str | os.PathLike[str], *, interval: str = "1d", calendar: str = NYSE,
                  as_of: pd.Timestamp | None = None, symbol: str | None = None,
                  config: ValidationConfig = ValidationConfig(),
                  market: Mapping[tuple[str, str], pd.Series] | None = None,
                  great_expectations: bool = False) -> ValidationReport:
    """Validate one price file as one series (``arena validate PATH``). ``as_of=None`` judges
    staleness against the file's own last bar, so a historical file passes. Raises
    :class:`UnusableInputError` when the file is not price data."""
    bars, label = read_price_file(path, symbol=symbol)
    frame = bars.assign(symbol=label, interval=interval)
    return validate_bars(frame, [Window(label, interval, calendar)], as_of=as_of, config=config,
                         market=market, great_expectations=great_expectations)


def build_data_docs(report: ValidationReport, directory: str | os.PathLike[str], *,
                    run_name: str = "ingest") -> Path:
    """Render the report as Data Docs (Great Expectations' static HTML) in ``directory`` and
    return the path of ``index.html``: its Great Expectations result when it has one, else its
    expectations' results as Great Expectations reports them. Imports Great Expectations
    (5-6 s, once per process): an ingest builds them once a day and for every run that fails
    (see :mod:`arena.data.ingest`). Earlier runs already in ``directory`` stay listed."""
    if report.ge_result is None and not report.expectations:
        raise ValueError("this report carries no expectation results")
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
    result = report.ge_result if report.ge_result is not None else _suite_result(report)
    result.meta["run_id"] = run_id
    key = ValidationResultIdentifier(
        expectation_suite_identifier=ExpectationSuiteIdentifier(name=result.suite_name),
        run_id=run_id, batch_identifier="candles")
    context.validation_results_store.set(key, result)
    context.build_data_docs(site_names=["arena"])
    return directory / "index.html"


def _suite_result(report: ValidationReport) -> Any:
    """The report's expectation results as a Great Expectations suite result."""
    import great_expectations as gx
    from great_expectations.core import (
        ExpectationSuiteValidationResult,
        ExpectationValidationResult,
    )

    from arena.data.validation.expectations.candles import expectation

    results = [ExpectationValidationResult(
        success=r.success, expectation_config=expectation(r.expectation).configuration,
        result=r.result(), exception_info={"raised_exception": False, "exception_message": None,
                                           "exception_traceback": None})
        for r in report.expectations]
    return ExpectationSuiteValidationResult(
        success=all(r.success for r in report.expectations), results=results,
        suite_name=SUITE_NAME, statistics=report.statistics,
        meta={"great_expectations_version": gx.__version__, "engine": report.engine,
              "bars": report.bars})


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
    """The Great Expectations suite over the prepared frame (result format ``COMPLETE``)."""
    from arena.data.validation.expectations.candles import candle_suite

    with _LOCK:
        batch = _batch_definition().get_batch(batch_parameters={"dataframe": frame})
        return batch.validate(candle_suite(config), result_format={
            "result_format": "COMPLETE", "unexpected_index_column_names": [cs.ROW_ID],
            "partial_unexpected_count": PARTIAL_UNEXPECTED})


def _unexpected_rows(ge_result: Any) -> tuple[dict[str, set[int]], list[CheckResult]]:
    """Per check: the unexpected row ids of a Great Expectations result; plus a failed result
    for any expectation that could not be evaluated (so an error never reads as a pass)."""
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


__all__ = ["CheckResult", "ExpectationResult", "UnusableInputError", "ValidationConfig",
           "ValidationReport", "Window", "build_data_docs", "load_price_file", "validate_bars",
           "validate_file", "validate_series"]
