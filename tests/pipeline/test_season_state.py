"""A publication continues the season's tables from the state the previous one left, and
equals a build from scratch; whatever that state consumed that has changed since - a restated
or late bar, another schedule, player count or seed, a damaged or missing file - is said, and
the tables are computed from the season's first cycle.

Season: 12 daily cycles at 16:00 UTC from Monday 2026-03-02 (a weekend in it) on the synthetic
market: ETH, AAPL and MSFT traded, BTC and SPY benchmarks (priced, not traded)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from arena.core.sessions import daily_cycles
from arena.data.ingest import run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.providers.synthetic import SyntheticProvider
from arena.market.asof import cycle_prices
from arena.pipeline.season_state import MANIFEST, STATE_DIR, SeasonReads
from arena.pipeline.season_tables import BAND, analytics_dir, build_analytics, write_analytics
from arena.scoring.arena_luck import arena_zero_skill
from tests.conftest import ts
from tests.data.published import publish_frames

SYMBOLS = ["BTC", "ETH", "AAPL", "MSFT", "SPY"]
TIMES = daily_cycles(ts("2026-03-02"), 12)
SMALL = {"players": 100, "arena_players": 30, "seed": 3}


@pytest.fixture(scope="module")
def market(tmp_path_factory, universe):
    """The season's bars, from two weeks before its first cycle to its last."""
    lake = Lake(tmp_path_factory.mktemp("market") / "lake")
    run_ingest(SyntheticProvider(), universe.select(SYMBOLS), start=ts("2026-02-16"),
               end=TIMES[-1], lake=lake, now=TIMES[-1])
    return lake


@pytest.fixture
def season(tmp_path, market, universe):
    shutil.copytree(market.root, tmp_path / "lake")
    return Lake(tmp_path / "lake"), universe.select(SYMBOLS)


def _publish(lake, universe, n, said=None, **kw):
    built = build_analytics(lake, "synthetic", universe, TIMES[:n], progress=said,
                            **{**SMALL, **kw})
    write_analytics(lake, built)
    return built


def _assert_same_as_from_scratch(lake, universe, built, n, **kw):
    scratch = build_analytics(lake, "synthetic", universe, TIMES[:n], resume=False,
                              **{**SMALL, **kw})
    assert built.tables.keys() == scratch.tables.keys()
    for name in built.tables:
        pd.testing.assert_frame_equal(built.tables[name], scratch.tables[name], check_exact=True)


def _replace_bars(lake, key, frame):
    """Publish ``frame`` as the partition of ``key`` (a new file, as the lake publishes)."""
    publish_frames(lake, {key: frame})


def test_publications_continue_from_the_stored_state_and_equal_builds_from_scratch(season):
    lake, universe = season
    said: list[str] = []
    first = _publish(lake, universe, 4, said.append)
    assert first.kept == {"cycle_prices": 0, "arena_luck": 0}
    assert "from the season's first (no stored state" in " ".join(said)
    for n, kept in ((5, 4), (8, 5), (8, 8), (12, 8)):
        said.clear()
        built = _publish(lake, universe, n, said.append)
        assert built.kept == {"cycle_prices": kept, "arena_luck": kept}, built.why
        assert not built.why
        _assert_same_as_from_scratch(lake, universe, built, n)
        assert len(built.tables["arena_luck_band"]) == n
        if n > kept:
            assert any(f"advance {n - kept} cycle(s) from their books after "
                       f"{TIMES[kept - 1]:%Y-%m-%d %H:%M}" in m for m in said), said
    state = analytics_dir(lake) / STATE_DIR
    manifest = json.loads((state / MANIFEST).read_text())
    assert [p["cycles"] for p in manifest["arena"]] == [11, 12]
    assert sorted(p.name for p in state.glob("*.parquet")) == [
        "books-11.parquet", "books-12.parquet", "positions-11.parquet", "positions-12.parquet"]
    # dbt reads analytics/<table>.parquet: the state is not among them
    assert not {p.stem for p in analytics_dir(lake).glob("*.parquet")} & {"books-12", "state"}


def test_the_tables_are_the_engines_numbers_on_the_lakes_bars(season):
    """Independently of the state: the cycle prices are the market's own read of all the
    cycles, and the arena's players those of one simulation over them with every tradable
    asset's 15-minute bars of the season (its monitor engaged)."""
    lake, universe = season
    _publish(lake, universe, 5)
    built = _publish(lake, universe, 9)
    assert built.kept["arena_luck"] == 5
    prices = cycle_prices(lake, "synthetic", universe, TIMES[:9])
    pd.testing.assert_frame_equal(built.tables["cycle_prices"], prices, check_exact=True)
    wide = prices.pivot(index="cycle_at", columns="symbol", values="price")
    tradable = [a.symbol for a in universe.tradable]
    bars = {s: lake.read_bars(PartitionKey("synthetic", "15m", s), TIMES[0], TIMES[8])
            for s in tradable}
    assert all(len(b) > 100 for b in bars.values())
    luck = arena_zero_skill(wide[tradable], universe, players=30, seed=3, bars=bars, curves=True)
    assert built.tables["arena_luck"]["final_return"].tolist() == luck.returns.tolist()
    band = built.tables["arena_luck_band"]
    assert band.drop(columns="cycle_at").to_numpy().tolist() == luck.band(BAND).T.tolist()
    assert band["cycle_at"].tolist() == TIMES[:9]
    without = arena_zero_skill(wide[tradable], universe, players=30, seed=3)
    assert without.returns.tolist() != luck.returns.tolist()  # the monitor closed positions


def test_a_restated_bar_starts_the_tables_from_the_first_cycle_and_names_it(season):
    lake, universe = season
    _publish(lake, universe, 6)
    key = PartitionKey("synthetic", "15m", "ETH")
    bars = lake.read_bars(key)
    inside = bars.index[bars["timestamp"] == TIMES[2] - pd.Timedelta(hours=3)][0]
    row = bars.loc[inside]  # a vendor's correction of one bar of the third day
    bars.loc[inside, "close"] = (row["high"] + row["low"] + row["close"]) / 3
    assert bars.loc[inside, "close"] != row["close"]
    _replace_bars(lake, key, bars)
    lake = Lake(lake.root)
    said: list[str] = []
    built = _publish(lake, universe, 7, said.append)
    assert built.kept == {"cycle_prices": 0, "arena_luck": 0}
    assert "the 15m bars of ETH up to 2026-03-07 16:00 changed" in built.why["cycle_prices"]
    assert "ETH" in built.why["arena_luck"] and "changed since they were stored" in " ".join(said)
    _assert_same_as_from_scratch(lake, universe, built, 7)
    assert _publish(lake, universe, 8).kept == {"cycle_prices": 7, "arena_luck": 7}


def test_a_bar_that_arrives_after_the_publication_costs_one_cycle_not_the_season(season):
    """The lake lacks the bars closing at the fifth cycle (a Friday) when it is published: they
    are fetched later. The next build keeps the four cycles before it and plays two."""
    lake, universe = season
    complete = {s: lake.read_bars(PartitionKey("synthetic", "15m", s)) for s in ("ETH", "AAPL")}
    for symbol, bars in complete.items():
        _replace_bars(lake, PartitionKey("synthetic", "15m", symbol),
                      bars[bars["timestamp"] < TIMES[4] - pd.Timedelta(minutes=30)])
    _publish(lake, universe, 5)
    for symbol, bars in complete.items():
        _replace_bars(lake, PartitionKey("synthetic", "15m", symbol), bars)
    lake = Lake(lake.root)
    said: list[str] = []
    built = _publish(lake, universe, 6, said.append)
    assert built.kept == {"cycle_prices": 4, "arena_luck": 4}
    assert any("advance 2 cycle(s) from their books after 2026-03-05 16:00" in m
               and "not from the later ones: the cycle prices up to 2026-03-06 16:00 changed" in m
               for m in said), said
    _assert_same_as_from_scratch(lake, universe, built, 6)


def test_a_late_bar_of_a_benchmark_leaves_the_arena_books_alone(season):
    """BTC is priced, not traded: its late bar costs the cycle prices a cycle, not the arena."""
    lake, universe = season
    key = PartitionKey("synthetic", "15m", "BTC")
    complete = lake.read_bars(key)
    _replace_bars(lake, key, complete[complete["timestamp"] < TIMES[4] - pd.Timedelta(minutes=30)])
    _publish(lake, universe, 5)
    _replace_bars(lake, key, complete)
    built = _publish(Lake(lake.root), universe, 6)
    assert built.kept == {"cycle_prices": 4, "arena_luck": 5}
    _assert_same_as_from_scratch(Lake(lake.root), universe, built, 6)


@pytest.mark.parametrize("damage,reason", [
    ("books-6.parquet", "books-6.parquet does not hash as recorded"),
    ("../cycle_prices.parquet", "cycle_prices.parquet does not hash as recorded"),
    ("../arena_luck_band.parquet", "arena_luck_band.parquet is missing"),
    (MANIFEST, "cannot be read"),
    ("", "no stored state"),
])
def test_a_damaged_or_missing_state_is_not_trusted(season, damage, reason):
    lake, universe = season
    _publish(lake, universe, 6)
    state = analytics_dir(lake) / STATE_DIR
    if not damage:
        shutil.rmtree(state)
    elif "band" in damage:
        (state / damage).unlink()
    else:
        data = bytearray((state / damage).read_bytes())
        data[len(data) // 2] ^= 0xFF
        (state / damage).write_bytes(bytes(data))
    built = _publish(lake, universe, 7)
    assert built.kept == {"cycle_prices": 0, "arena_luck": 0}
    assert reason in built.why["arena_luck"], built.why
    _assert_same_as_from_scratch(lake, universe, built, 7)


@pytest.mark.parametrize("change,reason", [
    ({"arena_players": 31}, "arena_players 30"),
    ({"seed": 4}, "seed 3"),
])
def test_another_player_count_or_seed_starts_from_scratch(season, change, reason):
    lake, universe = season
    _publish(lake, universe, 6)
    built = _publish(lake, universe, 7, **change)
    assert built.kept == {"cycle_prices": 0, "arena_luck": 0}
    assert reason in built.why["arena_luck"]
    _assert_same_as_from_scratch(lake, universe, built, 7, **change)


def test_a_changed_schedule_starts_from_the_cycle_that_changed(season):
    lake, universe = season
    _publish(lake, universe, 6)
    moved = [*TIMES[:3], TIMES[3] + pd.Timedelta(hours=1), *TIMES[4:7]]
    built = build_analytics(lake, "synthetic", universe, moved, **SMALL)
    assert built.kept == {"cycle_prices": 0, "arena_luck": 0}
    assert "the season's cycles changed at 2026-03-05 16:00" in built.why["arena_luck"]
    scratch = build_analytics(lake, "synthetic", universe, moved, resume=False, **SMALL)
    for name in built.tables:
        pd.testing.assert_frame_equal(built.tables[name], scratch.tables[name], check_exact=True)


def test_no_books_are_kept_at_a_cycle_the_monitor_observes_a_session_open_at(season):
    """At 14:30 UTC on 2026-03-02 (9:30 in New York) the NYSE opens: the monitor observes the
    opening print of the bar opening then, which the lake cannot hold when that cycle is
    published; at 16:00 it observes nothing of a bar opening at 16:00."""
    lake, universe = season
    reads = SeasonReads(lake, "synthetic", universe, TIMES)
    assert reads.observed_at_open(ts("2026-03-02 14:30"))
    assert not reads.observed_at_open(TIMES[0])
    assert not reads.observed_at_open(ts("2026-03-07 14:30"))  # a Saturday
    crypto = SeasonReads(lake, "synthetic", universe.select(["BTC", "ETH"]), TIMES)
    assert not crypto.observed_at_open(ts("2026-03-02 14:30"))
