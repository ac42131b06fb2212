"""A league's folder, its next season and what its marts gather, on small made-up lakes (no
cycle, no dbt: tests/app/test_league.py plays and publishes real seasons): the seasons' order,
states and how they meet; where the next season starts and when it is refused; the verdict
grouping a replicated model's instances, and a leaderboard published before replicates read
as one instance per contestant."""

from __future__ import annotations

import datetime as dt
import json
import math
from dataclasses import replace
from pathlib import Path
from statistics import NormalDist

import pandas as pd
import pyarrow.parquet as pq
import pytest

from arena.data.lake import Lake, write_text
from arena.pipeline.league import (
    CLOSED,
    CONTINUES,
    FIRST,
    GAP,
    OPEN,
    OVERLAPS,
    REPLAYED,
    REPLAYING,
    LeagueError,
    init_league_season,
    next_start,
    read_league,
    read_season,
)
from arena.pipeline.league_marts import gather, verdict_frame
from arena.pipeline.live.closed import CLOSED as CLOSED_FILE
from arena.pipeline.season_config import LIVE, REPLAY, init_season, make_season
from arena.scoring.verdict import TOO_FEW

ROSTER = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"


def _season(root: Path, season_id: str, start: str, days: int, *, closed: bool = False,
            board: pd.DataFrame | None = None, follows: str | None = None,
            units: tuple[str, ...] | None = None) -> Lake:
    """A season lake in the league at ``root``: its config (and a roster), closed or not, with
    a published leaderboard (an empty trades mart, and the ladder of matched players for each
    of ``units``: default every contestant of the board) when ``board`` is given."""
    lake = Lake(root / season_id)
    roster = root.parent / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    init_season(lake, make_season(start, days, ["BTC", "SPY"], season_id=season_id,
                                  follows=follows), roster=roster)
    if closed:
        write_text(lake.root / "season" / CLOSED_FILE, json.dumps({"closed_at": "2026-01-01"}))
    if board is not None:
        marts = lake.root / "marts"
        marts.mkdir()
        board.to_parquet(marts / "leaderboard.parquet")
        pd.DataFrame({"contestant": pd.Series([], dtype=str), "status": pd.Series([], dtype=str),
                      "net_pnl": pd.Series([], dtype=float)}).to_parquet(marts / "trades.parquet")
        _matched(units if units is not None else tuple(board["contestant"])).to_parquet(
            marts / "matched_players.parquet")
    return lake


LADDER = [float(i) for i in range(200)]  # matched players' returns: 0 .. 199, every season


def _matched(units: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({"unit": [u for u in units for _ in LADDER],
                         "player": [i for _ in units for i in range(len(LADDER))],
                         "final_return": [r for _ in units for r in LADDER]})


def _hand_z(values: list[float]) -> tuple[float, float]:
    """Z and p of a unit with these returns (one a season) among the ladder: pandas' average
    ranks, (rank - 0.5) / 201, every player's Z beside the unit's."""
    phi = NormalDist()
    total = pd.Series(0.0, index=range(len(LADDER) + 1))
    for value in values:
        ranks = pd.Series([value, *LADDER]).rank(method="average")
        total += ((ranks - 0.5) / (len(LADDER) + 1)).map(phi.inv_cdf)
    z = total / math.sqrt(len(values))
    return z[0], (z >= z[0] - 1e-12).sum() / len(z)


def _board(rows: list[tuple[str, str, float]], *, replicates: dict[str, str] | None = None,
           players: int = 200) -> pd.DataFrame:
    """A leaderboard: (contestant, role, total return) rows; ``replicates``: instance -> model
    (a replicate_of column only when given)."""
    frame = pd.DataFrame({
        "place": range(1, len(rows) + 1), "contestant": [r[0] for r in rows],
        "role": [r[1] for r in rows], "total_return": [r[2] for r in rows],
        "zero_skill_percentile": [0.5] * len(rows), "rank_score": [0.5] * len(rows),
        "zero_skill_players": [players] * len(rows), "skill_percentile": [0.5] * len(rows),
        "skill_players": [players] * len(rows), "skill_status": ["scored"] * len(rows),
        "fills": [2] * len(rows), "round_trips": [0] * len(rows)})
    if replicates is not None:
        frame["replicate_of"] = [replicates.get(r[0]) for r in rows]
    return frame


def test_the_seasons_in_order_with_their_states_and_how_they_meet(tmp_path):
    root = tmp_path / "league"
    _season(root, "b", "2026-01-03", 3, closed=True)  # 01-03 .. 01-05
    _season(root, "a", "2026-01-01", 3, closed=True)  # 01-01 .. 01-03: b continues it
    _season(root, "c", "2026-01-09", 2)  # overlaps d
    _season(root, "d", "2026-01-08", 3)  # a gap after b
    (root / "marts").mkdir()  # the league's own folders and hidden entries are not seasons
    (root / ".marts.v-1").mkdir()
    (root / "league.duckdb").write_bytes(b"")
    seasons = read_league(root)
    assert [(s.id, s.state, s.after) for s in seasons] == [
        ("a", CLOSED, FIRST), ("b", CLOSED, CONTINUES), ("d", OPEN, GAP), ("c", OPEN, OVERLAPS)]
    assert [s.cycles for s in seasons] == [0, 0, 0, 0] and not any(s.published for s in seasons)
    assert seasons[0].rulers == ("momentum",) and seasons[0].contestants == ()
    (root / "notes").mkdir()
    with pytest.raises(LeagueError, match="notes is not a season lake"):
        read_league(root)
    with pytest.raises(LeagueError, match="is a season's lake, not a league"):
        read_league(root / "a")


def test_the_next_season_starts_at_the_end_of_the_last(tmp_path):
    root = tmp_path / "league"
    with pytest.raises(LeagueError, match="holds no season yet"):
        next_start(root)
    assert next_start(root, dt.date(2026, 1, 1)) == (dt.date(2026, 1, 1), None, None)
    _season(root, "one", "2026-01-01", 5)
    with pytest.raises(LeagueError, match=r"season 'one' .* is open .*publish --final"):
        next_start(root)
    write_text(root / "one" / "season" / CLOSED_FILE, json.dumps({"closed_at": "2026-01-06"}))
    start, hour, previous = next_start(root)
    assert (start, hour, previous.id) == (dt.date(2026, 1, 5), 16, "one")
    with pytest.raises(LeagueError, match="before the end of season 'one'"):
        next_start(root, dt.date(2026, 1, 4))
    assert next_start(root, dt.date(2026, 1, 9))[0] == dt.date(2026, 1, 9)  # a gap is allowed
    lake, config = init_league_season(root, make_season(start, 2, ["BTC"], follows="one"))
    assert lake.root == root / config.id and config.first == previous.config.last
    assert config.follows == "one"
    with pytest.raises(LeagueError, match="already holds a season"):
        init_league_season(root, make_season(start, 3, ["BTC"], season_id=config.id))
    for bad in (".hidden", "dbt", "a/b"):
        with pytest.raises(LeagueError, match="cannot name a season's folder"):
            init_league_season(root, make_season(start, 2, ["BTC"], season_id=bad))


def test_a_replay_ends_when_its_last_cycle_is_recorded(tmp_path):
    lake = Lake(tmp_path / "league" / "r")
    init_season(lake, make_season("2026-01-01", 2, ["BTC"], mode=REPLAY))
    season = read_season(lake.root)
    assert season.state == REPLAYING and not season.ended
    assert replace(season, last_recorded=season.config.last).state == REPLAYED


def test_the_verdict_reads_a_replicated_model_as_one_draw_a_season(tmp_path):
    """Two seasons; gpt plays as two instances (gpt-r1, gpt-r2) in both: one draw a season, the
    instances' mean return among the model's own matched players; solo has one instance, no
    replicate_of; a ruler is tested apart."""
    seasons = {"s1": [("gpt-r1", "contestant", 150.5), ("gpt-r2", "contestant", 190.5),
                      ("solo", "contestant", 99.5), ("momentum", "ruler", 198.5)],
               "s2": [("gpt-r1", "contestant", 180.5), ("gpt-r2", "contestant", 190.5),
                      ("solo", "contestant", 79.5), ("momentum", "ruler", 39.5)]}
    replicas = {"gpt-r1": "gpt", "gpt-r2": "gpt"}
    boards = pd.concat([_board(rows, replicates=replicas).assign(season_id=s)
                        for s, rows in seasons.items()], ignore_index=True)
    matched = pd.concat([_matched(("gpt", "solo", "momentum", "gpt-r1", "gpt-r2"))
                         .assign(season_id=s) for s in seasons], ignore_index=True)
    verdict = verdict_frame(boards, ["s1", "s2"], matched).set_index("model")
    assert sorted(verdict.index) == ["gpt", "momentum", "solo"]
    gpt = verdict.loc["gpt"]
    assert (gpt["instances"], gpt["seasons"], gpt["players"]) == (2, 2, 200)
    z, p = _hand_z([170.5, 185.5])  # the instances' means, not each instance
    assert gpt["stouffer_z"] == pytest.approx(z) and gpt["p_value"] == pytest.approx(p)
    assert gpt["median_skill_percentile"] == pytest.approx((171.5 / 201 + 186.5 / 201) / 2)
    assert (gpt["first_season"], gpt["last_season"]) == ("s1", "s2")
    assert verdict.loc["solo", "stouffer_z"] == pytest.approx(_hand_z([99.5, 79.5])[0])
    contestants = verdict[verdict["role"] == "contestant"]
    assert set(contestants["family_size"]) == {2}
    assert verdict.loc["momentum", "family_size"] == 1
    ps = contestants["p_value"]
    assert list(contestants["holm_p_value"]) == pytest.approx(
        [min(1, max(2 * ps.min(), p)) if p != ps.min() else min(1, 2 * p) for p in ps])
    assert "2 contestants" in gpt["method"] and "1 ruler " in verdict.loc["momentum", "method"]
    assert gpt["in_words"].startswith("With 2 seasons tested among 2")
    assert "relabelled at random" in gpt["null_hypothesis"]
    # one season only: too few seasons, whatever the places
    one = verdict_frame(boards[boards["season_id"] == "s1"], ["s1", "s2"],
                        matched).set_index("model")
    assert set(one["verdict"]) == {TOO_FEW} and one["holm_p_value"].isna().all()
    assert one.loc["gpt", "in_words"].startswith("Not tested: 1 season with positions")


def test_a_season_without_a_position_is_left_out_and_said(tmp_path):
    boards = pd.concat([_board([("idle", "contestant", 0.0), ("busy", "contestant", 150.5)])
                        .assign(season_id=s) for s in ("s1", "s2", "s3")], ignore_index=True)
    boards.loc[(boards["contestant"] == "idle") & (boards["season_id"] != "s2"),
               "skill_status"] = "no_trades"
    matched = pd.concat([_matched(("busy", "idle") if s == "s2" else ("busy",))
                         .assign(season_id=s) for s in ("s1", "s2", "s3")], ignore_index=True)
    verdict = verdict_frame(boards, ["s1", "s2", "s3"], matched).set_index("model")
    idle = verdict.loc["idle"]
    assert (idle["seasons"], idle["seasons_without_positions"], idle["verdict"]) == (1, 2, TOO_FEW)
    assert idle["in_words"] == ("Not tested: 1 season with positions (2 without a position: no "
                                "choice to test, left out); the verdict needs at least 2.")
    assert pd.isna(idle["holm_p_value"]) and idle["family_size"] == 0
    busy = verdict.loc["busy"]
    assert (busy["seasons"], busy["seasons_without_positions"], busy["family_size"]) == (3, 0, 1)
    never = verdict_frame(boards[boards["contestant"] == "idle"].assign(skill_status="no_trades"),
                          ["s1", "s2", "s3"], matched[matched["unit"] == "busy"])
    assert never.set_index("model").loc["idle", "seasons_without_positions"] == 3


def test_contaminated_seasons_are_left_out_of_a_models_verdict_unless_all_are_asked(tmp_path):
    """Three seasons of one model; s1 is contaminated for it (its prices may be in what it
    read), s3 is historical: the default reads s2 and s3, said in words; live and historical
    read one kind, all reads every season."""
    places = {"s1": 199.5, "s2": 150.5, "s3": 170.5}
    boards = pd.concat([_board([("gpt", "contestant", x), ("rule", "contestant", 99.5)])
                        .assign(season_id=s, season_mode=LIVE if s != "s3" else REPLAY,
                                contaminated=lambda b, s=s: (b["contestant"] == "gpt")
                                & (s == "s1"))
                        for s, x in places.items()], ignore_index=True)
    matched = pd.concat([_matched(("gpt", "rule")).assign(season_id=s) for s in places],
                        ignore_index=True)
    order = list(places)

    def read(selection: str) -> pd.Series:
        return verdict_frame(boards, order, matched, selection=selection).set_index(
            "model").loc["gpt"]

    clean = read("clean")
    assert (clean["seasons"], clean["seasons_contaminated"]) == (2, 1)
    assert clean["stouffer_z"] == pytest.approx(_hand_z([150.5, 170.5])[0])
    assert clean["in_words"].endswith("1 contaminated season left out (its model may have read "
                                      "their prices).")
    assert clean["seasons_read"].startswith("every counted season, live or historical, not")
    everything = read("all")
    assert (everything["seasons"], everything["seasons_contaminated"]) == (3, 0)
    assert everything["stouffer_z"] == pytest.approx(_hand_z([199.5, 150.5, 170.5])[0])
    live = read("live")  # s1 (contaminated) and s2 are live: only s2 is read
    assert (live["seasons"], live["seasons_contaminated"], live["verdict"]) == (1, 1, TOO_FEW)
    assert read("historical")["seasons"] == 1
    assert verdict_frame(boards, order, matched).set_index("model").loc["rule", "seasons"] == 3
    with pytest.raises(ValueError, match="selection must be one of clean, live"):
        verdict_frame(boards, order, matched, selection="recent")


def test_gather_reads_a_leaderboard_from_before_replicates_as_one_instance_each(tmp_path):
    root = tmp_path / "league"
    old = _board([("a", "contestant", 139.5), ("b", "contestant", 59.5)])  # no replicate_of
    new = _board([("a", "contestant", 159.5), ("b-r1", "contestant", 119.5)],
                 replicates={"b-r1": "b"})
    _season(root, "s1", "2026-01-01", 2, closed=True, board=old)
    _season(root, "s2", "2026-01-02", 2, closed=True, board=new, follows="s1",
            units=("a", "b", "b-r1"))
    _season(root, "s3", "2026-01-03", 2, board=new, follows="s2")  # open: listed, not counted
    verdict = gather(root, read_league(root)).set_index("model")
    assert verdict.loc["a", "seasons"] == 2 and verdict.loc["a", "instances"] == 1
    assert verdict.loc["b", "seasons"] == 2 and verdict.loc["b", "instances"] == 2  # b, b-r1
    assert verdict.loc["a", "stouffer_z"] == pytest.approx(_hand_z([139.5, 159.5])[0])
    gathered = root / "dbt" / "league"
    boards = pd.concat([pd.read_parquet(p) for p in sorted((gathered / "leaderboards")
                                                             .glob("*.parquet"))])
    assert len(boards) == 6 and boards["replicate_of"].isna().sum() == 4
    seasons = pq.read_table(gathered / "seasons" / "seasons.parquet").to_pandas()
    assert seasons["counted"].to_list() == [True, True, False]
    assert seasons["after"].to_list() == ["first", "continues", "continues"]
    assert str(seasons["closed_at"].dtype) == "datetime64[us, UTC]"
    assert seasons["closed_at"].notna().to_list() == [True, True, False]


def test_gather_refuses_marts_without_a_column_it_reads(tmp_path):
    root = tmp_path / "league"
    _season(root, "s1", "2026-01-01", 2, closed=True,
            board=_board([("a", "contestant", 0.7)]).drop(columns=["role"]))
    with pytest.raises(LeagueError, match=r"leaderboard\.parquet has no role .*season publish"):
        gather(root, read_league(root))
    # a season published before leaderboard.trades was renamed fills: refused by name
    renamed = tmp_path / "renamed"
    _season(renamed, "s1", "2026-01-01", 2, closed=True,
            board=_board([("a", "contestant", 0.7)]).rename(columns={"fills": "trades"}))
    with pytest.raises(LeagueError, match=r"leaderboard\.parquet has no fills .*season publish"):
        gather(renamed, read_league(renamed))
    # a season published before the skill percentile: refused by name, not read as luck
    before = tmp_path / "before"
    lake = _season(before, "s1", "2026-01-01", 2, closed=True,
                   board=_board([("a", "contestant", 0.7)]).drop(
                       columns=["skill_percentile", "skill_players", "skill_status"]))
    with pytest.raises(LeagueError, match=r"has no skill_percentile, skill_players, skill_status"):
        gather(before, read_league(before))
    (lake.root / "marts" / "matched_players.parquet").unlink()
    _board([("a", "contestant", 0.7)]).to_parquet(lake.root / "marts" / "leaderboard.parquet")
    with pytest.raises(LeagueError, match=r"cannot read .*matched_players\.parquet"):
        gather(before, read_league(before))
    empty = tmp_path / "empty"
    _season(empty, "s1", "2026-01-01", 2)
    with pytest.raises(LeagueError, match=r"no season of the league .* is published"):
        gather(empty, read_league(empty))
