"""The report marts over the replayed season of ``test_season_marts``: ``decisions`` (every
parsed decision, its acceptance and the answer text of its round), ``benchmark_equity`` (what
the start cash in BTC, SPY and the equal-weighted universe is worth after each cycle) and
``zero_skill_band_by_contestant`` (each contestant's equity beside the arena's zero-skill band,
cycle by cycle), checked against the ledger, the cycle prices and the season's analytics read in
Python - not against the SQL."""

from __future__ import annotations

import json
import shutil

import duckdb
import pandas as pd
import pytest

from arena.data.lake import Lake
from arena.pipeline.season_tables import read_analytics
from arena.pipeline.warehouse import MARTS, build_dir
from tests.pipeline.test_season_marts import RIVALS, RULERS, _warehouse, season  # noqa: F401

START_CASH = 10_000.0


def _key(at: object, contestant: str, rnd: str, index: int) -> tuple[pd.Timestamp, str, str, int]:
    return pd.Timestamp(at), contestant, rnd, int(index)


def read_marts(lake: Lake) -> dict[str, pd.DataFrame]:
    """The published marts (``<lake>/marts/<mart>.parquet``) by name."""
    return {p.stem: pd.read_parquet(p) for p in sorted((lake.root / "marts").glob("*.parquet"))}


def _value(v: object) -> object:
    """A Parquet null read by pandas (None or NaN) as None."""
    return None if v is None or (isinstance(v, float) and pd.isna(v)) else v


def test_the_report_marts_are_published(season):  # noqa: F811
    lake, *_ = season
    assert {"decisions", "benchmark_equity"} <= set(MARTS)
    marts = read_marts(lake)
    assert len(marts["decisions"]) > 0 and len(marts["benchmark_equity"]) > 0
    with _warehouse(lake) as con:
        assert con.execute("select count(*) from marts.decisions").fetchone()[0] == len(
            marts["decisions"])


def test_every_ledger_decision_appears_once_with_its_reasoning(season):  # noqa: F811
    lake, ledger, times, _, names = season
    mart = read_marts(lake)["decisions"]
    ledger_rows = ledger.table("decisions")
    assert len(ledger_rows) > 0
    assert len(mart) == len(ledger_rows)
    assert mart["decision_id"].is_unique
    by_key = {_key(r.cycle_at, r.contestant, r.round, r.decision_index): r
              for r in mart.itertuples()}
    assert len(by_key) == len(mart)  # the composite key is unique too
    # house agents decide too, not only the LLM
    assert len(set(mart["contestant"])) >= 3 and "stub-llm" in set(mart["contestant"])
    assert set(mart["contestant"]) <= set(names)

    rejected = {_key(r.cycle_at, r.contestant, r.round, r.decision_index)
                for r in ledger.table("rejections").itertuples()}
    outcomes = {(pd.Timestamp(r.cycle_at), r.contestant): r.status
                for r in ledger.table("outcome").itertuples()}
    texts: dict[tuple[pd.Timestamp, str], dict[str, str | None]] = {}
    for r in ledger_rows.itertuples():
        key = _key(r.cycle_at, r.contestant, r.round, r.decision_index)
        row = by_key.pop(key)  # once: popped
        assert (row.action, row.symbol) == (r.action, r.symbol), key
        recorded = json.loads(r.decision)
        assert row.decision == r.decision and json.loads(row.decision) == recorded
        fields = recorded if isinstance(recorded, dict) else {}
        assert _value(row.thesis) == fields.get("thesis"), key
        assert _value(row.rationale) == fields.get("rationale"), key
        if isinstance(fields.get("confidence"), (int, float)):
            assert row.confidence == pytest.approx(fields["confidence"])
        assert bool(row.accepted) == (key not in rejected), key
        assert row.outcome == outcomes[(key[0], key[1])], key
        cycle = pd.Timestamp(row.cycle_at)
        assert cycle in times and row.day == cycle.tz_convert("UTC").date()
        assert row.decision_id == (f"{r.contestant}@{cycle.strftime('%Y-%m-%dT%H:%M:%SZ')}"
                                   f"#{r.round}.{r.decision_index}")
        answers = texts.setdefault((cycle, r.contestant), ledger.responses(r.contestant, cycle))
        assert row.answer_text == answers[r.round], key
    assert not by_key  # nothing in the mart the ledger does not hold

    # the LLM opens ETH every day: accepted on the first, rejected once it holds ETH (both rounds)
    llm = mart[mart["contestant"] == "stub-llm"]
    assert llm["accepted"].any() and not llm["accepted"].all()
    assert (~llm["accepted"]).sum() == len(rejected & {
        _key(r.cycle_at, r.contestant, r.round, r.decision_index) for r in llm.itertuples()})
    assert set(llm["round"]) == {"answer", "repair"}
    assert set(llm["thesis"]) == {"trend intact"}
    assert all(json.loads(t)["decisions"][0]["thesis"] == "trend intact"
               for t in llm.loc[llm["round"] == "answer", "answer_text"])


def test_every_trade_links_to_an_accepted_decision(season):  # noqa: F811
    lake, ledger, *_ = season
    marts = read_marts(lake)
    trades, decisions = marts["trades"], marts["decisions"]
    by_key = {_key(r.cycle_at, r.contestant, r.round, r.decision_index): r
              for r in decisions.itertuples()}
    closed = trades[trades["status"] == "closed"]
    assert len(closed) >= 3
    for t in trades.itertuples():
        entry = by_key.get(_key(t.entry_cycle_at, t.contestant, t.entry_round,
                                t.entry_decision_index))
        assert entry is not None, t.trade_id  # no dangling link
        assert entry.accepted and entry.symbol == t.symbol, t.trade_id
        assert entry.action == ("open_long" if t.side == "long" else "open_short")
        assert (entry.thesis or "") == (t.thesis or ""), t.trade_id
        assert entry.outcome == "traded"
        if t.status == "closed" and t.closed_by == "decision":
            exit_ = by_key.get(_key(t.exit_cycle_at, t.contestant, t.exit_round,
                                    t.exit_decision_index))
            assert exit_ is not None and exit_.accepted and exit_.action == "close", t.trade_id
    # and every cycle fill's decision is an accepted one
    for r in ledger.table("fills").itertuples():
        assert by_key[_key(r.cycle_at, r.contestant, r.round, r.decision_index)].accepted


def _marks(lake) -> pd.DataFrame:
    """The cycle prices (the analytics Parquet) by cycle and symbol, each symbol's last price
    carried forward to a cycle without one."""
    prices = pd.read_parquet(lake.root / "analytics" / "cycle_prices.parquet")
    wide = prices.pivot(index="cycle_at", columns="symbol", values="price").sort_index()
    wide.index = pd.to_datetime(wide.index, utc=True)
    return wide.ffill()


def _benchmarks(lake) -> pd.DataFrame:
    frame = read_marts(lake)["benchmark_equity"].copy()
    frame["cycle_at"] = pd.to_datetime(frame["cycle_at"], utc=True)
    return frame.set_index(["benchmark", "cycle_at"]).sort_index()


def test_benchmark_equity_is_the_buy_and_hold_of_the_cycle_prices(season, universe):  # noqa: F811
    lake, _, times, *_ = season
    marks = _marks(lake)
    bench = _benchmarks(lake)
    assert len(times) >= 4 and list(marks.index) == list(times)
    assert set(bench.index.get_level_values("benchmark")) == {"BTC", "SPY", "universe"}
    assert len(bench) == 3 * len(times)
    first = times[0]
    for name in ("BTC", "SPY", "universe"):
        assert bench.loc[(name, first), "equity"] == pytest.approx(START_CASH, abs=1e-9)
        assert bench.loc[(name, first), "cumulative_return"] == pytest.approx(0.0, abs=1e-12)
    # BTC at a middle cycle, by hand
    middle = times[len(times) // 2]
    btc = START_CASH * marks.loc[middle, "BTC"] / marks.loc[first, "BTC"]
    assert marks.loc[middle, "BTC"] != marks.loc[first, "BTC"]  # a cycle where it moved
    assert bench.loc[("BTC", middle), "equity"] == pytest.approx(btc, rel=1e-12)
    # every cycle: BTC and SPY, and the tradable symbols with a first mark, equal-weighted
    tradable = [s for s in marks.columns if universe[s].tradable
                and pd.notna(marks.loc[first, s]) and marks.loc[first, s] > 0]
    assert len(tradable) >= 4 and "BTC" not in tradable  # BTC is a benchmark, not tradable
    for at in times:
        expected = {"BTC": marks.loc[at, "BTC"] / marks.loc[first, "BTC"],
                    "SPY": marks.loc[at, "SPY"] / marks.loc[first, "SPY"],
                    "universe": (marks.loc[at, tradable] / marks.loc[first, tradable]).mean()}
        for name, ratio in expected.items():
            row = bench.loc[(name, at)]
            assert row["equity"] == pytest.approx(START_CASH * ratio, rel=1e-12), (name, at)
            assert row["cumulative_return"] == pytest.approx(ratio - 1, abs=1e-12), (name, at)
            assert row["cumulative_return"] == pytest.approx(row["equity"] / START_CASH - 1,
                                                             abs=1e-12)
            assert row["day"] == at.date()
    # a weekend without stock sessions: SPY is carried at its Friday mark
    spy = bench.xs("SPY")["equity"]
    assert spy.nunique() < len(spy)


def test_benchmark_equity_ends_at_the_leaderboards_benchmark_returns(season):  # noqa: F811
    lake, _, times, _, names = season
    board = read_marts(lake)["leaderboard"].set_index("contestant")
    bench = _benchmarks(lake)
    last = times[-1]
    assert set(board.index) == set(names)
    for name, column in (("BTC", "excess_vs_btc"), ("SPY", "excess_vs_spy"),
                         ("universe", "excess_vs_universe")):
        final = bench.loc[(name, last), "cumulative_return"]
        assert final != 0.0
        for contestant in names:
            row = board.loc[contestant]
            assert row["total_return"] - row[column] == pytest.approx(final, abs=1e-12), \
                (name, contestant)


# the question the mart answers, as its description gives it to analysts
HOW_OFTEN = ("select contestant, avg(below_q95::int) from marts.zero_skill_band_by_contestant "
             "group by contestant")
BAND_TEST = "the_band_meets_every_curve_once"  # dbt_project/tests/, a data test of the mart


def _band_by_hand(lake: Lake, ledger, times, names) -> dict[tuple[str, pd.Timestamp], dict]:
    """Every contestant's row by hand: its equity from the engine's own fold
    (``Ledger.portfolio``) marked at the cycle prices, beside the band of that cycle as the
    season's Python build computed it (``arena_luck_band``), and its sides."""
    marks = _marks(lake)
    band = read_analytics(lake, "arena_luck_band")
    band = band.assign(cycle_at=pd.to_datetime(band["cycle_at"], utc=True)).set_index("cycle_at")
    players = len(read_analytics(lake, "arena_luck"))
    rows = {}
    for name in names:
        for at in times:
            equity = ledger.portfolio(name, until=at).equity(marks.loc[at].dropna().to_dict())
            q05, q95 = float(band.loc[at, "q05"]), float(band.loc[at, "q95"])
            rows[(name, at)] = {
                "role": "ruler" if name in RULERS else "contestant", "equity": equity,
                "cumulative_return": equity / START_CASH - 1, "q05_equity": q05,
                "q50_equity": float(band.loc[at, "q50"]), "q95_equity": q95,
                "above_q95": equity > q95, "below_q95": equity < q95, "below_q05": equity < q05,
                "players": players}
    return rows


def test_the_band_by_contestant_is_the_hand_computation(season):  # noqa: F811
    """One row per contestant and cycle, each the engine's equity beside the band of its own
    cycle, on the side of the 95th and 5th percentiles its numbers give - a contestant still at
    the start cash at the first cycle, where most zero-skill players are too, is on neither
    side of the 95th - and the query its description offers answers "how often was the
    zero-skill 95th percentile above X" as counted here."""
    lake, ledger, times, _, names = season
    mart = read_marts(lake)["zero_skill_band_by_contestant"]
    mart = mart.assign(cycle_at=pd.to_datetime(mart["cycle_at"], utc=True))
    expected = _band_by_hand(lake, ledger, times, names)
    assert sorted(zip(mart["contestant"], mart["cycle_at"], strict=True)) == sorted(expected)
    cent = 0.005  # the SQL fold and the engine's agree to the cent (test_season_marts)
    for row in mart.to_dict("records"):
        want = expected[(row["contestant"], row["cycle_at"])]
        key = (row["contestant"], row["cycle_at"])
        assert row["role"] == want["role"] and row["players"] == want["players"], key
        assert row["equity"] == pytest.approx(want["equity"], abs=cent), key
        assert row["cumulative_return"] == pytest.approx(want["cumulative_return"], abs=1e-6)
        for q in ("q05_equity", "q50_equity", "q95_equity"):
            assert row[q] == want[q], (key, q)  # the band's own numbers, not recomputed
        if want["equity"] == want["q95_equity"]:  # a tie (the start cash): neither side
            assert not row["above_q95"] and not row["below_q95"], key
        elif abs(want["equity"] - want["q95_equity"]) > cent:
            assert (row["above_q95"], row["below_q95"]) == (want["above_q95"],
                                                            want["below_q95"]), key
        if abs(want["equity"] - want["q05_equity"]) > cent:
            assert row["below_q05"] == want["below_q05"], key
    first = [r for r in mart.to_dict("records") if r["cycle_at"] == times[0]]
    assert any(not r["above_q95"] and not r["below_q95"] for r in first)  # a tie was judged
    assert mart["below_q95"].any()  # the season's luck band held most books under its 95th
    with _warehouse(lake) as con:
        how_often = dict(con.execute(HOW_OFTEN).fetchall())
    for name in names:
        mine = [expected[(name, at)] for at in times]
        share = sum(r["equity"] < r["q95_equity"] for r in mine) / len(times)
        assert how_often[name] == pytest.approx(share), name
    assert set(RIVALS) <= set(how_often)


def test_the_band_by_contestants_data_test_fails_on_a_row_that_lies(season, tmp_path):  # noqa: F811
    """The mart's data test (dbt_project/tests/the_band_meets_every_curve_once.sql), as dbt
    compiled it for the season's build, finds nothing in the published warehouse and names a
    row whose side was flipped, and a row dropped: it can fail."""
    lake, *_ = season
    compiled = next((build_dir(lake) / "target" / "compiled").rglob(f"{BAND_TEST}.sql"))
    query = compiled.read_text(encoding="utf-8")
    copy = tmp_path / "warehouse.duckdb"  # the catalogue's name the compiled test names
    shutil.copyfile(lake.root / "warehouse.duckdb", copy)
    mart = "marts.zero_skill_band_by_contestant"
    with duckdb.connect(str(copy)) as con:
        assert con.execute(query).fetchall() == []
        con.execute(f"update {mart} set below_q95 = not below_q95 where rowid = "
                    f"(select min(rowid) from {mart} where equity is not null)")
        flipped = con.execute(query).fetchall()
        con.execute(f"delete from {mart} where rowid = (select max(rowid) from {mart})")
        dropped = con.execute(query).fetchall()
    assert [r[-1] for r in flipped] == ["a side its numbers do not give"]
    assert sorted(r[-1] for r in dropped) == ["a side its numbers do not give",
                                             "missing or repeated"]
