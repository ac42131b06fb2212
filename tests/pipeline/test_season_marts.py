"""A replayed season end to end: luck tables, a real `dbt build`, the published warehouse, the
season report in a real browser - and the engine's Python fold against the dbt marts, to the cent.

The season (six days over a weekend, eight assets) has the house agents, an LLM contestant on a
loopback OpenAI-compatible server, a house rule with tight invalidation levels, so the monitor
closes positions automatically inside the replay, and a contestant that plays after the others
and writes down the standings its briefing carried. The house rules play as rulers: the
leaderboard, the reports and the terminal show them apart from the two contestants.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import os
import re
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from arena.agents.base import Reply
from arena.agents.factory import build_contestant
from arena.agents.roster import load_roster
from arena.core.resources import DBT_PROJECT
from arena.core.sessions import daily_cycles
from arena.core.types import Briefing, CallRecord, Message
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.pipeline.season import SeasonError, finish_season, replay_season
from arena.pipeline.season_tables import read_analytics
from arena.pipeline.warehouse import MartsError, build_marts
from arena.reporting.season import read_marts
from arena.scoring.metrics import leaderboard_metrics, open_trips, round_trips
from arena.scoring.scorer import percentile, rank_score
from tests.agents.openai_stub import OpenAIStub, StubResponse

SYMBOLS = ["BTC", "SPY", "ETH", "SOL", "AAPL", "MSFT", "NVDA", "JNJ"]
START, DAYS = pd.Timestamp("2026-10-01", tz="UTC"), 6  # Thursday to Tuesday: a weekend without stock sessions
PLAYERS, ARENA_PLAYERS = 2_000, 200
LLM_ANSWER = json.dumps({"reasoning": "Steady: a small ETH position.", "decisions": [
    {"action": "open_long", "symbol": "ETH", "percent_of_equity": 15, "confidence": 0.8,
     "invalidation_price": 1.0, "thesis": "trend intact", "invalidation": "a collapse"}]})


class TightStops:
    """Opens a long BTC and a short SOL whenever flat, with levels 0.4% away: the monitor closes
    them within the day, so the season has automatic closes (and re-opens)."""

    kind = "house"

    def __init__(self, name: str = "tight-stops") -> None:
        self.name = name

    def answer(self, briefing: Briefing) -> Reply:
        prices = {r["symbol"]: r["price"] for r in briefing.data["market"]["table"]}
        held = {p["symbol"] for p in briefing.portfolio.get("positions", ())}
        decisions = []
        for symbol, action, level in (("BTC", "open_long", 0.996), ("SOL", "open_short", 1.004)):
            if symbol not in held and prices.get(symbol):
                decisions.append({"action": action, "symbol": symbol, "percent_of_equity": 20,
                                  "confidence": 0.9, "invalidation_price": prices[symbol] * level,
                                  "thesis": f"tight {symbol}", "invalidation": "any wobble"})
        text = json.dumps({"reasoning": "Tight stops, always in.", "decisions": decisions})
        call = CallRecord(self.name, "decision", "house/tight", 0, 0, 0.0, 0.0)
        return Reply(text, (call,), (*briefing.messages, Message("assistant", text)))

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        text = json.dumps({"reasoning": "hold", "decisions": []})
        return Reply(text, (), (*previous.transcript, Message("assistant", text)))


class StandingsWatcher:
    """A contestant that plays after the others, as a reverse does, and holds: its reasoning
    names whose standings its briefing carried ("none" before anyone has a cycle)."""

    kind = "reverse"
    follows = True

    def __init__(self, name: str = "standings-watcher") -> None:
        self.name = name

    def answer(self, briefing: Briefing) -> Reply:
        seen = ", ".join(sorted(briefing.standings)) or "none"
        text = json.dumps({"reasoning": f"standings of: {seen}", "decisions": []})
        call = CallRecord(self.name, "decision", "watch/standings", 0, 0, 0.0, 0.0)
        return Reply(text, (call,), (*briefing.messages, Message("assistant", text)))

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        return previous


# the house agents and the tight stops are rulers; the LLM and the watcher contestants
RULERS = ["momentum", "mean-reversion", "trend-following", "equal-weight", "random", "tight-stops"]
RIVALS = ["stub-llm", "standings-watcher"]


@pytest.fixture(scope="module")
def season(tmp_path_factory, universe):
    """The replayed and finished season: (lake, ledger, times, outputs, contestant names)."""
    root = tmp_path_factory.mktemp("season") / "lake"
    with OpenAIStub(default=StubResponse.answer(LLM_ANSWER)) as stub:
        roster = tmp_path_factory.mktemp("roster") / "roster.yaml"
        roster.write_text(
            "contestants:\n"
            f"  - {{name: stub-llm, kind: llm, model: openai/stub-model, api_base: '{stub.url}',"
            " params: {temperature: 0.2, max_tokens: 400, timeout: 5, num_retries: 1}}\n")
        runnable, _ = load_roster().available({})
        llm, _ = load_roster(roster).available({})
        contestants = [build_contestant(s) for s in [*runnable, *llm]] + [TightStops(),
                                                                          StandingsWatcher()]
        lake = Lake(root)
        sub = universe.select(SYMBOLS)
        replay_season(SyntheticProvider(), sub, contestants, daily_cycles(START, DAYS), lake=lake)
    times = daily_cycles(START, DAYS)
    outputs = finish_season(lake, "synthetic", sub, times, players=PLAYERS,
                            arena_players=ARENA_PLAYERS)
    return lake, Ledger(lake), times, outputs, [c.name for c in contestants]


def _warehouse(lake: Lake) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(lake.root / "warehouse.duckdb"), read_only=True)


def test_the_season_has_automatic_closes_and_an_llm(season):
    lake, ledger, _, _, names = season
    auto = ledger.table("fills", monitor=True)
    assert (auto["contestant"] == "tight-stops").sum() >= 2
    trades = read_marts(lake)["trades"]
    closed_auto = trades[trades["closed_by"] == "automatic"]
    assert len(closed_auto) == len(auto[auto["contestant"] == "tight-stops"])
    calls = read_marts(lake)["model_calls"].set_index("contestant")
    llm = calls.loc["stub-llm"]
    # it opens ETH every day: once it holds ETH that is rejected, in the answer and in the repair
    assert llm["tokens_in"] > 0 and llm["repair_rounds"] == DAYS - 1
    assert llm["rejections"] == 2 * (DAYS - 1)
    assert llm["calls"] == DAYS + llm["repair_rounds"]
    assert set(read_marts(lake)["leaderboard"]["contestant"]) == set(names)
    # cycles by outcome: the mart counts what the ledger's records say, one vocabulary
    recorded = ledger.table("outcome").groupby(["contestant", "status"]).size()
    for name in names:
        by_status = recorded.loc[name].to_dict()
        assert set(by_status) <= {"traded", "no_trade", "forfeited", "skipped"}
        assert {s: int(calls.loc[name, s]) for s in ("traded", "no_trade", "forfeited", "skipped")
                } == {s: by_status.get(s, 0) for s in ("traded", "no_trade", "forfeited", "skipped")}
    assert llm["traded"] >= 1 and calls.loc["momentum", "cycles"] == DAYS


def assert_fold_matches_marts(lake: Lake, ledger: Ledger, names, times) -> int:
    """The engine's Python fold (``Ledger.portfolio(until=...)``) marked at the cycle prices
    against ``equity_daily`` and ``positions``, every contestant and cycle; returns how many
    positions were compared."""
    prices = read_analytics(lake, "cycle_prices").pivot(index="cycle_at", columns="symbol",
                                                        values="price")
    with _warehouse(lake) as con:
        equity = con.execute("select contestant, cycle_at, cash, equity, positions, fees_paid, "
                             "realised_pnl from marts.equity_daily").df()
        positions = con.execute("select contestant, cycle_at, symbol, side, quantity, entry_price, "
                                "market_value, invalidation_price, opened_at, thesis, trip "
                                "from marts.positions").df()
    equity = equity.set_index(["contestant", "cycle_at"])
    positions = positions.set_index(["contestant", "cycle_at", "symbol"])
    assert len(equity) == len(names) * len(times)  # every contestant on the season's window
    checked = 0
    for name in names:
        for at in times:
            book = ledger.portfolio(name, until=at)
            marks = prices.loc[at].dropna().to_dict()
            row = equity.loc[(name, at)]
            assert row["cash"] == pytest.approx(book.cash, abs=0.005), (name, at)
            assert row["equity"] == pytest.approx(book.equity(marks), abs=0.005), (name, at)
            assert row["fees_paid"] == pytest.approx(book.fees_paid, abs=0.005)
            assert row["realised_pnl"] == pytest.approx(book.realised_pnl, abs=0.005)
            assert row["positions"] == len(book.positions)
            for symbol, p in book.positions.items():
                mart = positions.loc[(name, at, symbol)]
                assert mart["side"] == p.side
                assert mart["quantity"] == pytest.approx(p.quantity, rel=1e-12)
                assert mart["entry_price"] == pytest.approx(p.entry_price, rel=1e-12)
                assert mart["market_value"] == pytest.approx(p.value(marks[symbol]), abs=0.005)
                assert pd.Timestamp(mart["opened_at"]) == p.opened_at
                assert (mart["thesis"] or "") == p.thesis
                if p.invalidation_price is None:
                    assert pd.isna(mart["invalidation_price"])
                else:
                    assert mart["invalidation_price"] == pytest.approx(p.invalidation_price)
                checked += 1
    return checked


def assert_trades_match_round_trips(lake: Lake, ledger: Ledger, names) -> int:
    """``trades`` against :func:`round_trips` / :func:`open_trips`; returns the closed trips."""
    trades = read_marts(lake)["trades"]
    total = 0
    for name in names:
        fills = ledger.fills(name)
        trips = sorted(round_trips(fills), key=lambda t: (t.closed_at, t.symbol))
        mine = trades[(trades["contestant"] == name) & (trades["status"] == "closed")]
        mine = mine.sort_values(["closed_at", "symbol"])
        assert len(mine) == len(trips)
        for trip, row in zip(trips, mine.itertuples(), strict=True):
            assert (row.symbol, row.side) == (trip.symbol, trip.side)
            assert pd.Timestamp(row.opened_at) == trip.opened_at
            assert pd.Timestamp(row.closed_at) == trip.closed_at
            for field in ("entry_price", "exit_price", "quantity"):
                assert getattr(row, field) == pytest.approx(getattr(trip, field), rel=1e-12)
            for field in ("fees", "gross_pnl", "net_pnl"):
                assert getattr(row, field) == pytest.approx(getattr(trip, field), abs=0.005)
            assert (row.closed_by == "automatic") == trip.automatic
            # the reasoning key of the last close: its monitor window, or its decision
            if trip.automatic:
                assert row.exit_round == "monitor" and pd.isna(row.exit_cycle_at)
                assert pd.Timestamp(row.exit_window_end) >= trip.closed_at
            else:
                assert pd.Timestamp(row.exit_cycle_at) == trip.closed_at
                assert pd.isna(row.exit_window_end)
        still = trades[(trades["contestant"] == name) & (trades["status"] == "open")]
        assert set(still["symbol"]) == set(open_trips(fills))
        total += len(trips)
    return total


def test_the_python_fold_and_the_dbt_marts_agree_to_the_cent(season):
    lake, ledger, times, _, names = season
    assert assert_fold_matches_marts(lake, ledger, names, times) > 20  # not an empty loop


def test_a_lake_without_a_season_config_knows_no_models_cutoff(season):
    """Replayed without a season config, the lake has no roster copy to judge: the knowledge
    table has no rows, and the leaderboard says so rather than judging (the demo's configured
    season is judged: tests/test_readme.py)."""
    lake, *_, names = season
    board = read_marts(lake)["leaderboard"].set_index("contestant")
    assert not board["contaminated"].any() and board["knowledge_cutoff"].isna().all()
    assert set(board.loc[names, "contamination"]) == {
        "not in the season's roster copy: no model known"}


def test_the_leaderboard_matches_the_python_metrics(season, universe):
    lake, ledger, times, _, names = season
    prices = read_analytics(lake, "cycle_prices").pivot(index="cycle_at", columns="symbol",
                                                        values="price")
    zero_skill = read_analytics(lake, "arena_luck")["final_return"].to_numpy()
    assert len(zero_skill) == ARENA_PLAYERS
    tradable = [s for s in prices.columns if universe[s].tradable]
    board = read_marts(lake)["leaderboard"].set_index("contestant")
    equity = read_marts(lake)["equity_daily"]
    for name in names:
        curve = equity[equity["contestant"] == name].set_index("cycle_at")["equity"].sort_index()
        series = pd.concat([pd.Series([10_000.0], index=[times[0]]), curve])
        fills = ledger.fills(name)
        expected = leaderboard_metrics(series, fills, btc=prices["BTC"], spy=prices["SPY"],
                                       universe=prices[tradable])
        row = board.loc[name]
        for metric, column in (("return", "total_return"), ("max_drawdown", "max_drawdown"),
                               ("excess_vs_btc", "excess_vs_btc"),
                               ("excess_vs_spy", "excess_vs_spy"),
                               ("excess_vs_universe", "excess_vs_universe")):
            assert row[column] == pytest.approx(expected[metric], abs=1e-12), (name, metric)
        if expected["sharpe"] is None:
            assert pd.isna(row["sharpe"])
        else:
            assert row["sharpe"] == pytest.approx(expected["sharpe"], rel=1e-9)
        if expected["win_rate"] is None:
            assert pd.isna(row["win_rate"])
        else:
            assert row["win_rate"] == pytest.approx(expected["win_rate"])
        # the mart's fills are the metrics' trade count: every fill, automatic closes included
        assert row["fills"] == expected["trades"] and row["round_trips"] == expected["round_trips"]
        p = percentile(expected["return"], zero_skill)
        assert row["zero_skill_percentile"] == pytest.approx(p, abs=1e-12)
        assert row["rank_score"] == pytest.approx(rank_score(p, ARENA_PLAYERS), abs=1e-12)
    rivals = board[board["role"] == "contestant"]
    assert list(rivals.sort_values("place")["total_return"]) == \
        sorted(rivals["total_return"], reverse=True)


def test_the_leaderboard_places_the_contestants_among_themselves_and_marks_the_rulers(season):
    """Every player keeps its row; the house rules are rulers, with no place; the contestants
    are placed 1 + the contestants with a higher return, though rulers did better than one."""
    from arena.reporting.leaderboard import sorted_board

    lake, *_ = season
    board = read_marts(lake)["leaderboard"].set_index("contestant")
    assert board["role"].to_dict() == {**dict.fromkeys(RULERS, "ruler"),
                                       **dict.fromkeys(RIVALS, "contestant")}
    rivals = board.loc[RIVALS]
    for name, row in rivals.iterrows():
        assert row["place"] == 1 + (rivals["total_return"] > row["total_return"]).sum(), name
    assert board.loc[RULERS, "place"].isna().all()
    # the watcher holds (0%); rulers did better than it, and it is still second, not lower
    assert board.loc["standings-watcher", "total_return"] == 0.0
    assert (board.loc[RULERS, "total_return"] > 0.0).any()
    assert board.loc["standings-watcher", "place"] == 2
    with _warehouse(lake) as con:
        assert con.execute("select contestant, role, place from marts.leaderboard where role = "
                           "'contestant' order by place").fetchall() == \
            [(n, "contestant", int(board.loc[n, "place"])) for n in
             sorted(RIVALS, key=lambda n: board.loc[n, "place"])]
    ordered = sorted_board(read_marts(lake)["leaderboard"])
    assert list(ordered["contestant"][:2]) == sorted(RIVALS, key=lambda n: board.loc[n, "place"])
    rulers = ordered.iloc[2:]
    assert set(rulers["contestant"]) == set(RULERS)
    assert list(rulers["total_return"]) == sorted(rulers["total_return"], reverse=True)


def test_a_follower_is_handed_the_contestants_standings_never_the_rulers(season):
    """The standings a follower plays from (a reverse's ``mirror_of: worst``) hold the
    contestants that answered before it, never a house rule: none on the first day (no
    earlier cycle), the LLM on every later one."""
    _, ledger, times, _, _ = season
    seen = [json.loads(ledger.responses("standings-watcher", at)["answer"])["reasoning"]
            for at in times]
    assert seen == ["standings of: none"] + ["standings of: stub-llm"] * (DAYS - 1)


def test_the_report_and_the_terminal_show_the_contestants_first_and_the_rulers_apart(season,
                                                                                      capsys):
    from arena.cli._render import print_leaderboard
    from arena.reporting.layout import fmt

    lake, *_, outputs, _ = season
    board = read_marts(lake)["leaderboard"].set_index("contestant")
    rivals = sorted(RIVALS, key=lambda n: board.loc[n, "place"])
    rulers = sorted(RULERS, key=lambda n: (-board.loc[n, "total_return"], n))
    best = rivals[0]
    html = outputs.report.read_text()
    summary = " ".join(re.sub(r"<[^>]+>", " ", html.split('<section id="summary">')[1]
                              .split("</section>")[0]).split())
    assert f"{best} leads the contestants after {DAYS} cycles" in summary
    assert f"with {fmt(board.loc[best, 'total_return'], 'return')}" in summary
    assert (f"The best of the house rules, which play beside them as rulers (the yardstick, not "
            f"ranked), was {rulers[0]} with {fmt(board.loc[rulers[0], 'total_return'], 'return')}"
            ) in summary
    assert "2 contestants, 6 rulers" in summary
    section = html.split('<section id="leaderboard">')[1].split("</section>")[0]
    contestants_table, rulers_table = section.split("</table>")[:2]
    assert "<caption>Contestants</caption>" in contestants_table
    assert "<caption>Rulers: the house rules" in rulers_table
    assert re.findall(r'href="#contestant-([^"]+)"', contestants_table) == rivals
    assert re.findall(r'href="#contestant-([^"]+)"', rulers_table) == rulers
    print_leaderboard(read_marts(lake)["leaderboard"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith(f"best contestant: {best}, ")
    start = lines.index("contestants")
    band = lines.index("rulers: the house rules, the yardstick beside the contestants "
                       "(not ranked)")
    assert [ln.split()[:2] for ln in lines[start + 2:band - 1]] == [
        [str(int(board.loc[n, "place"])), n] for n in rivals]
    assert [ln.split()[:2] for ln in lines[band + 2:]] == [["–", n] for n in rulers]


def test_the_daily_reports_rank_the_contestants_and_name_a_contestant_as_the_leader(season):
    """Each day the standings list the contestants, then the rulers under their own heading;
    the leader is the contestant with the highest equity, even on a day a ruler had more."""
    lake, ledger, times, _, _ = season
    passed_over = 0
    for at in times:
        text = (lake.root / "reports" / "daily" / f"{at:%Y-%m-%d}.md").read_text()
        standings = text.split("## Standings")[1].split("## Rulers")[0]
        ruled = text.split("## Rulers")[1].split("## Who leads")[0]
        assert sorted(re.findall(r"^\| \d \| ([a-z-]+) ", standings, re.M)) == sorted(RIVALS)
        assert sorted(re.findall(r"^\| ([a-z-]+) +\|", ruled, re.M)[1:]) == sorted(RULERS)
        equity = {n: ledger.record_rows("equity", at, n)[-1]["equity"] for n in RIVALS + RULERS}
        leader = max(RIVALS, key=lambda n: (equity[n], n == "stub-llm"))
        assert f"* **{leader}** leads: " in text
        passed_over += max(equity[n] for n in RULERS) > equity[leader]
    assert passed_over  # a day on which a ruler did better than the leading contestant


def test_the_leaderboard_says_the_season_ran_on_synthetic_prices(season):
    lake, *_ = season
    assert set(read_analytics(lake, "season")["market"]) == {"SYNTHETIC"}
    assert set(read_marts(lake)["leaderboard"]["market"]) == {"SYNTHETIC"}
    with _warehouse(lake) as con:
        assert con.execute("select distinct market from marts.leaderboard").fetchall() == [
            ("SYNTHETIC",)]


def test_the_market_vocabulary_of_the_mart_is_the_providers():
    """The leaderboard's accepted ``market`` parts are the labels of the providers there are (a
    season of several providers is labelled with each, joined by ``+``)."""
    import yaml

    from arena.data.providers import SOURCES, market_label

    docs = yaml.safe_load((DBT_PROJECT / "models" / "marts" / "leaderboard.yml").read_text())
    board = next(m for m in docs["models"] if m["name"] == "leaderboard")
    market = next(c for c in board["columns"] if c["name"] == "market")
    accepted = next(t["parts_accepted"] for t in market["data_tests"]
                    if isinstance(t, dict) and "parts_accepted" in t)
    assert "not_null" in market["data_tests"]
    assert sorted(accepted["arguments"]["values"]) == sorted(market_label(s) for s in SOURCES)
    assert market_label("synthetic") == "SYNTHETIC"
    assert {market_label(s) for s in ("yfinance", "ccxt", "files")} == {"yfinance", "ccxt", "files"}


def test_trades_are_the_engines_round_trips(season):
    lake, ledger, _, _, names = season
    assert assert_trades_match_round_trips(lake, ledger, names) >= 5


def test_luck_tables_land_in_the_marts(season):
    lake, *_ = season
    marts = read_marts(lake)
    assert "luck_ceiling" not in marts  # renamed: the per-asset ceilings are named apart
    luck = marts["asset_luck_ceilings"]
    assert set(luck["symbol"]) == {s for s in SYMBOLS if s not in ("BTC", "SPY")}
    assert (luck["players"] == PLAYERS).all() and (luck["luck_ceiling"] == luck["q95_return"]).all()
    assert (luck["q05_return"] < luck["q50_return"]).all()
    assert (luck["q50_return"] < luck["luck_ceiling"]).all()
    assert set(luck["grid"]) == {"1h"}
    rules = marts["reference_rules"]
    assert rules.groupby("symbol").size().nunique() == 1 and len(rules) >= 16 * len(luck)
    assert rules["percentile"].between(0, 1).all()
    # the season's market reaches back the longest rule's window: every rule has a result, and
    # 12-month momentum is not flat on every asset for want of history (it was: issue 27)
    assert (rules["status"] == "scored").all()
    assert (rules["history_bars"] >= rules["needed_bars"]).all()
    momentum = rules[rules["rule"] == "absolute_momentum_12m"]
    assert (momentum["turnover"] > 0).any()
    band = marts["zero_skill_band"]
    assert len(band) == DAYS and (band["q05_equity"] <= band["q50_equity"]).all()
    assert (band["q50_equity"] <= band["q95_equity"]).all()
    corr = marts["asset_correlations"]
    diag = corr[corr["symbol_a"] == corr["symbol_b"]]["correlation"]
    assert np.allclose(diag, 1.0)


ANALYST = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
query = "select count(*), round(sum(total_return), 9) from marts.leaderboard"
print(con.execute(query).fetchone(), flush=True)
sys.stdin.readline()  # the pipeline rebuilds and publishes meanwhile
print(con.execute(query).fetchone(), flush=True)
"""


def test_the_warehouse_copy_stays_readable_while_the_marts_are_rebuilt(season):
    import subprocess
    import sys

    lake, *_ = season
    # an analyst's session on the published copy, in a process of its own (DuckDB's file lock)
    analyst = subprocess.Popen([sys.executable, "-c", ANALYST, str(lake.root / "warehouse.duckdb")],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        before = analyst.stdout.readline()
        assert before.startswith("(")
        result = build_marts(lake)  # rebuilt and published while the analyst holds the file
        # trades, equity, replicates and the band by contestant
        assert result.count("model") >= 25 and result.count("unit_test") == 4
        out, _ = analyst.communicate("go\n", timeout=60)
    finally:
        analyst.kill()
    assert analyst.returncode == 0 and out.strip() == before.strip()
    with _warehouse(lake) as con:
        schemas = {r[0] for r in con.execute(
            "select distinct table_schema from information_schema.tables").fetchall()}
        # the rebuilt copy holds the same numbers (to the last bits DuckDB's parallel sums may
        # differ in)
        again = "select count(*), round(sum(total_return), 9) from marts.leaderboard"
        assert str(con.execute(again).fetchone()) == before.strip()
    assert {"marts", "main", "staging", "intermediate"} <= schemas
    assert (lake.root / "marts" / "leaderboard.parquet").is_file()


def test_a_failing_dbt_test_publishes_nothing(season, tmp_path):
    import shutil

    lake, *_ = season
    broken = Lake(tmp_path / "lake")
    shutil.copytree(lake.root, broken.root)
    published = hashlib.sha256((broken.root / "warehouse.duckdb").read_bytes()).hexdigest()
    # the engine's recorded equity of one record no longer matches its fills
    path = next((broken.root / "ledger" / "cycles").glob("cycle=*/contestant=momentum/equity.parquet"))
    table = pq.ParquetFile(path).read()  # the file alone (no hive keys from its path)
    frame = table.to_pandas()
    frame["equity"] += 1.0
    pq.write_table(pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False), path)
    # the ledger's rows gathered for dbt copied the record as committed: gathered again here
    # (as for a new lake), the changed file no longer hashes as its record's link says
    shutil.rmtree(broken.root / "dbt" / "ledger")
    with pytest.raises(MartsError, match=rf"the ledger is damaged.*{path} has changed"):
        build_marts(broken)
    assert hashlib.sha256((broken.root / "warehouse.duckdb").read_bytes()).hexdigest() == published
    # a record written that way (an engine whose snapshot disagrees with its fills: its link
    # made over the wrong value) passes the chain, and dbt's own test stops the build
    from arena.ledger.chain import make_link, read_link

    make_link(path.parent, read_link(path.parent).key, read_link(path.parent).previous)
    with pytest.raises(MartsError, match="equity_matches_the_engines_snapshots"):
        build_marts(broken)
    assert hashlib.sha256((broken.root / "warehouse.duckdb").read_bytes()).hexdigest() == published


def test_a_lake_of_another_season_is_refused(season, universe):
    lake, *_ = season
    with pytest.raises(SeasonError, match="another season"):
        replay_season(SyntheticProvider(), universe.select(SYMBOLS), [TightStops()],
                      daily_cycles("2026-11-01", 2), lake=lake)


def test_daily_reports_say_who_leads_and_why(season):
    lake, _, times, _, names = season
    files = sorted((lake.root / "reports" / "daily").glob("*.md"))
    assert [f.stem for f in files] == [f"{t:%Y-%m-%d}" for t in times]
    text = files[-1].read_text()
    for heading in ("## Standings", "## Who leads and lags", "## Key trades",
                    "## From the reasoning", "## Market context"):
        assert heading in text
    assert all(name in text for name in names)
    assert "Steady: a small ETH position." in text  # the LLM's own reasoning is quoted
    assert "automatic close" in "".join(f.read_text() for f in files)


_PROBE = """() => {
    const out = {missing: [], files: [], board: [], decisionLinks: 0};
    for (const a of document.querySelectorAll("a[href]")) {
        const href = a.getAttribute("href");
        if (href.startsWith("#")) {
            if (!document.getElementById(href.slice(1))) out.missing.push(href);
            if (href.startsWith("#d-")) out.decisionLinks += 1;
        } else out.files.push(href);
    }
    for (const table of document.querySelectorAll("#leaderboard table")) {
        out.board.push([...table.querySelectorAll("tbody tr")].map(
            (tr) => [...tr.children].map((td) => [td.textContent, td.dataset.value ?? null])));
    }
    out.trades = document.querySelectorAll("#key-trades tbody tr").length;
    out.tradeLinks = document.querySelectorAll('#key-trades a[href^="#d-"]').length;
    return out;
}"""


def test_the_season_report_renders_in_a_real_browser(season, tmp_path):
    """Headless Chromium at 1280 px: no console error, no request outside the file, nothing
    scrolls sideways, every chart drawn, every link resolves (to an element of the page or a
    file beside it), and the leaderboard's numbers are the mart's, read back from the DOM."""
    from arena.reporting.layout import fmt
    from arena.reporting.leaderboard import LEADERBOARD, bands
    from tests.browser import load_page

    lake, *_ = season
    *_, outputs, _ = season
    html = outputs.report.read_text()
    assert html.startswith("<!doctype html>")
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", html)  # nothing fetched
    for section in ("Leaderboard", "Equity against the benchmarks", "Drawdowns",
                    "Activity and cost", "Key trades", "Open positions at the end",
                    "Contestants", "Rulers", "Luck ceiling per asset", "Reference rules",
                    "Asset correlations", "Model calls", "Daily reports",
                    "Conventions and limits"):
        assert f">{section}</a></h2>" in html, section
    for outcome in ("traded", "no trade", "forfeited", "skipped"):  # the model calls' columns
        assert f">{outcome}<" in html
    assert not re.search(r">[-+]0\.0+%?<", html) and "+00:00" not in html  # no "-0.00"
    result = load_page(outputs.report, tmp_path / "season.png", width=1280, evaluate=_PROBE)
    assert result.console_errors == [] and result.page_errors == []
    assert result.external_requests == []
    assert result.scroll_width <= 1280  # nothing scrolls sideways
    # equity, drawdowns, two scatters, the rules heatmap, the correlations
    assert result.svg_count == 6
    probe = result.probe
    assert probe["missing"] == []
    assert probe["files"] and all((outputs.report.parent / f).is_file() for f in probe["files"])
    assert probe["trades"] > 0 and probe["tradeLinks"] == probe["trades"]
    assert probe["decisionLinks"] >= probe["trades"]
    # the contestants' table, every column; the rulers', all but the place
    (_, rivals), (_, rulers) = bands(read_marts(lake)["leaderboard"])
    shown = [(row, LEADERBOARD, cells) for row, cells in
             zip(rivals.to_dict("records"), probe["board"][0], strict=True)]
    shown += [(row, LEADERBOARD[1:], cells) for row, cells in
              zip(rulers.to_dict("records"), probe["board"][1], strict=True)]
    assert len(shown) == len(read_marts(lake)["leaderboard"])
    for row, columns, cells in shown:
        for column, (text, value) in zip(columns, cells, strict=True):
            expected = row[column.key]
            if value is None:  # text, or a missing number
                assert text == fmt(expected, column.kind), (row["contestant"], column.key)
                continue
            # the page writes its own number, which is the mart's (another test of the module
            # may have rebuilt the marts since: DuckDB's parallel sums differ in the last bits)
            assert text == fmt(float(value), column.kind), (row["contestant"], column.key)
            assert float(value) == pytest.approx(float(expected), rel=1e-9, abs=1e-12), \
                (row["contestant"], column.key)


def test_every_trade_links_to_the_decision_that_opened_it(season):
    """Each trade's "decision" link lands on the row of the decision whose thesis it quotes,
    in its contestant's section; each daily report's page links back to the season report."""
    from arena.reporting.people import decision_anchor

    lake, *_, outputs, _ = season
    html = outputs.report.read_text()
    marts = read_marts(lake)
    decisions = marts["decisions"].set_index(["contestant", "cycle_at", "round",
                                              "decision_index"])
    for t in marts["trades"].itertuples():
        anchor = decision_anchor(t.contestant, t.entry_cycle_at, t.entry_round,
                                 t.entry_decision_index)
        assert f'<tr id="{anchor}">' in html, anchor
        assert f'href="#{anchor}"' in html, anchor
        decision = decisions.loc[(t.contestant, t.entry_cycle_at, t.entry_round,
                                  t.entry_decision_index)]
        assert decision["symbol"] == t.symbol and decision["thesis"] == t.thesis
    # an automatic close is in the daily report of the monitor window it happened in
    from arena.reporting.layout import fmt

    automatic = marts["trades"][marts["trades"]["closed_by"] == "automatic"]
    assert len(automatic)
    for t in automatic.itertuples():
        assert (f'<a href="daily/{t.exit_window_end:%Y-%m-%d}.html">{fmt(t.closed_at, "time")}'
                "</a>") in html
    days = sorted((lake.root / "reports" / "daily").glob("*.html"))
    assert days and all('<a href="../season.html">Season report</a>' in d.read_text()
                        for d in days)


def test_the_season_report_says_synthetic_only_on_a_synthetic_season(season):
    from arena.reporting.season import ReportError, season_report

    lake, *_ = season
    html = (lake.root / "reports" / "season.html").read_text()
    banner = '<p class="banner" role="alert">SYNTHETIC market data: not real prices</p>'
    assert banner in html and html.index(banner) < html.index("<h1>")  # above everything
    assert "market: SYNTHETIC" in html
    marts = read_marts(lake)
    real = season_report({**marts, "leaderboard": marts["leaderboard"].assign(market="yfinance")})
    assert "SYNTHETIC" not in real and 'class="banner"' not in real
    assert "market: yfinance" in real
    # a leaderboard that cannot say whose prices these are is refused, not rendered unlabelled
    with pytest.raises(ReportError, match="market"):
        season_report({**marts, "leaderboard": marts["leaderboard"].drop(columns="market")})


def test_the_season_report_ends_with_the_storage_verdict_of_a_served_season(season, tmp_path):
    """A replay was never served: no storage section. A served season's report closes with the
    last start's persistence verdict (the lake's boot record)."""
    from arena.data.persistence import record_boot
    from arena.reporting.season import write_season_report

    lake, *_ = season
    assert '<section id="storage">' not in (lake.root / "reports" / "season.html").read_text()
    served = Lake(tmp_path / "served")
    shutil.copytree(lake.root / "marts", served.root / "marts")
    record_boot(served, 4, dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    html = write_season_report(served).read_text()
    assert '<section id="storage">' in html and "storage volatile at boot 5" in html


def test_a_publication_renders_again_only_the_daily_pages_that_changed(season, tmp_path):
    """Each daily page keeps its digest: writing the report again leaves an unchanged day's
    page untouched (the same file), renders a day whose Markdown changed and a page that was
    deleted; a report written elsewhere links to the same pages."""
    from arena.reporting.season import PAGES_FILE, write_season_report

    lake, *_ = season
    copy = Lake(tmp_path / "copy")
    for folder in ("marts", "reports"):
        shutil.copytree(lake.root / folder, copy.root / folder)
    write_season_report(copy)
    daily = copy.root / "reports" / "daily"
    pages = sorted(daily.glob("*.html"))
    first, changed, deleted = pages[0], pages[1], pages[2]
    inode = {p: p.stat().st_ino for p in pages}
    md = changed.with_suffix(".md")
    md.write_text(md.read_text() + "\nA line added after the fact.\n")
    deleted.unlink()
    write_season_report(copy)
    assert first.stat().st_ino == inode[first]  # not written again
    assert changed.stat().st_ino != inode[changed]
    assert "A line added after the fact." in changed.read_text()
    assert deleted.is_file()
    digests = json.loads((daily / PAGES_FILE).read_text())
    assert sorted(digests) == [p.stem for p in pages]
    elsewhere = tmp_path / "out" / "deep" / "season.html"
    html = write_season_report(copy, elsewhere).read_text()
    assert first.stat().st_ino == inode[first]  # the pages link to the lake's own report
    link = os.path.relpath(first, elsewhere.parent)
    assert f'href="{link}"' in html and (elsewhere.parent / link).resolve() == first.resolve()


def test_daily_reports_say_synthetic_only_on_a_synthetic_market(season, universe, tmp_path):
    from arena.reporting.daily import daily_report

    lake, ledger, times, _, _ = season
    banner = "> **SYNTHETIC market data: not real prices**"
    for at in times:
        text = (lake.root / "reports" / "daily" / f"{at:%Y-%m-%d}.md").read_text()
        assert text.splitlines()[:3] == [f"# Daily report {at:%Y-%m-%d} 16:00 UTC", "", banner]
    # the same bars under a real provider's name (a files drop): the same report, not synthetic
    real = Lake(tmp_path / "lake")
    (real.root / "bars").mkdir(parents=True)
    (real.root / "bars" / "provider=files").symlink_to(lake.root / "bars" / "provider=synthetic")
    synthetic = daily_report(ledger, lake, "synthetic", universe.select(SYMBOLS), times[-1])
    text = daily_report(ledger, real, "files", universe.select(SYMBOLS), times[-1])
    assert "SYNTHETIC" not in text and "synthetic" not in text.lower()
    assert text.splitlines()[2] == "Market data: files."
    assert text.replace("Market data: files.", banner) == synthetic


def test_season_outputs_report_their_timings(season):
    *_, outputs, _ = season
    for step in ("luck", "dbt", "report"):
        assert outputs.seconds[step] > 0 and math.isfinite(outputs.seconds[step])
    assert Path(outputs.analytics).is_dir()


def test_daily_reports_are_written_without_hindsight(season, universe):
    """A day's report regenerated after the season (as a resumed replay does) says exactly what
    it said that day: every number comes from the ledger up to that cycle."""
    from arena.reporting.daily import daily_report

    lake, ledger, times, _, _ = season
    for at in times[:-1]:
        written = (lake.root / "reports" / "daily" / f"{at:%Y-%m-%d}.md").read_text()
        assert daily_report(ledger, lake, "synthetic", universe.select(SYMBOLS), at) == written


# ------------------------------------------------------------------ the fold's hard cases
def _fill(book, at, symbol, side, kind, quantity, price, *, level=None, thesis="", automatic=False):
    """A fill as the broker makes it (fee, realised P&L from the book), and the book after it."""
    from arena.engine.portfolio import Fill, fee

    draft = Fill(at, symbol, side, kind, quantity, price, fee(quantity * price), 0.0, 0,
                 automatic, level, thesis, "")
    after = book.apply(draft)
    fill = Fill(at, symbol, side, kind, quantity, price, draft.fee,
                after.realised_pnl - book.realised_pnl, 0, automatic, level, thesis, "")
    return after, fill


@pytest.fixture(scope="module")
def crafted(season, tmp_path_factory):
    """A hand-written ledger on the season's prices that reaches every case of the fold: adds
    after partial closes, a short partly closed then closed by the monitor, level moves in a
    repair round, a partial close and a level move of one symbol in one round, a monitor close at
    the window's end and a re-open in the cycle at that time,
    closes within the 1e-12 tolerance (over and under), a re-open on the other side, and a
    contestant whose first record comes late, with a forfeited cycle."""
    import shutil

    from arena.engine.broker import LevelMove
    from arena.engine.portfolio import ADD, CLOSE, LONG, OPEN, SHORT
    from arena.ledger.records import CycleRecord, MonitorRecord, equity_snapshot

    source, _, times, _, _ = season
    lake = Lake(tmp_path_factory.mktemp("crafted") / "lake")
    lake.root.mkdir(parents=True)
    shutil.copytree(source.root / "analytics", lake.root / "analytics")
    (lake.root / "bars").symlink_to(source.root / "bars")
    ledger = Ledger(lake)
    marks = read_analytics(lake, "cycle_prices").pivot(index="cycle_at", columns="symbol",
                                                       values="price")

    def cycle(name, k, rounds=None, levels=None, status="traded"):
        at = times[k]
        book = ledger.portfolio(name)
        fills, decisions, moves_of = {}, {}, {}
        for rnd, specs in (rounds or {}).items():
            fills[rnd] = []
            for symbol, side, kind, quantity, price, *extra in specs:
                options = extra[0] if extra else {}
                book, fill = _fill(book, at, symbol, side, kind, quantity, price, **options)
                fills[rnd].append(fill)
            decisions[rnd] = [{"action": kind, "symbol": spec[0]} for spec in specs]
        for rnd, moves in (levels or {}).items():
            for symbol, level in moves:
                decisions.setdefault(rnd, []).append(
                    {"action": "hold", "symbol": symbol, "invalidation_price": level})
                moves_of.setdefault(rnd, []).append(
                    LevelMove(len(decisions[rnd]) - 1, symbol, level))
                book = book.with_level(symbol, level)
        record = CycleRecord(name, at, status, fills=fills, decisions=decisions, levels=moves_of,
                             equity=equity_snapshot(book, marks.loc[at].dropna().to_dict()))
        ledger.record_cycle(at, name, lambda: record)

    def monitor(name, k, closes):
        start, end = times[k - 1], times[k]
        book, fills = ledger.portfolio(name), []
        for after, symbol, side, quantity, price in closes:
            book, fill = _fill(book, start + after, symbol, side, CLOSE, quantity, price,
                               automatic=True)
            fills.append(fill)
        ledger.record_monitor(start, end, name, lambda: MonitorRecord(name, start, end, fills))

    hour = pd.Timedelta(hours=1)
    cycle("x", 0, {"answer": [("BTC", LONG, OPEN, 0.01, 64_000.0, {"level": 60_000.0, "thesis": "btc"}),
                              ("ETH", SHORT, OPEN, 0.2, 3_000.0, {"level": 3_300.0, "thesis": "eth"})]})
    monitor("x", 1, [])
    cycle("x", 1, {"answer": [("ETH", SHORT, CLOSE, 0.05, 3_050.0),
                              ("BTC", LONG, ADD, 0.005, 66_000.0, {"level": 61_000.0})]},
          levels={"repair": [("ETH", 3_400.0)]})
    monitor("x", 2, [])
    cycle("x", 2, {"answer": [("BTC", LONG, CLOSE, 0.007, 65_500.0),
                              ("SOL", LONG, OPEN, 5.0, 150.0, {"level": 140.0, "thesis": "sol"})],
                   "repair": [("BTC", LONG, ADD, 0.002, 65_800.0, {"level": 62_000.0,
                                                                   "thesis": "btc again"})]})
    # the monitor closes the rest of the short inside the window, SOL at the window's end ...
    monitor("x", 3, [(5 * hour, "ETH", SHORT, 0.15, 3_420.0), (24 * hour, "SOL", LONG, 5.0, 139.0)])
    # ... and the cycle at that same time opens SOL again (its second trip)
    cycle("x", 3, {"answer": [("SOL", LONG, OPEN, 3.0, 141.0, {"level": 130.0, "thesis": "sol 2"})]})
    monitor("x", 4, [])
    btc, sol = (ledger.portfolio("x").positions[s].quantity for s in ("BTC", "SOL"))
    cycle("x", 4, {"answer": [("BTC", LONG, CLOSE, btc * (1 + 5e-13), 65_000.0),
                              ("SOL", LONG, CLOSE, sol * (1 - 5e-13), 138.0)]})
    monitor("x", 5, [])
    cycle("x", 5, {"answer": [("BTC", SHORT, OPEN, 0.01, 64_500.0, {"level": 70_000.0})]},
          levels={"repair": [("BTC", 68_000.0)]})
    cycle("late", 2, {"answer": [("ETH", LONG, OPEN, 0.5, 3_100.0, {"level": 2_900.0})]})
    cycle("late", 3, status="forfeited")
    # a partial close and a hold moving the level of the rest, in the same round (closes first)
    cycle("late", 4, {"answer": [("ETH", LONG, CLOSE, 0.2, 3_200.0)]},
          levels={"answer": [("ETH", 3_050.0)]})
    cycle("late", 5, {"answer": [("ETH", LONG, CLOSE, 0.3, 3_150.0)]})
    build_marts(lake)
    return lake, ledger, times, ["late", "x"]


def test_the_fold_matches_the_engine_in_its_hard_cases(crafted):
    lake, ledger, times, names = crafted
    fold = read_marts(lake)["positions"]
    assert assert_fold_matches_marts(lake, ledger, names, times) >= 10
    assert assert_trades_match_round_trips(lake, ledger, names) == 5
    # the within-tolerance closes really closed, and SOL's second trip is numbered as such
    last = fold[fold["cycle_at"] == times[4]]
    assert set(last[last["contestant"] == "x"]["symbol"]) == set()
    assert set(fold[fold["symbol"] == "SOL"]["trip"]) == {1, 2}
    # the late contestant holds its start cash until its first record, on the season's window
    with _warehouse(lake) as con:
        early = con.execute("select equity from marts.equity_daily where contestant = 'late' "
                            f"and cycle_at < '{times[2].isoformat()}'").fetchall()
        trip = con.execute("select exit_round, exit_window_end from marts.trades "
                           "where contestant = 'x' and symbol = 'ETH'").fetchall()
    assert early == [(10_000.0,), (10_000.0,)]
    held = fold[(fold["contestant"] == "late") & (fold["cycle_at"] == times[4])]
    assert held[["symbol", "quantity", "invalidation_price"]].values.tolist() == [["ETH", 0.3, 3_050.0]]
    # ETH was partly closed by a decision, then by the monitor: the link is the monitor window
    assert trip[0][0] == "monitor" and pd.Timestamp(trip[0][1]) == times[3]
