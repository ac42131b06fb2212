"""The candle suite checked with NumPy is the suite Great Expectations checks: on every case of
every check (passing and failing, with nulls, infinities, missing times and empty series), Great
Expectations itself, run over the same prepared frame, rejects exactly the rows the NumPy
evaluation rejects, expectation by expectation; and the results Data Docs render from the NumPy
evaluation are the ones Great Expectations reports."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import CRYPTO, NYSE, expected_bars
from arena.data.validation import stats as cs
from arena.data.validation.checks import (
    ValidationConfig,
    ValidationReport,
    Window,
    _run_suite,
    build_data_docs,
    validate_bars,
)
from arena.data.validation.suite import candle_expectations, evaluate
from tests.data.test_validation import (
    ETH_AS_OF,
    ETH_TIMES,
    THANKSGIVING,
    WEEK_AS_OF,
    basket,
    make_bars,
    scale_prices,
    ts,
)

CONFIG = ValidationConfig()


def _eth(**kw) -> pd.DataFrame:
    return make_bars(ETH_TIMES, symbol=kw.pop("symbol", "ETH"), interval="1h", **kw)


def _broken(symbol: str, row: int, column: str, value: float) -> pd.DataFrame:
    bars = _eth(symbol=symbol)
    bars.loc[row, column] = value
    return bars


def _cases() -> dict[str, tuple[pd.DataFrame, list[Window], pd.Timestamp | None]]:
    eth = _eth()
    aapl = make_bars(THANKSGIVING, symbol="AAPL", interval="1h", seed=1)
    late = aapl.iloc[[-1]].assign(timestamp=ts("2025-11-28 18:30"))
    window = {"start": ETH_TIMES[0], "end": ETH_TIMES[-1] + pd.Timedelta(hours=1)}
    ohlc = {f"X{i}": _broken(f"X{i}", 5 + i, column, value) for i, (column, value) in enumerate([
        ("low", 1e9), ("high", 1.0), ("close", np.nan), ("open", -5.0), ("high", np.inf),
        ("volume", -1.0), ("volume", np.inf), ("open", np.nan)])}
    no_time = eth.copy()
    no_time.loc[[7, 9], "timestamp"] = pd.NaT  # two bars without a time in one series
    swapped = eth.iloc[[*range(30), 31, 30, *range(32, 72)]].reset_index(drop=True)
    shifted = eth.copy()
    shifted.loc[4, "timestamp"] = ts("2025-03-01 04:30")
    duplicate = pd.concat([eth.iloc[:20], eth.iloc[[19]], eth.iloc[20:]], ignore_index=True)
    newest = scale_prices(eth.assign(volume=100.0), slice(len(eth) - 1, None), 1.35)
    market, market_windows = basket(5, 80, 0.8, shocked=1)
    return {
        "clean batch": (pd.concat([eth, aapl]), [Window("ETH", "1h", CRYPTO),
                                                 Window("AAPL", "1h", NYSE)], WEEK_AS_OF),
        "missing bars": (eth.drop(index=[10, 11, 30]), [Window("ETH", "1h", CRYPTO, **window)],
                         ETH_AS_OF),
        "zero bars": (eth, [Window("ETH", "1h", CRYPTO), Window("BTC", "1h", CRYPTO,
                                                                  ETH_TIMES[0], ETH_AS_OF)],
                      ETH_AS_OF),
        "nothing at all": (pd.DataFrame(), [Window("ETH", "1h", CRYPTO, ETH_TIMES[0],
                                                   ETH_AS_OF)], ETH_AS_OF),
        "off calendar": (pd.concat([aapl, late], ignore_index=True),
                         [Window("AAPL", "1h", NYSE)], WEEK_AS_OF),
        "outside the window": (eth, [Window("ETH", "1h", CRYPTO, ETH_TIMES[0], ETH_TIMES[48])],
                               ETH_AS_OF),
        "ohlc": (pd.concat(ohlc.values(), ignore_index=True),
                 [Window(s, "1h", CRYPTO) for s in ohlc], ETH_AS_OF),
        "no time": (no_time, [Window("ETH", "1h", CRYPTO)], ETH_AS_OF),
        "duplicate": (duplicate, [Window("ETH", "1h", CRYPTO)], ETH_AS_OF),
        "out of order": (swapped, [Window("ETH", "1h", CRYPTO)], ETH_AS_OF),
        "off the grid": (shifted, [Window("ETH", "1h", CRYPTO)], ETH_AS_OF),
        "splice": (scale_prices(eth.assign(volume=100.0), slice(40, None), 1.35),
                   [Window("ETH", "1h", CRYPTO)], ETH_AS_OF),
        "split on heavy volume": (scale_prices(eth, slice(40, None), 0.5).pipe(
            lambda b: b.assign(volume=np.where(b.index == 40, 1e4, b["volume"]))),
            [Window("ETH", "1h", CRYPTO)], ETH_AS_OF),
        "suspect at the newest bar": (newest, [Window("ETH", "1h", CRYPTO)], ETH_AS_OF),
        "market": (market, market_windows, None),
        "stale": (eth, [Window("ETH", "1h", CRYPTO)], ETH_AS_OF + pd.Timedelta(hours=5)),
        "incomplete": (eth, [Window("ETH", "1h", CRYPTO)],
                       ETH_TIMES[-1] + pd.Timedelta(minutes=30)),
        "context rows": (eth, [Window("ETH", "1h", CRYPTO, judged_from=ETH_TIMES[50])],
                         ETH_AS_OF),
        "daily stocks": (make_bars(expected_bars(NYSE, "1d", "2025-09-01", "2025-11-22"),
                                   symbol="AAPL", interval="1d", sigma=0.01),
                         [Window("AAPL", "1d", NYSE)], ts("2025-11-28 23:00")),
    }


CASES = _cases()


def _ge_rows(ge_result) -> dict[tuple[str, str, str], set[int]]:
    out = {}
    for res in ge_result.results:
        meta = res.expectation_config.meta
        rows = res.result.get("unexpected_index_list") or []
        out[(res.expectation_config.type, meta["check"], meta["problem"])] = {
            int(r[cs.ROW_ID]) for r in rows}
        assert not res.exception_info.get("raised_exception"), res.exception_info
    return out


def _numpy_rows(frame: pd.DataFrame) -> dict[tuple[str, str, str], set[int]]:
    return {(o.expectation.type, o.expectation.check, o.expectation.problem):
            {int(i) for i in o.unexpected} for o in evaluate(frame, candle_expectations(CONFIG))}


def _frame(name: str) -> pd.DataFrame:
    bars, windows, as_of = CASES[name]
    return cs.prepare(bars, windows, as_of=as_of, config=CONFIG)[0]


def _hostile(frame: pd.DataFrame) -> pd.DataFrame:
    """The series columns and the grid offsets at infinities, negative zero and the thresholds'
    edges (what the frame never holds today, and Great Expectations' "between" must decide)."""
    out = frame.copy()
    first = out.index[0]
    out.loc[first, cs.SERIES_MISSING_SHARE] = np.inf
    out.loc[first, cs.SERIES_OFF_CALENDAR] = -np.inf
    out.loc[first, cs.SERIES_STALE] = CONFIG.max_stale_bars  # at the edge: allowed
    out.loc[first, cs.SERIES_INCOMPLETE] = CONFIG.max_incomplete_bars + 1e-12
    out.loc[out.index[1:4], cs.STEP_SECONDS] = [0.0, -0.0, np.inf]
    out.loc[out.index[4:7], cs.GRID_OFFSET] = [-0.0, np.inf, -1e-9]
    out.loc[out.index[7:9], cs.JUMP_SIGMAS] = [np.inf, CONFIG.splice_sigmas]
    return out


@pytest.mark.parametrize("name", [*CASES, "hostile values"])
def test_great_expectations_rejects_the_rows_numpy_rejects(name):
    frame = _hostile(_frame("clean batch")) if name == "hostile values" else _frame(name)
    expected = _ge_rows(_run_suite(frame, CONFIG))
    got = _numpy_rows(frame)
    assert got == expected
    if name not in ("clean batch", "market", "context rows", "daily stocks"):
        assert any(got.values()), "the case rejects nothing: it checks nothing"


@pytest.mark.parametrize("name", list(CASES))
def test_both_engines_give_the_same_report(name):
    bars, windows, as_of = CASES[name]
    alone = validate_bars(bars, windows, as_of=as_of)
    both = validate_bars(bars, windows, as_of=as_of, great_expectations=True)
    assert alone.engine == "numpy" and both.engine == "numpy+great_expectations"
    assert alone.results == both.results  # no disagreement, no extra failure
    assert alone.success == both.success == bool(both.ge_result.success)


def _json(value):
    if value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None  # a null, whatever its type: JSON has one
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    return str(value) if isinstance(value, pd.Timestamp) else value


@pytest.mark.parametrize("name", ["ohlc", "duplicate", "zero bars", "splice", "no time"])
def test_data_docs_results_are_great_expectations_results(name):
    bars, windows, as_of = CASES[name]
    report = validate_bars(bars, windows, as_of=as_of, great_expectations=True)
    frame = _frame(name)
    from arena.data.validation.checks import _batch_definition
    from arena.data.validation.expectations.candles import candle_suite

    summary = _batch_definition().get_batch(batch_parameters={"dataframe": frame}).validate(
        candle_suite(CONFIG), result_format={"result_format": "SUMMARY",
                                             "partial_unexpected_count": 20})
    # all but the positions of the unexpected rows in the run's frame, which mean nothing once
    # the run is over (the values name the bars)
    theirs = {(r.expectation_config.type, r.expectation_config.meta["problem"]):
              (r.success, _json({k: v for k, v in r.result.items()
                                 if k != "partial_unexpected_index_list"}))
              for r in summary.results}
    ours = {(r.expectation.type, r.expectation.problem): (r.success, _json(r.result()))
            for r in report.expectations}
    assert ours == theirs
    assert report.statistics == summary.statistics


def test_data_docs_render_a_stored_report(tmp_path):
    bars, windows, as_of = CASES["splice"]
    report = validate_bars(bars, windows, as_of=as_of)
    stored = ValidationReport.from_dict(json.loads(report.write(tmp_path / "run").read_text()))
    assert stored.results == report.results and stored.expectations == report.expectations
    index = build_data_docs(stored, tmp_path / "docs")
    pages = list((tmp_path / "docs" / "validations").rglob("*.html"))
    assert index.exists() and pages
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", pages[0].read_text()))
    assert "Evaluated Expectations 10 Successful Expectations 9" in text
    assert "No close-to-close move beyond 6 local sigmas" in text  # the declared description
    assert "1 unexpected values found" in text
