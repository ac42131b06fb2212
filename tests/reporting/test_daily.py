"""The daily report reads only its own cycle's records (and each contestant's previous equity
snapshot), never a whole ledger table: its cost does not grow with the season."""

from __future__ import annotations

import pandas as pd
import pytest

from arena.engine.outcomes import CycleOutcome
from arena.engine.portfolio import LONG, Fill
from arena.ledger.records import CycleRecord, MonitorRecord
from arena.ledger.store import Ledger
from arena.reporting.daily import daily_report
from tests.market_lakes import FRI, PROVIDER, market_lakes

DAY = pd.Timedelta(days=1)
TRADED = CycleOutcome.TRADED


def _equity(value: float | None) -> dict[str, float | int | None]:
    return {"cash": 10_000.0, "equity": value, "fees_paid": 0.0, "realised_pnl": 0.0, "positions": 0}


def _fill(at: pd.Timestamp, symbol: str, quantity: float, price: float, **kw) -> Fill:
    return Fill(at, symbol, LONG, "open", quantity, price, 0.0, **kw)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory, universe) -> tuple[Ledger, object]:
    lake = market_lakes(tmp_path_factory, universe).full
    ledger = Ledger(tmp_path_factory.mktemp("daily") / "lake")

    def record(name: str, at: pd.Timestamp, equity: float | str | None, fills=()) -> None:
        ledger.record_cycle(at, name, lambda: CycleRecord(
            name, at, TRADED, responses={"answer": "{}"},
            fills={"answer": list(fills)} if fills else {},
            equity={} if equity == "none" else _equity(equity)))

    ledger.record_monitor(FRI - DAY, FRI, "beta", lambda: MonitorRecord(
        "beta", FRI - DAY, FRI, fills=(Fill(FRI - pd.Timedelta(hours=2), "ETH", LONG, "close",
                                            1.0, 90.0, 0.0, -10.0, automatic=True),)))
    record("alpha", FRI - 3 * DAY, 10_100.0)
    record("alpha", FRI - 2 * DAY, 10_200.0)
    record("alpha", FRI - DAY, "none")  # no snapshot: the previous one is two cycles back
    record("alpha", FRI, 10_350.0, [_fill(FRI, "ETH", 1.0, 100.0), _fill(FRI, "BTC", 2.0, 50.0)])
    record("beta", FRI, 9_900.0, [_fill(FRI, "SOL", 4.0, 25.0)])  # first record: vs $10,000
    record("gamma", FRI - DAY, 10_000.0)
    record("gamma", FRI, None)  # unknown equity
    record("late", FRI + DAY, 10_000.0)  # recorded only after the cycle
    return ledger, lake


def test_daily_report_reads_records_not_tables(ledger, universe, monkeypatch):
    book, lake = ledger

    def whole_table(*args, **kwargs):
        raise AssertionError("the daily report read a whole ledger table")

    monkeypatch.setattr(Ledger, "table", whole_table)
    text = daily_report(book, lake, PROVIDER, universe, FRI)
    lines = text.splitlines()
    rows = [ln for ln in lines if ln.startswith("| ") and "contestant" not in ln]
    assert [r.split("|")[2].strip() for r in rows] == ["alpha", "beta", "gamma"]
    assert "+150.00" in rows[0] and "10,350.00" in rows[0]  # against 10,200 (two cycles back)
    assert "-100.00" in rows[1]  # a first record: against the starting $10,000
    assert rows[2].count("–") == 2  # unknown equity, no change
    assert "No record at this cycle: late (not playing yet)." in text
    later = daily_report(book, lake, PROVIDER, universe, FRI + DAY)  # only "late" plays then
    assert "alpha (last played" in later and "retired, or its model could not be reached" in later
    trades = [ln for ln in lines if ln.startswith("* ") and "@" in ln]
    assert [t.split()[4] for t in trades] == ["ETH", "BTC", "SOL"]  # by notional, ties in key order
    assert any("automatic close of long ETH at 90.00" in ln and "realised -10.00" in ln
               for ln in lines)
