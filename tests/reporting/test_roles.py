"""Rulers are the arena's own rules at their defaults: a house entry with changed parameters
("momentum-fast") or marked ``role: contestant`` plays as a contestant, and the decision made
where the roster entry is read is the one the recorded calls, the reports and the leaderboard
mart (a real ``dbt build`` on a short replayed season) read back."""

from __future__ import annotations

import re

import duckdb
import pandas as pd
import pytest

from arena.agents.factory import build_contestant
from arena.agents.house import HouseContestant, house_label, label_role
from arena.agents.roster import HOUSE_STRATEGIES, load_roster, parse_roster
from arena.core.resources import DBT_PROJECT
from arena.core.sessions import daily_cycles
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.pipeline.season import finish_season, replay_season
from arena.reporting.roles import (
    CONTESTANT,
    RULER,
    RULER_LABEL,
    recorded_role,
    role_of,
    role_of_calls,
)
from arena.reporting.season import read_marts

ROSTER = """\
contestants:
  - {name: momentum, kind: house, strategy: momentum}
  - name: momentum-fast
    kind: house
    strategy: momentum
    strategy_params: {entry_lookback: 10, exit_lookback: 1, size_pct: 15, stop_pct: 6}
  - {name: trend-entered, kind: house, strategy: trend_following, role: contestant}
  - {name: equal-weight, kind: house, strategy: equal_weight, role: ruler}
"""
SYMBOLS = ["BTC", "SPY", "ETH", "SOL", "AAPL", "MSFT"]
START, DAYS = pd.Timestamp("2026-10-05", tz="UTC"), 3  # Monday to Wednesday


def house(spec) -> HouseContestant:
    """The house contestant of a roster entry, with the entry's role (as the factory builds it
    once it passes ``role=spec.role``)."""
    return HouseContestant(spec.name, spec.strategy, params=spec.strategy_params, role=spec.role)


def test_a_variant_and_a_marked_entry_are_contestants_and_a_default_rule_a_ruler():
    roster = parse_roster(ROSTER, "test.yaml")
    assert {s.name: role_of(s) for s in roster} == {
        "momentum": RULER, "momentum-fast": CONTESTANT, "trend-entered": CONTESTANT,
        "equal-weight": RULER}
    labels = {s.name: house(s).label for s in roster}
    assert labels == {
        "momentum": "house/momentum",
        "momentum-fast": "house/momentum(entry_lookback=10,exit_lookback=1,size_pct=15,"
                         "stop_pct=6)",
        "trend-entered": "house/trend_following(role=contestant)",
        "equal-weight": "house/equal_weight"}
    # the recorded calls tell the same role the roster decided
    assert {n: role_of_calls([label]) for n, label in labels.items()} == \
        {s.name: role_of(s) for s in roster}
    assert {n: house(roster[n]).role for n in labels} == {s.name: role_of(s) for s in roster}


def test_parameters_given_at_their_defaults_leave_a_ruler():
    [spec] = parse_roster("contestants:\n  - {name: m, kind: house, strategy: momentum, "
                          "strategy_params: {entry_lookback: 30, size_pct: 20}}\n")
    assert role_of(spec) == RULER and house(spec).label == "house/momentum"


def test_every_shipped_house_rule_is_a_ruler_and_every_other_kind_a_contestant():
    shipped = [s for s in load_roster() if s.kind == "house"]
    assert shipped and {role_of(s) for s in shipped} == {RULER}
    assert {role_of_calls([build_contestant(s).label]) for s in shipped} == {RULER}
    assert {label_role(house_label(s, None)) for s in HOUSE_STRATEGIES} == {RULER}
    for models in (["openai/gpt-4o-mini"], ["reverse/worst"], ["replay/x"], ["entrant/inbox"],
                   ["house/momentum(size_pct=30)"], ["house/random(role=contestant)"], []):
        assert role_of_calls(models) == CONTESTANT


def test_the_marts_pattern_is_the_rosters_decision_in_duckdb():
    """The leaderboard mart's own expression, run in DuckDB over every kind of label, tells the
    roles :func:`label_role` tells."""
    sql = (DBT_PROJECT / "models" / "marts" / "leaderboard.sql").read_text(encoding="utf-8")
    [expression] = re.findall(r"bool_or\((.+)\) as house_rule", sql)
    assert f"'{RULER_LABEL}'" in expression
    labels = ["house/momentum", "house/equal_weight", "house/tight",
              "house/momentum(entry_lookback=10)", "house/momentum(role=contestant)",
              "openai/gpt-4o-mini", "reverse/momentum", "entrant/inbox", "xhouse/momentum"]
    with duckdb.connect() as con:
        rows = con.execute(f"select model, {expression} from unnest(?) as t(model)",
                           [labels]).fetchall()
    assert {m: RULER if ruler else CONTESTANT for m, ruler in rows} == \
        {m: label_role(m) for m in labels}


@pytest.fixture(scope="module")
def season(tmp_path_factory, universe):
    """A three-day season of the roster above, replayed and built with dbt."""
    lake = Lake(tmp_path_factory.mktemp("roles") / "lake")
    sub = universe.select(SYMBOLS)
    times = daily_cycles(START, DAYS)
    replay_season(SyntheticProvider(), sub, [house(s) for s in parse_roster(ROSTER)], times,
                  lake=lake)
    finish_season(lake, "synthetic", sub, times, players=200, arena_players=50, quiet=True)
    return lake


def test_the_leaderboard_ranks_the_variant_and_the_marked_entry_and_not_the_rulers(season):
    board = read_marts(season)["leaderboard"].set_index("contestant")
    assert board["role"].to_dict() == {"momentum": RULER, "momentum-fast": CONTESTANT,
                                       "trend-entered": CONTESTANT, "equal-weight": RULER}
    contestants = board[board["role"] == CONTESTANT].sort_values("total_return",
                                                                 ascending=False)
    assert contestants["place"].tolist()[0] == 1
    assert sorted(contestants["place"].tolist()) in ([1, 2], [1, 1])
    assert board.loc[["momentum", "equal-weight"], "place"].isna().all()
    ledger = Ledger(season)
    assert {n: recorded_role(ledger, n) for n in board.index} == board["role"].to_dict()
