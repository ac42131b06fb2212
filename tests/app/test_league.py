"""A league through real lakes: two short live seasons, the second started where the first
ended (`arena season init --league`), each played and closed by the command line on the
synthetic market; `arena league status` lists them; `arena league publish` builds the league's
marts with a real `dbt build`, and its totals and verdict equal a hand computation over the two
seasons' published leaderboards, round trips and matched players.

Two of the contestants are models behind a loopback OpenAI-compatible server: ``holder`` buys
AAPL with all its cash at each season's first cycle and holds it (AAPL rose in both seasons,
as most stocks did: the luck percentile, long or short 50/50, puts it high); ``oracle`` reads the
next cycle's prices from the lake and buys the asset that rises most by then. The verdict flags
the oracle and not the holder."""

from __future__ import annotations

import contextlib
import io
import json
import math
import shutil
from statistics import NormalDist

import duckdb
import pandas as pd
import pytest

from arena.cli import main
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.market.asof import cycle_prices
from tests.agents.openai_stub import OpenAIStub, RecordedRequest, StubResponse
from tests.market_lakes import market_lakes
from tests.mart_units import column_query, unit_problems

# the ruler: momentum at its defaults; churn, a momentum variant on the 1-day return that closes
# its longs at the next cycle (round trips, won and lost, in a two-day season), is a strategy of
# its own, so a contestant; the reverses mirror both
ROSTER = ("contestants:\n"
          "  - {name: momentum, kind: house, strategy: momentum}\n"
          "  - {name: churn, kind: house, strategy: momentum, strategy_params: {entry_lookback: 1,"
          " exit_lookback: 1, exit_below_return_pct: 90, stop_pct: 5, size_pct: 30}}\n"
          "  - {name: anti-momentum, kind: reverse, mirror_of: momentum}\n"
          "  - {name: anti-churn, kind: reverse, mirror_of: churn}\n"
          "  - {name: holder, kind: llm, model: openai/holder, api_base: '{url}',"
          " params: {timeout: 20, num_retries: 0}}\n"
          "  - {name: oracle, kind: llm, model: openai/oracle, api_base: '{url}',"
          " params: {timeout: 20, num_retries: 0}}\n")
FIRST, SECOND = "2025-11-24-synthetic", "2025-11-25-synthetic"
CYCLES = {FIRST: ("2025-11-24 16:00", "2025-11-25 16:00"),
          SECOND: ("2025-11-25 16:00", "2025-11-26 16:00")}
HELD = "AAPL"
HOLD = json.dumps({"reasoning": "hold", "decisions": []})
PLAYERS = "300"
MATCHED = 1000  # each contestant's matched players (the arena's default)


def _run(capsys, *args: str, code: int = 0) -> str:
    got = main(list(args))
    out = capsys.readouterr()
    assert got == code, f"arena {' '.join(args)}: exit {got}\n{out.err}"
    assert "Traceback" not in out.err
    return out.out if code == 0 else out.err


def _market(tmp_path_factory, universe, lake: Lake) -> None:
    """The synthetic market (bars to 2025-12-02) copied into a season's lake."""
    shutil.copytree(market_lakes(tmp_path_factory, universe).full.root, lake.root,
                    dirs_exist_ok=True)


def _buy(symbol: str) -> str:
    return json.dumps({"reasoning": f"buy {symbol}", "decisions": [
        {"action": "open_long", "symbol": symbol, "percent_of_equity": 100, "confidence": 0.9,
         "invalidation_price": 0.01, "thesis": "it rises", "invalidation": "it collapses"}]})


def _best_next(lake: Lake, season: str) -> str:
    """The tradable asset whose price rises most from the season's first cycle to its second,
    at the prices the engine reads (the future, for the oracle)."""
    universe = load_universe()
    times = [pd.Timestamp(t, tz="UTC") for t in CYCLES[season]]
    wide = cycle_prices(lake, "synthetic", universe, times).pivot(
        index="cycle_at", columns="symbol", values="price")
    wide = wide[[a.symbol for a in universe.tradable if a.symbol in wide.columns]]
    return str((wide.iloc[1] / wide.iloc[0]).idxmax())


@pytest.fixture(scope="module")
def league(tmp_path_factory, universe):
    """(league folder, what the commands said on the way): two seasons of two days each,
    Monday-Tuesday and Tuesday-Wednesday, both closed, then the league published."""
    script = {"holder": HOLD, "oracle": HOLD}

    def answer(request: RecordedRequest) -> StubResponse:
        return StubResponse.answer(script[request.body["model"]])

    with OpenAIStub(handler=answer) as stub:
        yield from _play_league(tmp_path_factory, universe, stub.url, script)


def _play_league(tmp_path_factory, universe, url: str, script: dict[str, str]):
    root = tmp_path_factory.mktemp("league") / "league"
    roster = root.parent / "roster.yaml"
    roster.write_text(ROSTER.replace("{url}", url), encoding="utf-8")
    said: dict[str, object] = {"oracle": {}}
    assert main(["season", "init", "--league", str(root), "--start", "2025-11-24", "--days", "2",
                 "--roster", str(roster)]) == 0
    first = Lake(root / FIRST)
    _market(tmp_path_factory, universe, first)
    said["oracle"][FIRST] = _best_next(first, FIRST)
    script.update(holder=_buy(HELD), oracle=_buy(said["oracle"][FIRST]))
    assert main(["season", "backfill", "2025-11-24", "--no-publish", "--lake",
                 str(first.root)]) == 0
    script.update(holder=HOLD, oracle=HOLD)
    assert main(["cycle", "--no-publish", "--lake", str(first.root)]) == 0
    said["open"] = _status(root)
    said["refused"] = main(["season", "init", "--league", str(root), "--days", "2",
                            "--roster", str(roster)])
    assert main(["season", "publish", "--final", "--players", PLAYERS, "--lake",
                 str(first.root)]) == 0
    assert main(["season", "init", "--league", str(root), "--days", "2", "--roster",
                 str(roster)]) == 0
    second = Lake(root / SECOND)
    _market(tmp_path_factory, universe, second)
    said["oracle"][SECOND] = _best_next(second, SECOND)
    script.update(holder=_buy(HELD), oracle=_buy(said["oracle"][SECOND]))
    assert main(["season", "backfill", "2025-11-25", "--no-publish", "--lake",
                 str(second.root)]) == 0
    script.update(holder=HOLD, oracle=HOLD)
    assert main(["cycle", "--no-publish", "--lake", str(second.root)]) == 0
    assert main(["season", "publish", "--final", "--players", PLAYERS, "--lake",
                 str(second.root)]) == 0
    said["published"] = _json(["league", "publish", str(root), "--json"])
    yield root, said


def _json(args: list[str]) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(args) == 0
    return json.loads(out.getvalue())


def _status(root) -> dict:
    return _json(["league", "status", str(root), "--json"])


def test_the_next_season_starts_where_the_last_ended(league):
    root, said = league
    assert said["refused"] == 2  # the first season was still open
    first, second = (json.loads((root / s / "season" / "season.json").read_text())
                     for s in (FIRST, SECOND))
    assert first["follows"] is None and second["follows"] == FIRST
    assert second["start"] == "2025-11-25" and second["cycle_hour"] == first["cycle_hour"]
    assert first["days"] == second["days"] == 2


def test_league_status_lists_the_seasons(league, capsys):
    root, said = league
    before = said["open"]["seasons"]
    assert [(s["season"], s["state"], s["cycles"], s["published"]) for s in before] == [
        (FIRST, "open", 2, False)]
    assert before[0]["contestants"] == ["anti-churn", "anti-momentum", "churn", "holder", "oracle"]
    assert before[0]["rulers"] == ["momentum"]
    seasons = _status(root)["seasons"]
    assert [(s["season"], s["state"], s["cycles"], s["published"], s["counted"], s["after"])
            for s in seasons] == [(FIRST, "closed", 2, True, True, "first"),
                                  (SECOND, "closed", 2, True, True, "continues")]
    assert seasons[0]["last_cycle"] == seasons[1]["first_cycle"] == "2025-11-25T16:00:00+00:00"
    assert seasons[1]["first_cycle"] == "2025-11-25T16:00:00+00:00"
    assert seasons[1]["last_cycle"] == "2025-11-26T16:00:00+00:00"
    text = _run(capsys, "league", "status", str(root))
    assert "2 seasons, 2 counted" in text
    for line, season, after in ((1, FIRST, "first"), (2, SECOND, "continues")):
        row = [ln for ln in text.splitlines() if ln.startswith(season)]
        assert len(row) == 1 and "closed" in row[0] and "2/2" in row[0] and after in row[0], line


def _hand_totals(root) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two seasons' leaderboards and round trips, as published in each season's lake."""
    boards, trips = [], []
    for season in (FIRST, SECOND):
        board = pd.read_parquet(root / season / "marts" / "leaderboard.parquet")
        trades = pd.read_parquet(root / season / "marts" / "trades.parquet")
        boards.append(board.assign(season_id=season))
        trips.append(trades.assign(season_id=season))
    return pd.concat(boards, ignore_index=True), pd.concat(trips, ignore_index=True)


def test_league_publish_builds_totals_equal_to_a_hand_computation(league):
    root, said = league
    assert said["published"]["counted"] == [FIRST, SECOND]
    marts = root / "marts"
    assert {p.stem for p in marts.glob("*.parquet")} == {
        "league_archive", "league_seasons", "league_results", "league_totals", "league_verdict"}
    assert (root / "league.duckdb").is_file()
    boards, trades = _hand_totals(root)
    names = sorted(boards["contestant"].unique())
    assert names == ["anti-churn", "anti-momentum", "churn", "holder", "momentum", "oracle"]

    results = pd.read_parquet(marts / "league_results.parquet")
    assert len(results) == len(boards) == 12
    merged = results.merge(boards, on=["season_id", "contestant"], suffixes=("", "_season"))
    for column in ("total_return", "zero_skill_percentile", "rank_score", "role", "fills",
                   "skill_status"):
        assert (merged[column] == merged[f"{column}_season"]).all(), column
    assert merged["skill_percentile"].equals(merged["skill_percentile_season"])

    totals = pd.read_parquet(marts / "league_totals.parquet").set_index("contestant")
    assert sorted(totals.index) == names
    for name in names:
        mine = boards[boards["contestant"] == name]
        trips = trades[(trades["contestant"] == name) & (trades["status"] == "closed")]
        row = totals.loc[name]
        assert row["seasons"] == 2
        assert row["fills"] == mine["fills"].sum()
        assert row["round_trips"] == len(trips) == mine["round_trips"].sum()
        assert row["profitable_round_trips"] == (trips["net_pnl"] > 0).sum()
        if len(trips):
            assert row["profitable_share"] == pytest.approx((trips["net_pnl"] > 0).mean())
        else:
            assert pd.isna(row["profitable_share"])
        returns = mine["total_return"].to_list()
        assert row["mean_return"] == pytest.approx(sum(returns) / 2, abs=1e-12)
        assert row["median_return"] == pytest.approx(sum(returns) / 2, abs=1e-12)
        assert row["chained_return"] == pytest.approx(
            (1 + returns[0]) * (1 + returns[1]) - 1, abs=1e-12)
        assert row["positive_seasons"] == sum(r > 0 for r in returns)
        assert row["positive_share"] == sum(r > 0 for r in returns) / 2
        assert row["role"] == mine["role"].iloc[-1]
    assert totals.loc["churn", "round_trips"] >= 2  # a round trip closed in each season
    assert 0 < totals.loc["churn", "profitable_round_trips"] < totals.loc["churn", "round_trips"]


def test_every_measured_league_mart_column_states_its_unit(league):
    """The published league warehouse's comments: every fraction, score and count of a league
    mart says what it is (tests/mart_units.py), as a season's marts do."""
    root, _ = league
    with duckdb.connect(str(root / "league.duckdb"), read_only=True) as con:
        columns = con.execute(column_query("marts")).fetchall()
    assert {c[0] for c in columns} >= {"league_results", "league_totals", "league_verdict"}
    assert ("league_totals", "fills") in {(c[0], c[1]) for c in columns}
    assert unit_problems(columns) == []


def _hand_places(root, name: str) -> tuple[list[float], list[list[float]]]:
    """Per season, the contestant's return and its matched players' returns in player order,
    read from the season's published marts."""
    values, players = [], []
    for season in (FIRST, SECOND):
        board = pd.read_parquet(root / season / "marts" / "leaderboard.parquet")
        matched = pd.read_parquet(root / season / "marts" / "matched_players.parquet")
        values.append(float(board.loc[board["contestant"] == name, "total_return"].iloc[0]))
        mine = matched[matched["unit"] == name].sort_values("player")
        assert mine["player"].to_list() == list(range(MATCHED))
        players.append(mine["final_return"].to_list())
    return values, players


def test_the_league_verdict_is_the_hand_computed_stouffer(league, capsys):
    """Two seasons each: every season the contestant and its 1,000 matched players ranked
    together (pandas' average ranks, ties at 10 decimals), each at (rank - 0.5) / 1,001; Z =
    (Phi^-1(u1) + Phi^-1(u2)) / sqrt(2) for the contestant and for every player (the same
    player in both seasons); p the share of the 1,001 whose Z is at least the contestant's; Holm
    within the contestants (4) and within the rulers (2); the command prints it in words."""
    root, said = league
    assert len(said["published"]["verdict"]) == 6
    verdict = pd.read_parquet(root / "marts" / "league_verdict.parquet").set_index("model")
    boards, _ = _hand_totals(root)
    phi = NormalDist()
    n = MATCHED
    for name, mine in boards.groupby("contestant"):
        values, players = _hand_places(root, name)
        total = pd.Series(0.0, index=range(n + 1))
        for value, theirs in zip(values, players, strict=True):
            ranks = pd.Series([value, *theirs]).round(10).rank(method="average")
            total += ((ranks - 0.5) / (n + 1)).map(phi.inv_cdf)
        z_all = total / math.sqrt(2)
        row = verdict.loc[name]
        assert row["stouffer_z"] == pytest.approx(z_all[0], rel=1e-9, abs=1e-12)
        assert row["p_value"] == pytest.approx((z_all >= z_all[0] - 1e-12).sum() / (n + 1))
        assert row["normal_p_value"] == pytest.approx(1 - phi.cdf(z_all[0]), rel=1e-9)
        assert (row["seasons"], row["seasons_without_positions"], row["instances"],
                row["players"]) == (2, 0, 1, n)
        assert row["role"] == mine["role"].iloc[-1]
        family = 5 if row["role"] == "contestant" else 1
        assert row["family_size"] == family
        among = f"among {family}" if family > 1 else "alone"  # the one ruler is its own family
        assert row["in_words"].startswith(f"With 2 seasons tested {among}")
    for role in ("contestant", "ruler"):
        band = verdict[verdict["role"] == role].sort_values("p_value")
        m, holm, running = len(band), [], 0.0
        for i, p in enumerate(band["p_value"]):
            running = max(running, min(1.0, (m - i) * p))
            holm.append(running)
        assert band["holm_p_value"].to_list() == pytest.approx(holm)
        for (_, row), adjusted in zip(band.iterrows(), holm, strict=True):
            words = ("evidence of skill at 5% after correction" if adjusted <= 0.05 else
                     "not distinguishable from luck")
            assert row["verdict"] == words
    assert verdict["method"].str.contains("Stouffer").all()
    assert verdict["null_hypothesis"].str.contains("relabelled at random").all()
    text = _run(capsys, "league", "publish", str(root))
    assert "2 published seasons, 2 counted" in text
    for name in verdict.index:
        assert any(ln.startswith(name) and ("luck" in ln or "evidence" in ln)
                   for ln in text.splitlines()), name
        assert f"{name}: With 2 seasons" in text
    assert "null hypothesis: no skill" in text


def test_the_verdict_flags_the_oracle_and_not_the_holder_of_a_rising_stock(league):
    """Both seasons AAPL rose, as most stocks did: among the zero-skill players (long or short
    at random, most of them in cash after a day) the holder's luck percentile is high both
    times, and read as before - luck percentiles as the places, Stouffer's normal p-value - it
    would be "skilled". Among its matched players (its book - all its cash in one stock for the
    season - on an asset drawn at random) it sits where AAPL ranked among the assets: not
    flagged. The oracle, which bought the asset that rose most by the next cycle, beats nearly
    all of its matched players every season: flagged after Holm among the four contestants."""
    root, said = league
    assert said["oracle"][FIRST] != HELD and said["oracle"][SECOND] != HELD
    boards, _ = _hand_totals(root)
    holder = boards[boards["contestant"] == "holder"]
    oracle = boards[boards["contestant"] == "oracle"]
    assert (holder["total_return"] > 0).all()
    assert (holder["zero_skill_percentile"] > 0.8).all()
    luck = [(p * n + 0.5) / (n + 1) for p, n in zip(holder["zero_skill_percentile"],
                                                      holder["zero_skill_players"], strict=True)]
    phi = NormalDist()
    assert 1 - phi.cdf(sum(phi.inv_cdf(u) for u in luck) / math.sqrt(2)) < 0.01  # as before
    assert holder["skill_percentile"].between(0.4, 0.9).all()
    assert (oracle["skill_percentile"] > 0.97).all()
    verdict = pd.read_parquet(root / "marts" / "league_verdict.parquet").set_index("model")
    assert verdict.loc["oracle", "verdict"] == "evidence of skill at 5% after correction"
    assert verdict.loc["oracle", "holm_p_value"] <= 0.05
    assert verdict.loc["holder", "verdict"] == "not distinguishable from luck"
    assert verdict.loc["holder", "p_value"] > 0.2


def test_a_season_in_progress_is_listed_not_counted(league, tmp_path, capsys):
    """A third season started after the two: open, unpublished, it is listed; the next one is
    refused until it ends; a folder that is no season is refused by name. A published season
    that is still open is listed in the results but counts in neither the totals nor the
    verdict (one counted season left: too few for a verdict)."""
    root, _ = league
    copy = tmp_path / "league"
    shutil.copytree(root, copy, symlinks=True)
    _run(capsys, "season", "init", "--league", str(copy), "--days", "3", "--id", "third")
    seasons = _status(copy)["seasons"]
    assert [(s["season"], s["state"], s["after"]) for s in seasons][-1] == (
        "third", "open", "continues")
    assert seasons[-1]["first_cycle"] == "2025-11-26T16:00:00+00:00"
    err = _run(capsys, "season", "init", "--league", str(copy), "--days", "2", code=2)
    assert "season 'third'" in err and "is open" in err and "publish --final" in err
    err = _run(capsys, "season", "init", "--league", str(copy), "--start", "2025-11-20", code=2)
    assert "is open" in err
    (copy / "stray").mkdir()
    err = _run(capsys, "league", "status", str(copy), code=2)
    assert "stray is not a season lake" in err
    (copy / "stray").rmdir()
    # the second season open again (as if never closed): published, listed, not counted
    (copy / SECOND / "season" / "closed.json").unlink()
    printed = _json(["league", "publish", str(copy), "--json"])
    assert printed["seasons"] == [FIRST, SECOND] and printed["counted"] == [FIRST]
    results = pd.read_parquet(copy / "marts" / "league_results.parquet")
    assert results.groupby("season_id")["counted"].agg(set).to_dict() == {
        FIRST: {True}, SECOND: {False}}
    totals = pd.read_parquet(copy / "marts" / "league_totals.parquet")
    assert set(totals["seasons"]) == {1} and set(totals["last_season"]) == {FIRST}
    verdict = pd.read_parquet(copy / "marts" / "league_verdict.parquet")
    assert set(verdict["verdict"]) == {"too few seasons"} and verdict["holm_p_value"].isna().all()
    assert set(verdict["family_size"]) == {0}


def test_league_commands_refuse_what_is_no_league(tmp_path, capsys):
    err = _run(capsys, "league", "status", str(tmp_path / "none"), code=2)
    assert "does not exist" in err and "arena season init --league" in err
    err = _run(capsys, "season", "init", "--league", str(tmp_path / "new"), "--days", "2",
               code=2)
    assert "holds no season yet" in err and "--start" in err
    err = _run(capsys, "season", "init", "--league", str(tmp_path / "l"), "--lake",
               str(tmp_path / "x"), "--start", "2025-11-24", code=2)
    assert "not both" in err
    _run(capsys, "season", "init", "--league", str(tmp_path / "l"), "--start", "2025-11-24",
         "--days", "2", "--id", "one")
    err = _run(capsys, "league", "publish", str(tmp_path / "l"), code=2)
    assert "no season of the league" in err and "published" in err
    out = _run(capsys, "season", "init", "--start", "2025-11-24", "--lake", str(tmp_path / "y"),
               "--id", "x", "--days", "1")
    assert "follows" not in out  # a season on its own follows none
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no season yet" in _run(capsys, "league", "status", str(empty))


def test_importing_the_league_job_loads_no_integration_it_may_not_need():
    """As every job (tests/app/test_startup.py): dbt loads when the league is built, not when its
    command's module is imported (``arena league status`` never builds)."""
    import subprocess
    import sys

    code = ("import json, sys, arena.app.league, arena.cli.league; print(json.dumps(sorted("
            "{m.split('.')[0] for m in sys.modules} & {'dbt', 'great_expectations', 'litellm', "
            "'prefect', 'ccxt', 'yfinance'})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
