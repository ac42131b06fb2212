"""Replicates end to end: a roster entry asking for two instances of one model (a loopback
OpenAI-compatible server) plays a short replayed season through the replay job (the season's
roster copy, the real litellm HTTP path, a real `dbt build`): the instances play as separate
contestants, their requests carry their own seeds (read from the server's recorded request
bodies), the replicates mart's median and spread equal a hand computation over the leaderboard,
and the season report and the terminal show the model's band beside the zero-skill band."""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from collections.abc import Callable

import duckdb
import numpy as np
import pandas as pd
import pytest

from arena.app.replay import ReplayPlan, replay
from arena.cli._render import print_leaderboard
from arena.data.lake import Lake
from arena.pipeline.matched_tables import matched_tables
from arena.pipeline.season_config import SeasonConfigError, roster_path, season_roster
from arena.pipeline.season_tables import read_analytics, tradable_prices
from arena.reporting.layout import fmt
from arena.reporting.season import read_marts
from tests.agents.openai_stub import OpenAIStub, RecordedRequest, StubResponse

SYMBOLS = ["BTC", "SPY", "ETH", "SOL"]
START, DAYS = dt.date(2026, 10, 1), 4
PLAYERS, ARENA_PLAYERS = 500, 100
# each instance's first answer, told by the seed its request carried: the two open different
# positions, then hold, so they play different books
OPENS = {seed: json.dumps({"reasoning": f"seed {seed}", "decisions": [
    {"action": "open_long", "symbol": symbol, "percent_of_equity": size, "confidence": 0.9,
     "invalidation_price": 1.0, "thesis": "trend", "invalidation": "collapse"}]})
    for seed, symbol, size in ((11, "ETH", 30), (22, "SOL", 50))}
HOLD = json.dumps({"reasoning": "hold", "decisions": []})


def answers() -> Callable[[RecordedRequest], StubResponse]:
    """The model server's handler: a seed's first request opens its position, later ones hold;
    a request without a known seed is refused (400)."""
    asked: set[int] = set()
    lock = threading.Lock()

    def answer(request: RecordedRequest) -> StubResponse:
        seed = request.body.get("seed") if isinstance(request.body, dict) else None
        if seed not in OPENS:
            return StubResponse.error(400, f"no answer scripted for seed {seed!r}")
        with lock:
            first = seed not in asked
            asked.add(seed)
        return StubResponse.answer(OPENS[seed] if first else HOLD)

    return answer


@pytest.fixture(scope="module")
def season(tmp_path_factory):
    """The replayed season: (lake, its result, the chat requests the model server received)."""
    lake = Lake(tmp_path_factory.mktemp("replicates") / "lake")
    roster = tmp_path_factory.mktemp("roster") / "roster.yaml"
    with OpenAIStub(handler=answers()) as stub:
        roster.write_text(
            "contestants:\n"
            "  - {name: equal-weight, kind: house, strategy: equal_weight}\n"
            f"  - {{name: stub-model, kind: llm, model: openai/stub-model, api_base: '{stub.url}',"
            " params: {temperature: 0.4, max_tokens: 400, timeout: 10, num_retries: 1},"
            " replicates: 2, seeds: [11, 22]}\n")
        done = replay(lake, ReplayPlan(START, DAYS, str(roster), SYMBOLS, players=PLAYERS,
                                       arena_players=ARENA_PLAYERS), env={})
        requests = stub.chat_requests
    return lake, done, requests


def test_the_instances_play_as_contestants_from_the_season_roster_copy(season):
    lake, done, _ = season
    assert "replicates: 2" in roster_path(lake).read_text()  # the copy keeps the entry
    copy = season_roster(lake)
    assert copy.names == ("equal-weight", "stub-model-r1", "stub-model-r2")
    assert [(copy[n].replicate_of, copy[n].params.seed, copy[n].params.temperature)
            for n in ("stub-model-r1", "stub-model-r2")] == [("stub-model", 11, 0.4),
                                                             ("stub-model", 22, 0.4)]
    board = done.board.set_index("contestant")
    assert set(board.index) == {"equal-weight", "stub-model-r1", "stub-model-r2"}
    assert board.loc["stub-model-r1", "role"] == board.loc["stub-model-r2", "role"] == "contestant"
    assert board.loc["stub-model-r1", "replicate_of"] == "stub-model"
    assert board.loc["stub-model-r2", "replicate_of"] == "stub-model"
    assert pd.isna(board.loc["equal-weight", "replicate_of"])
    # the two books differ: each answered its own seed's decisions
    trades = read_marts(lake)["trades"]
    held = trades.groupby("contestant")["symbol"].agg(set)
    assert held["stub-model-r1"] == {"ETH"} and held["stub-model-r2"] == {"SOL"}


def test_each_instance_sent_its_own_seed_with_every_call(season):
    lake, _, requests = season
    seeds = [r.body.get("seed") for r in requests]
    assert sorted(set(seeds)) == [11, 22]
    assert seeds.count(11) == seeds.count(22) == DAYS  # one answer a cycle each, no repair
    assert {r.body.get("temperature") for r in requests} == {0.4}
    with duckdb.connect(str(lake.root / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select contestant, replicate_of, seed, temperature, count(*) from "
            "staging.stg_ledger__calls where replicate_of is not null group by all "
            "order by contestant").fetchall()
    assert rows == [("stub-model-r1", "stub-model", 11, 0.4, DAYS),
                    ("stub-model-r2", "stub-model", 22, 0.4, DAYS)]


def test_the_replicates_mart_is_the_hand_computation_over_the_leaderboard(season):
    lake, _, _ = season
    marts = read_marts(lake)
    board = marts["leaderboard"].set_index("contestant")
    returns = board.loc[["stub-model-r1", "stub-model-r2"], "total_return"].to_numpy(float)
    lucks = board.loc[["stub-model-r1", "stub-model-r2"], "zero_skill_percentile"].to_numpy(float)
    assert returns[0] != returns[1]
    [row] = marts["replicates"].to_dict("records")
    band = marts["zero_skill_band"].sort_values("cycle_at").iloc[-1]
    lo, hi = sorted(returns)
    expected = {
        "replicate_of": "stub-model", "model": "openai/stub-model", "instances": 2,
        "instance_names": "stub-model-r1, stub-model-r2",
        "median_return": (lo + hi) / 2, "min_return": lo, "max_return": hi,
        "return_range": hi - lo, "q25_return": lo + 0.25 * (hi - lo),
        "q75_return": lo + 0.75 * (hi - lo), "return_iqr": 0.5 * (hi - lo),
        "median_zero_skill_percentile": lucks.mean(),
        "min_zero_skill_percentile": lucks.min(), "max_zero_skill_percentile": lucks.max(),
        "instances_above_zero_skill_median": int((returns > band["q50_equity"] / 10_000 - 1).sum()),
        "zero_skill_q05_return": band["q05_equity"] / 10_000 - 1,
        "zero_skill_q25_return": band["q25_equity"] / 10_000 - 1,
        "zero_skill_median_return": band["q50_equity"] / 10_000 - 1,
        "zero_skill_q75_return": band["q75_equity"] / 10_000 - 1,
        "zero_skill_q95_return": band["q95_equity"] / 10_000 - 1,
        "zero_skill_players": ARENA_PLAYERS,
        # one draw for the model: the instances' mean among the model's own matched players
        "mean_return": (lo + hi) / 2, "skill_players": ARENA_PLAYERS, "skill_status": "scored",
        "skill_percentile": _share_below((lo + hi) / 2, marts["matched_players"], "stub-model"),
    }
    assert set(row) == set(expected)
    for key, value in expected.items():
        if isinstance(value, str):
            assert row[key] == value, key
        else:
            assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-15), key
    # numpy's linear percentiles agree (the mart's quantile_cont)
    assert np.percentile(returns, [25, 50, 75]) == pytest.approx(
        [row["q25_return"], row["median_return"], row["q75_return"]], rel=1e-12)


def _share_below(value: float, matched: pd.DataFrame, unit: str) -> float:
    """The share of the unit's matched players below ``value``, ties (at 10 decimals) half."""
    mine = matched.loc[matched["unit"] == unit, "final_return"].round(10)
    assert len(mine) == ARENA_PLAYERS
    return float(((mine < round(value, 10)).sum() + 0.5 * (mine == round(value, 10)).sum())
                 / len(mine))


def _line(row: dict) -> str:
    return (f"stub-model: median return {fmt(row['median_return'], 'return')}, spread "
            f"{fmt(row['min_return'], 'return')} to {fmt(row['max_return'], 'return')} across 2 "
            f"instances (median luck pct {fmt(row['median_zero_skill_percentile'], 'share')}, "
            f"model skill pct {fmt(row['skill_percentile'], 'share')}); "
            f"zero-skill band {fmt(row['zero_skill_q05_return'], 'return')} to "
            f"{fmt(row['zero_skill_q95_return'], 'return')} (5th to 95th percentile), median "
            f"{fmt(row['zero_skill_median_return'], 'return')}")


def test_the_terminal_shows_the_models_band_beside_the_zero_skill_band(season, capsys):
    _, done, _ = season
    [row] = done.replicates.to_dict("records")
    print_leaderboard(done.board, done.replicates)
    out = capsys.readouterr().out
    assert "replicated models: median and spread of the returns across their instances" in out
    assert _line(row) in re.sub(r"\s*\n\s*", " ", out)  # the console may wrap it


def test_the_season_report_shows_the_models_band(season):
    lake, done, _ = season
    html = done.outputs.report.read_text(encoding="utf-8")
    [row] = read_marts(lake)["replicates"].to_dict("records")
    start = html.index("<caption>Replicated models: median and spread of the returns across their instances")
    table = html[start:html.index("</table>", start)]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table, flags=re.S)
    text = [re.sub(r"<[^>]+>", "", c).strip() for c in cells]
    assert text == ["stub-model", "2", fmt(row["median_return"], "return"),
                    fmt(row["min_return"], "return"), fmt(row["max_return"], "return"),
                    fmt(row["return_iqr"], "drawdown"),
                    fmt(row["median_zero_skill_percentile"], "share"),
                    fmt(row["skill_percentile"], "share"),
                    fmt(row["zero_skill_q05_return"], "return"),
                    fmt(row["zero_skill_median_return"], "return"),
                    fmt(row["zero_skill_q95_return"], "return")]


def test_a_replicated_entry_added_mid_season_plays_its_instances_from_the_next_cycle(
        tmp_path_factory, tmp_path, universe):
    """A roster change logs each instance (the names that play), from the next cycle; the
    season's roster copy, rewritten, holds the entry, which expands the same at every load."""
    from arena.pipeline.season_config import load_season, roster_changes
    from arena.pipeline.season_roster import add_contestants
    from tests.conftest import ts
    from tests.market_lakes import season_lake

    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                       "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n",
                       start="2025-11-24", days=3)
    entry = tmp_path / "new.yaml"
    entry.write_text("contestants:\n  - {name: gpt, kind: llm, model: openai/stub-model, "
                     "api_base: 'http://127.0.0.1:9/v1', replicates: 2, seeds: [5, 6]}\n")
    made = add_contestants(lake, load_season(lake), entry, ts("2025-11-24 18:00"))
    assert [(c.contestant, c.change, c.from_cycle) for c in made] == [
        ("gpt-r1", "added", ts("2025-11-25 16:00").isoformat()),
        ("gpt-r2", "added", ts("2025-11-25 16:00").isoformat())]
    assert [c.contestant for c in roster_changes(lake)] == ["gpt-r1", "gpt-r2"]
    assert season_roster(lake, ts("2025-11-24 16:00")).names == ("momentum",)
    assert season_roster(lake, ts("2025-11-25 16:00")).names == ("momentum", "gpt-r1", "gpt-r2")
    assert "replicates: 2" in roster_path(lake).read_text()
    assert [season_roster(lake)[n].params.seed for n in ("gpt-r1", "gpt-r2")] == [5, 6]
    again = tmp_path / "again.yaml"  # an instance's name is taken once it is in the season
    again.write_text("contestants:\n  - {name: gpt-r1, kind: house, strategy: random}\n")
    with pytest.raises(SeasonConfigError, match="already used the name"):
        add_contestants(lake, load_season(lake), again, ts("2025-11-24 19:00"))


def test_the_matched_players_refuse_a_book_the_cycle_prices_do_not_replay(season, universe):
    """The season's cycle prices replay every book to the equity its records hold (no skill
    percentile otherwise): ETH's last price moved by 1% makes the instance that holds ETH - and
    its model - book_unmatched, with no players; an ETH price missing while it is held too."""
    lake, _, _ = season
    prices = read_analytics(lake, "cycle_prices")
    players, books = matched_tables(lake, tradable_prices(prices, universe), universe,
                                    players=50, seed=0)
    books = books.set_index("unit")
    assert set(books["status"]) == {"scored"} and (books["book_check_usd"] <= 1e-6).all()
    assert books.loc["stub-model", ["unit_kind", "instances", "instance_names"]].to_list() == [
        "model", 2, "stub-model-r1, stub-model-r2"]
    assert players.groupby("unit").size().to_dict() == {u: 50 for u in books.index}

    last = prices["cycle_at"] == prices["cycle_at"].max()
    moved = prices.assign(price=prices["price"].where(~(last & (prices["symbol"] == "ETH")),
                                                      prices["price"] * 1.01))
    players, books = matched_tables(lake, tradable_prices(moved, universe), universe,
                                    players=50, seed=0)
    status = books.set_index("unit")["status"].to_dict()
    assert status["stub-model-r1"] == status["stub-model"] == "book_unmatched"
    assert status["stub-model-r2"] == "scored"
    assert not players["unit"].isin(["stub-model-r1", "stub-model"]).any()

    gone = prices[~(last & (prices["symbol"] == "ETH"))]
    _, books = matched_tables(lake, tradable_prices(gone, universe), universe, players=50,
                              seed=0)
    assert books.set_index("unit").loc["stub-model-r1", "status"] == "book_unmatched"
