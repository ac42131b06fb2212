"""A cycle's market checks the bars it uses (:func:`arena.market.asof.scan_closed_bars`): a
partition missing, unreadable, or holding bars no validated series has (random bytes that still
decode) makes its asset damaged - named in the briefing, left out of the screen, refused by the
engine - never a blank row or a different screen without a word."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from arena.data.errors import DamagedFile
from arena.data.lake import MISSING_PROBLEM, Lake, PartitionKey
from arena.engine.contract import parse_answer
from arena.engine.rules import ARENA_RULES, STALE_PRICE, check
from arena.market.asof import cycle_prices
from arena.market.briefing import build_market, market_damage
from tests.data.published import forget_digests, remove_partitions
from tests.market_lakes import FRI, PROVIDER, book_state, flat_prompt, full_lake_copy

SOL_1D = PartitionKey(PROVIDER, "1d", "SOL")
SOL_15M = PartitionKey(PROVIDER, "15m", "SOL")


@pytest.fixture
def lake(tmp_path, tmp_path_factory, universe) -> Lake:
    return full_lake_copy(tmp_path_factory, universe, tmp_path / "lake")


def _insane(lake: Lake, key: PartitionKey, row: int, **values: float) -> None:
    """Rewrite one bar of a stored partition with ``values`` (the file stays readable), in a
    lake published before digests were recorded (else the digest names the change first:
    ``tests/market/test_bar_digests.py``)."""
    forget_digests(lake, [key])
    path = lake.path(key)
    table = pq.ParquetFile(path).read()
    for name, value in values.items():
        column = table.column(name).to_numpy().copy()
        column[row] = value
        table = table.set_column(table.schema.get_field_index(name), name, pa.array(column))
    pq.write_table(table, path)


@pytest.mark.parametrize("recorded", [True, False])
def test_a_deleted_daily_partition_is_named_not_a_blank_row(lake, universe, recorded):
    healthy = build_market(lake, PROVIDER, universe, FRI)
    assert healthy.damaged == {}
    if recorded:  # its publication recorded it: missing
        lake.path(SOL_1D).unlink()
        problem = f"{PROVIDER}/1d/SOL is damaged: {MISSING_PROBLEM}"
    else:  # a lake that never held it (no record names it)
        remove_partitions(lake, [SOL_1D])
        problem = f"the lake holds no {PROVIDER}/1d/SOL bars"
    market = build_market(lake, PROVIDER, universe, FRI)
    assert market.damaged == {"SOL": problem}
    assert "SOL" in market.untradeable and "SOL" not in market.screen.selected
    prompt = flat_prompt(market)
    assert f"UNUSABLE market data (treated as stale): SOL ({problem})" in prompt
    assert market_damage(lake, PROVIDER, universe, FRI) == market.damaged


@pytest.mark.parametrize("key, values, problem", [
    (SOL_1D, {"low": -6e-33}, "has low -6e-33 (prices are positive)"),
    (SOL_1D, {"high": 3e79}, "which no bar has"),
    (SOL_15M, {"close": float("nan")}, "has close nan (prices are positive)"),
])
def test_bars_no_validated_series_has_are_damage(lake, universe, key, values, problem):
    row = len(lake.read_bars(key)) - len(lake.read_bars(key, start=FRI)) - 3  # before the cycle
    assert row > 0
    _insane(lake, key, row, **values)
    market = build_market(lake, PROVIDER, universe, FRI)
    assert set(market.damaged) == {"SOL"}
    assert market.damaged["SOL"].startswith(f"{key} is damaged: the bar at ")
    assert problem in market.damaged["SOL"]
    assert "SOL" not in market.screen.selected
    if key == SOL_15M:
        assert "SOL" not in market.prices  # its price is not used, not a plausible number
        with pytest.raises(DamagedFile, match=re.escape(problem)):  # a reader with no damage map
            cycle_prices(lake, PROVIDER, universe, [FRI])
    with pytest.raises(DamagedFile, match=re.escape(problem)):  # the monitor's read, the ingest's
        lake.read_bars(key)


def test_random_bytes_inside_a_partition_are_named(lake, universe):
    path = lake.path(SOL_1D)
    body = bytearray(path.read_bytes())
    size = min(4096, len(body) // 2)
    start = len(body) // 4
    body[start:start + size] = np.random.default_rng(3).integers(0, 256, size,
                                                                 dtype=np.uint8).tobytes()
    path.write_bytes(bytes(body))
    market = build_market(lake, PROVIDER, universe, FRI)
    assert set(market.damaged) == {"SOL"}
    assert market.damaged["SOL"].startswith(f"{SOL_1D} ")  # the partition, as the prompt says
    assert str(lake.root) not in market.damaged["SOL"]  # never this machine's path
    assert str(lake.root) not in flat_prompt(market)
    assert "SOL" not in market.screen.selected


def test_the_engine_refuses_to_trade_a_damaged_asset(lake, universe):
    lake.path(SOL_1D).unlink()
    market = build_market(lake, PROVIDER, universe, FRI)
    assert "SOL" in market.prices  # its 15-minute bars are whole: the price still values a book
    state = replace(book_state(market.prices, (), FRI), stale=market.untradeable)
    [decision] = parse_answer('{"decisions": [{"action": "open_long", "symbol": "SOL", '
                              '"percent_of_equity": 10, "invalidation_price": 1, '
                              '"confidence": 0.8, "thesis": "t", "invalidation": "i"}]}').answer.decisions
    verdict = check(0, decision, state, market.prices, universe, ARENA_RULES, {})
    assert verdict.code == STALE_PRICE


def test_the_daily_report_names_a_damaged_asset(lake, universe, tmp_path):
    from arena.engine.outcomes import CycleOutcome
    from arena.ledger.records import CycleRecord
    from arena.ledger.store import Ledger
    from arena.reporting.daily import daily_report

    ledger = Ledger(tmp_path / "book")
    ledger.record_cycle(FRI, "alpha", lambda: CycleRecord(
        "alpha", FRI, CycleOutcome.TRADED.value, responses={"answer": "{}"},
        equity={"cash": 10_000.0, "equity": 10_000.0, "fees_paid": 0.0, "realised_pnl": 0.0,
                "positions": 0}))
    assert "Unusable market data" not in daily_report(ledger, lake, PROVIDER, universe, FRI)
    lake.path(SOL_1D).unlink()
    _insane(lake, SOL_15M, len(lake.read_bars(SOL_15M)) - 1, close=-1.0)
    text = daily_report(ledger, lake, PROVIDER, universe, FRI)
    assert "## Unusable market data" in text
    assert f"* SOL: {PROVIDER}/1d/SOL is damaged: {MISSING_PROBLEM}" in text


def test_a_bar_consistent_in_itself_but_far_from_its_neighbours_is_damage(lake, universe):
    """All four prices of one daily bar scaled 1000x (high and low still bracket them)."""
    row = len(lake.read_bars(SOL_1D)) - len(lake.read_bars(SOL_1D, start=FRI)) - 3
    bar = lake.read_bars(SOL_1D).iloc[row]
    _insane(lake, SOL_1D, row, **{c: float(bar[c]) * 1000 for c in ("open", "high", "low",
                                                                     "close")})
    market = build_market(lake, PROVIDER, universe, FRI)
    assert "a move no validated series makes" in market.damaged["SOL"]
