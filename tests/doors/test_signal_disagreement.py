"""The offline committee argues: a year of real daily bars (GOOG 2012, from the fixtures in
``tests/fixtures/prices``) debated session by session through the signal server with no model,
the returns that followed attached from the terminal's own later series, and ``signal_patterns``
built over the store. The bull and the bear agree where the trend is plain and split where the
brief is mixed, and the mart has rows for both - each row's numbers recomputed here from the
fixture's closes."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from arena.doors.brief import Series, brief
from arena.doors.judge import decide, parse_opinion, parse_risk, rule_analysts
from arena.doors.signal_server import SignalServer
from arena.doors.signal_store import HORIZONS, SignalStore, build_signal_marts
from tests.doors.test_signal_server import Running, ask

GOOG = Path(__file__).resolve().parents[1] / "fixtures" / "prices" / "GOOG.csv"
HISTORY = 220  # bars a request sends: the 200-bar SMA and a margin
TERMINAL = {"additional_headers": {"Authorization": "Bearer goog-terminal"}}


@pytest.fixture(scope="module")
def goog() -> pd.DataFrame:
    return pd.read_csv(GOOG, parse_dates=["timestamp"])


def sessions_of_2012(frame: pd.DataFrame) -> list[int]:
    return frame.index[frame["timestamp"].dt.year == 2012].tolist()


def payload(frame: pd.DataFrame, first: int, last: int) -> str:
    """Bars ``first`` .. ``last`` (positions, both included) as the extended series."""
    bars = frame.iloc[first:last + 1]
    return json.dumps({"time": bars["timestamp"].dt.strftime("%Y-%m-%d").tolist(),
                       **{k: bars[k].tolist() for k in ("close", "high", "low", "volume")}})


def test_the_rule_based_bull_and_bear_agree_and_disagree_over_a_year(goog):
    """Every session of 2012 on its last 220 bars: the analysts agree on most days, split on
    the others (the committee then holds at LOW risk, follows the stronger at MEDIUM)."""
    leans, rules = Counter(), Counter()
    for end in sessions_of_2012(goog):
        window = goog.iloc[end - HISTORY + 1:end + 1]
        facts = brief(Series.of(window["close"], window["high"], window["low"],
                                window["volume"]))
        texts = rule_analysts(facts, "GOOG")
        bull, bear = parse_opinion("bull", texts["bull"]), parse_opinion("bear", texts["bear"])
        leans[(str(bull.lean), str(bear.lean))] += 1
        rules[decide(bull, bear, parse_risk(texts["risk"]))[1]] += 1
    assert sum(leans.values()) == 250
    assert leans == {("BULLISH", "BULLISH"): 118, ("BEARISH", "BEARISH"): 70,
                     ("BULLISH", "BEARISH"): 62}
    assert rules == {"agree": 188, "split-low": 42, "split-stronger": 19, "split-even": 1}


def test_signal_patterns_has_rows_for_agreement_and_disagreement(tmp_path, goog):
    """The year through the server, one terminal on one connection, then one request with the
    bars to 2013-03-01 attaching every horizon; the mart against the fixture's closes."""
    store = SignalStore(tmp_path / "store")
    days = sessions_of_2012(goog)
    clock = lambda: pd.Timestamp("2013-03-04", tz="UTC")  # noqa: E731 after every bar
    with Running(SignalServer(store, rate=len(days) + 1, clock=clock)) as url:
        answers = ask(url, *[f"DEBATE#{end}:GOOG:{payload(goog, end - HISTORY + 1, end)}"
                             for end in days],
                      f"PRICES#all:GOOG:{payload(goog, days[0] - HISTORY + 1, len(goog) - 1)}",
                      **TERMINAL)
    assert [a["id"] for a in answers] == [*map(str, days), "all"]
    assert "error" not in str(answers)
    debates = store.debates().query("command == 'DEBATE'")
    outcomes = store.outcomes()
    assert len(debates) == 250 and len(outcomes) == 250 * len(HORIZONS)

    # the mart, recomputed from the fixture: each debate's pattern and the closes that followed
    close = goog["close"]
    position = {t: i for i, t in enumerate(goog["timestamp"].dt.tz_localize("UTC"))}
    rows = []
    for d in debates.itertuples():
        at = position[pd.Timestamp(d.last_bar_at)]
        pattern = "agree" if d.bull_lean == d.bear_lean else "split"
        for h in HORIZONS:
            change = close[at + h] / close[at] - 1
            follow = {"buy": change, "sell": -change}.get(d.signal)
            rows.append({"agreement": pattern, "risk": d.risk, "signal": d.signal,
                         "judge_held_on_split": pattern == "split" and d.judge_signal == "hold",
                         "horizon_bars": h, "return": change, "follow": follow})
    expected = pd.DataFrame(rows).groupby(
        ["agreement", "risk", "signal", "judge_held_on_split", "horizon_bars"]).agg(
        debates=("return", "size"), mean_return=("return", "mean"),
        mean_signal_return=("follow", "mean"),
        hit_rate=("follow", lambda x: (x > 0).mean() if x.notna().any() else None))

    mart = pd.read_parquet(build_signal_marts(store)).set_index(list(expected.index.names))
    assert set(mart.index.get_level_values("agreement")) == {"agree", "split"}
    for h in HORIZONS:
        at_h = mart.xs(h, level="horizon_bars")
        by = at_h.groupby(level="agreement")["debates"].sum().to_dict()
        assert by == {"agree": 188, "split": 62}
    assert sorted(mart.index) == sorted(expected.index)
    got = mart.loc[expected.index]
    assert got["debates"].tolist() == expected["debates"].tolist()
    assert got["outcomes"].tolist() == expected["debates"].tolist()
    for column in ("mean_return", "mean_signal_return", "hit_rate"):
        pd.testing.assert_series_equal(got[column].astype(float), expected[column].astype(float),
                                       check_names=False, rtol=1e-12)
