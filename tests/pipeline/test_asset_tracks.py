"""Single-asset tracks as a contest (issue 30, item 5): every entrant's track per asset, scored
over the season's window against 20,000 zero-skill players of the asset, eligible from 70% of
the window, in the season's tables, through a real ``dbt build`` into the ``asset_tracks``
mart, and read back by the MCP ``score`` - one function computing both.

Known answers: a track long all season is buy-and-hold from the first bar's open (returns start
with the first bar's move) less its entry fee; 69% of the window is ineligible and 70% and 71%
are eligible; a symbol without bars says ``no_bars`` with no
numbers; the percentile is the direct count of the players below, and the players are the
plain scorer's.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from arena.data.lake import Lake, PartitionKey
from arena.pipeline.entrants import add_entrant
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.live.publish import publish_season
from arena.pipeline.outside import Arena, entrant_score, submit_positions
from arena.pipeline.season_config import load_season, season_contestants
from arena.pipeline.season_tables import (
    TRACK_ELIGIBLE,
    TRACK_PLAYERS,
    TRACK_SEED,
    TRACK_STATUSES,
    asset_tracks,
    read_analytics,
    tracks_table,
)
from arena.pipeline.warehouse import MartsError, run_dbt
from arena.reporting.season import read_marts
from arena.scoring.asset_luck import decision_steps, score_player, zero_skill_returns
from arena.scoring.scorer import COST_RATES, score_arrays
from tests.conftest import ts
from tests.market_lakes import market_lakes, season_lake

PROVIDER = "synthetic"
HOUR = pd.Timedelta(hours=1)
START = ts("2025-11-24 16:00")  # a window of 100 hourly ETH bars, all closed by END: 100 moves,
END = START + 100 * HOUR  # the first bar's open to its close, then close to close
RATE = COST_RATES["crypto"]
HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
MON, TUE, WED = ts("2025-11-24 16:00"), ts("2025-11-25 16:00"), ts("2025-11-26 16:00")


@pytest.fixture(scope="module")
def market(tmp_path_factory, universe) -> Lake:
    """The shared synthetic market (read only: the tracks are passed, not written)."""
    return market_lakes(tmp_path_factory, universe).full


def _closes(lake: Lake, symbol: str, start: pd.Timestamp, end: pd.Timestamp) -> pd.Series:
    bars = lake.read_bars(PartitionKey(PROVIDER, "1h", symbol), start, end)
    return bars.set_index("timestamp")["close"]


def _opening(lake: Lake, symbol: str, start: pd.Timestamp, end: pd.Timestamp) -> float:
    """The open of the window's first bar: where a track's returns start."""
    return float(lake.read_bars(PartitionKey(PROVIDER, "1h", symbol), start, end)["open"].iloc[0])


def test_a_track_long_all_season_is_buy_and_hold_less_its_entry_fee(market, universe):
    tracks = {"alice": [(START - 6 * HOUR, {"ETH": 1.0})]}  # before the season: held throughout
    [row] = asset_tracks(market, PROVIDER, universe["ETH"], START, END, tracks)
    closes = _closes(market, "ETH", START, END)
    assert len(closes) == 100 and (row["grid"], row["bars"]) == ("1h", 100)
    held = closes.iloc[-1] / _opening(market, "ETH", START, END)  # buy and hold from the open
    # the one entry fee is paid at the first bar's open, so the path's moves compound it too
    assert row["return"] == pytest.approx((1 - RATE) * held - 1, rel=1e-12, abs=1e-15)
    assert row["return"] == pytest.approx((held - 1) - RATE * held, rel=1e-12, abs=1e-15)
    assert row["turnover"] == 1.0 and row["fees"] == pytest.approx(RATE, rel=1e-12)
    assert (row["status"], row["coverage"], row["eligible"], row["rank"]) == ("scored", 1.0,
                                                                              True, 1)
    assert (row["players"], row["seed"], row["cost_rate"]) == (TRACK_PLAYERS, TRACK_SEED, RATE)
    assert (row["season_start"], row["season_end"]) == (START, END)


def test_seventy_percent_of_the_season_is_eligible_and_sixty_nine_is_not(market, universe):
    """A submission made during bar k holds from bar k's close: it earns the window's moves
    after that close, 99 - k of its 100 (the first is bar 0's own), so bar 30 covers 69%, bar
    29 70% and bar 28 71%."""
    sent = {"from-30": 30, "from-29": 29, "from-28": 28}
    tracks = {name: [(START + k * HOUR + pd.Timedelta(minutes=30), {"ETH": 1.0})]
              for name, k in sent.items()}
    rows = {r["entrant"]: r for r in asset_tracks(market, PROVIDER, universe["ETH"], START, END,
                                                  tracks)}
    assert {n: r["coverage"] for n, r in rows.items()} == {"from-30": 0.69, "from-29": 0.70,
                                                          "from-28": 0.71}
    assert {n: r["eligible"] for n, r in rows.items()} == {"from-30": False, "from-29": True,
                                                          "from-28": True}
    assert TRACK_ELIGIBLE == 0.70
    closes = _closes(market, "ETH", START, END).to_numpy()
    for name, k in sent.items():  # every one keeps its numbers: long from bar k's close
        row = rows[name]
        assert row["status"] == "scored"
        assert row["return"] == pytest.approx((1 - RATE) * closes[-1] / closes[k] - 1,
                                              rel=1e-12, abs=1e-15)
        assert 0.0 <= row["percentile"] <= 1.0 and row["rank_score"] >= 0.0
    # the ineligible one gets no rank; the eligible are ranked among themselves by return
    assert rows["from-30"]["rank"] is None
    eligible = [rows["from-29"], rows["from-28"]]
    for row in eligible:
        assert row["rank"] == 1 + sum(o["return"] > row["return"] for o in eligible)
    assert sorted(r["rank"] for r in eligible) == [1, 2]


def test_a_symbol_without_bars_says_so_and_has_no_numbers(market, universe, tmp_path):
    empty = Lake(tmp_path / "empty")  # a lake holding no bars of any asset
    tracks = {"alice": [(START - HOUR, {"SOL": 1.0, "ETH": -1.0})]}
    [row] = asset_tracks(empty, PROVIDER, universe["SOL"], START, END, tracks)
    assert row["status"] == "no_bars"
    numbers = ("return", "turnover", "fees", "coverage", "percentile", "rank_score", "rank",
               "players", "ceiling", "grid", "bars")
    assert {k: row[k] for k in numbers} == dict.fromkeys(numbers)
    assert row["eligible"] is False
    # a window in which no bar closes: too short, whatever the lake holds
    [short] = asset_tracks(market, PROVIDER, universe["ETH"], START, START + HOUR - pd.Timedelta(
        microseconds=1), tracks)
    assert short["status"] == "too_short" and short["return"] is None and not short["eligible"]
    # one bar closed: its own open-to-close move is the track's first return
    [one] = asset_tracks(market, PROVIDER, universe["ETH"], START, START + HOUR, tracks)
    first = _closes(market, "ETH", START, START + HOUR).iloc[0] / _opening(
        market, "ETH", START, START + HOUR)
    assert (one["status"], one["bars"], one["coverage"]) == ("scored", 1, 1.0)
    assert one["return"] == pytest.approx((1 - RATE) * (2 - first) - 1, rel=1e-12, abs=1e-15)
    # in the season's table: typed columns, the status named, the numbers null
    table = tracks_table(empty, PROVIDER, universe.select(["ETH", "SOL"]), START, END, tracks)
    assert list(table["status"]) == ["no_bars", "no_bars"]
    assert table[["return", "percentile", "rank_score", "coverage"]].isna().all().all()
    assert set(table["status"]) <= set(TRACK_STATUSES)
    assert str(table["season_end"].dtype) == "timestamp[us, tz=UTC][pyarrow]"


def test_the_percentile_is_the_direct_count_of_the_players_below(market, universe):
    """A hand-made track (flat, then 0.4 long, then 0.7 short): its return is the plain
    scorer's on the positions written out by hand over the window's path (the first bar's open,
    then the closes), and its percentile the share of the asset's 20,000 zero-skill players on
    that path (the plain scorer's too, sampled) with a lower return."""
    tracks = {"alice": [(START + 10 * HOUR + pd.Timedelta(minutes=5), {"ETH": 0.4}),
                        (START + 40 * HOUR + pd.Timedelta(minutes=5), {"ETH": -0.7})]}
    [row] = asset_tracks(market, PROVIDER, universe["ETH"], START, END, tracks)
    closes = _closes(market, "ETH", START, END)
    path = np.concatenate([[_opening(market, "ETH", START, END)], closes.to_numpy()])
    by_hand = np.zeros(101)  # at the opening, then at each of the 100 closes
    by_hand[11:41], by_hand[41:] = 0.4, -0.7  # from the close of the bar each arrived in
    equity, turnover, fees, _ = score_arrays(path, by_hand, RATE)
    assert row["return"] == pytest.approx(equity[-1] - 1, rel=1e-12, abs=1e-15)
    assert row["turnover"] == pytest.approx(turnover) and row["fees"] == pytest.approx(fees)
    assert row["coverage"] == pytest.approx(0.89)  # moves 12 .. 100

    days = decision_steps(pd.DatetimeIndex(closes.index), "1d", "24/7")
    steps = np.concatenate([days[:1], days])  # the opening opens the first day's draw
    players = zero_skill_returns(path, steps, players=TRACK_PLAYERS, seed=TRACK_SEED,
                                 cost_rate=RATE)
    below = np.count_nonzero(players < row["return"])
    ties = np.count_nonzero(players == row["return"])
    assert row["percentile"] == (below + 0.5 * ties) / TRACK_PLAYERS
    capped = min(row["percentile"], TRACK_PLAYERS / (TRACK_PLAYERS + 1))
    assert row["rank_score"] == pytest.approx(-math.log10(1 - capped), rel=1e-12)
    assert row["ceiling"] == pytest.approx(np.quantile(players, 0.95), rel=1e-12)
    for player in range(0, TRACK_PLAYERS, 1999):  # the players are the plain scorer's
        assert players[player] == pytest.approx(
            score_player(path, steps, player, seed=TRACK_SEED, cost_rate=RATE),
            rel=1e-12, abs=1e-14)


# ------------------------------------------------------------ the season, dbt and the score
def _cycle(arena: Arena, at: pd.Timestamp) -> None:
    contestants, _ = season_contestants(arena.lake, {}, at=at)
    play_season_cycle(arena.lake, arena.season, contestants, at, now=at + pd.Timedelta(minutes=5))


def _same(a: dict, b: dict, *, but: tuple[str, ...] = ("source",)) -> None:
    """Two score views of a track agree: numbers to 1e-12, everything else exactly."""
    assert set(a) == set(b)
    for key in set(a) - set(but):
        if isinstance(a[key], float) and isinstance(b[key], float):
            assert a[key] == pytest.approx(b[key], rel=1e-12, abs=1e-12), key
        else:
            assert a[key] == b[key], key


def test_the_season_builds_the_tracks_into_a_tested_mart_that_the_score_reads(
        tmp_path_factory, tmp_path, universe):
    """Three entrants on a season of three cycles: alice long ETH and short then long BTC from
    before the season (eligible), bob short ETH from the morning of the second day (25% of the
    window: ineligible, unranked, its numbers kept), carol SOL sent in the window's last bar (no
    position earns a move yet). After the second cycle, the score computes the tracks live; the
    season's build (a real dbt build, its tests passing) publishes the same numbers, which the
    score then reads; past the third cycle's time, unpublished, it computes live again."""
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)
    arena = Arena(lake, load_season(lake))
    alice, bob, carol = (add_entrant(lake, arena.season, n, MON - pd.Timedelta(days=1))[0]
                         for n in ("alice", "bob", "carol"))
    submit_positions(arena, alice, {"ETH": 1.0, "BTC": -0.5}, ts("2025-11-24 10:00"))
    submit_positions(arena, alice, {"BTC": 0.25}, ts("2025-11-24 23:30"))
    submit_positions(arena, bob, {"ETH": -1.0}, ts("2025-11-25 09:30"))
    submit_positions(arena, carol, {"SOL": 1.0}, ts("2025-11-25 15:30"))

    early = entrant_score(arena, alice, MON + HOUR)["single_asset"]  # the window is empty
    assert [(t["symbol"], t["status"], t["return"]) for t in early] == [
        ("BTC", "too_short", None), ("ETH", "too_short", None)]
    assert all(t["note"].startswith("no bar of the asset has closed") for t in early)

    _cycle(arena, MON)
    _cycle(arena, TUE)
    later = TUE + HOUR  # the window: Monday's cycle to Tuesday's, 24 hourly bars
    live = {n: entrant_score(arena, e, later)["single_asset"] for n, e in
            (("alice", alice), ("bob", bob), ("carol", carol))}
    assert {t["source"] for ts_ in live.values() for t in ts_} == {"live"}

    out = publish_season(lake, arena.season, players=200)
    ran = {n.name: n.status for n in out.marts.nodes}
    for test in ("asset_tracks_are_eligible_exactly_when_covered",
                 "asset_tracks_have_numbers_exactly_when_scored",
                 "asset_tracks_rank_the_eligible_among_themselves"):
        assert ran[test] == "pass", ran
    assert any(n.startswith("accepted_values_asset_tracks_status") for n in ran)

    mart = read_marts(lake)["asset_tracks"].set_index(["entrant", "symbol"]).sort_index()
    assert list(mart.index) == [("alice", "BTC"), ("alice", "ETH"), ("bob", "ETH"),
                                ("carol", "SOL")]
    assert list(mart["status"]) == ["scored", "scored", "scored", "no_position"]
    assert (mart["season_start"] == MON).all() and (mart["season_end"] == TUE).all()
    assert list(mart["bars"]) == [24, 24, 24, 24]
    assert mart.loc[("bob", "ETH"), "coverage"] == pytest.approx(6 / 24)  # from 09:00's close
    assert list(mart["eligible"]) == [True, True, False, False]
    assert mart.loc[("alice", "ETH"), "rank_among_entrants"] == 1
    assert pd.isna(mart.loc[("bob", "ETH"), "rank_among_entrants"])
    assert not pd.isna(mart.loc[("bob", "ETH"), "total_return"])  # kept, not ranked
    assert (mart["zero_skill_players"].dropna() == TRACK_PLAYERS).all()
    assert mart.loc[("alice", "ETH"), "name"] == universe["ETH"].name

    # the season's table and its mart hold the same numbers (the mart passes them through)
    table = read_analytics(lake, "asset_tracks").set_index(["entrant", "symbol"]).sort_index()
    for ours, theirs in (("return", "total_return"), ("percentile", "luck_percentile"),
                         ("coverage", "coverage"), ("rank_score", "rank_score")):
        np.testing.assert_allclose(table[ours].to_numpy(dtype=float, na_value=np.nan),
                                   mart[theirs].to_numpy(dtype=float), rtol=1e-12, atol=1e-12)

    # the closed form of alice's ETH over the window: long from the first bar's open
    eth = _closes(lake, "ETH", MON, TUE)
    assert mart.loc[("alice", "ETH"), "total_return"] == pytest.approx(
        (1 - RATE) * eth.iloc[-1] / _opening(lake, "ETH", MON, TUE) - 1, rel=1e-12, abs=1e-15)

    # the score reads the published mart now, and gives what it computed live before
    for name, entrant in (("alice", alice), ("bob", bob), ("carol", carol)):
        published = entrant_score(arena, entrant, later)["single_asset"]
        assert {t["source"] for t in published} == {"published"}
        assert [t["symbol"] for t in published] == [t["symbol"] for t in live[name]]
        for mine, before in zip(published, live[name], strict=True):
            _same(mine, before)
    [bob_eth] = live["bob"]
    assert (bob_eth["eligible"], bob_eth["rank"], bob_eth["of"]) == (False, None, 1)
    [carol_sol] = live["carol"]
    assert carol_sol["status"] == "no_position" and carol_sol["coverage"] == 0.0

    # past Wednesday's cycle time, its tables not built: live again, on the longer window
    wed = entrant_score(arena, alice, WED + HOUR)["single_asset"]
    assert {(t["source"], t["to"]) for t in wed} == {("live", WED.isoformat())}
    assert all(t["bars"] == 48 for t in wed)

    # the mart's tests hold the contest's rules: a track eligible below 70% fails the build
    path = lake.root / "analytics" / "asset_tracks.parquet"
    broken = pq.read_table(path).to_pandas(types_mapper=pd.ArrowDtype)
    broken.loc[broken["entrant"] == "bob", "eligible"] = True
    pq.write_table(pa.Table.from_pandas(broken, preserve_index=False), path)
    with pytest.raises(MartsError, match="asset_tracks_are_eligible_exactly_when_covered"):
        run_dbt(lake, None, "--quiet", "--select", "+asset_tracks")
