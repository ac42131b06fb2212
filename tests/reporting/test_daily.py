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



def test_the_standings_rank_the_contestants_and_show_the_rulers_apart(ledger, tmp_path,
                                                                       universe):
    """The house rules (told by their recorded calls, ``house/<strategy>``: a forfeit records
    none, so its previous record's tell) follow the ranked contestants under their own heading,
    not numbered; the leader and the laggard are contestants, though a ruler did better than
    both. A day on which only house rules have a record says there is no contestant."""
    from arena.core.types import CallRecord

    _, lake = ledger
    book = Ledger(tmp_path / "lake")

    def record(name: str, at: pd.Timestamp, equity: float, model: str | None) -> None:
        calls = () if model is None else (CallRecord(name, "decision", model, 0, 0, 0.0, 0.0),)
        book.record_cycle(at, name, lambda: CycleRecord(
            name, at, TRADED, responses={"answer": "{}"}, calls=calls, equity=_equity(equity)))

    record("momentum", FRI - DAY, 9_900.0, "house/momentum")
    record("alpha", FRI, 10_100.0, "openai/alpha-model")
    record("beta", FRI, 9_950.0, None)  # never answered: no call, a contestant all the same
    record("equal-weight", FRI, 10_600.0, "house/equal_weight")
    record("momentum", FRI, 9_800.0, None)
    record("equal-weight", FRI + DAY, 10_650.0, "house/equal_weight")
    text = daily_report(book, lake, PROVIDER, universe, FRI)
    standings = text.split("## Standings\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [[c.strip() for c in row.split("|")[1:-1]] for row in standings[:1] + standings[2:]] \
        == [["#", "contestant", "equity", "change since its previous cycle", "outcome"],
            ["1", "alpha", "10,100.00", "+100.00", "traded"],
            ["2", "beta", "9,950.00", "-50.00", "traded"]]
    rulers = text.split("## Rulers\n\n", 1)[1].split("\n\n## ", 1)[0].splitlines()
    assert rulers[0] == ("The house rules, playing beside the contestants under the same rules: "
                         "the yardstick, not ranked.")
    assert [[c.strip() for c in row.split("|")[1:-1]] for row in rulers[2:3] + rulers[4:]] == [
        ["ruler", "equity", "change since its previous cycle", "outcome"],
        ["equal-weight", "10,600.00", "+600.00", "traded"],
        ["momentum", "9,800.00", "-100.00", "traded"]]
    why = text.split("## Who leads and lags, and why\n\n", 1)[1].split("\n\n", 1)[0]
    assert [line.split(":")[0] for line in why.splitlines()] == ["* **alpha** leads",
                                                                 "* **beta** lags"]
    only_rulers = daily_report(book, lake, PROVIDER, universe, FRI + DAY)
    assert "No contestant has a record at this cycle: only the house rules played, as rulers." \
        in only_rulers
    assert "No contestant has a record at this cycle, so none leads or lags." in only_rulers
    assert "| equal-weight |" in only_rulers and "**equal-weight**" not in only_rulers
