"""A contest's marts (``contest_standings``, ``contest_boundary``) built by a real ``dbt build``
from hand-made season tables whose answers are known: who cleared each asset's luck ceiling,
who holds first place (a tie for first on BTC sharing the first two prizes, three tracks tied
second on USO sharing the one prize left), what each track is paid - the SQL's prizes pinned to
:func:`arena.pipeline.contest.prizes_by_place` - and that a season which is not a contest has
both marts, empty.

The tables (``asset_tracks``, ``contest_assets``) are written as the season's build writes
them (:func:`~arena.pipeline.season_tables.write_analytics`, typed by their schemas); only the
contest's models and their upstream are built (a few seconds), into dbt's own database. The
site then serves the marts built here, beside a hand-made season's (``tiny_marts``), on a real
server on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import httpx
import pandas as pd
import pyarrow as pa
import pytest

from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.doors.web import server_config
from arena.pipeline.contest import Contest, prizes_by_place
from arena.pipeline.season_tables import Analytics, asset_tracks_schema, write_analytics
from arena.pipeline.season_tables.build import contest_assets
from arena.pipeline.warehouse import MartsError, build_dir, open_built, run_dbt
from tests import serving
from tests.conftest import ts
from tests.reporting.tiny_marts import tiny_marts

START, END = ts("2026-03-02 16:00"), ts("2026-03-12 16:00")
CONTEST = Contest(fees={"NVDA": 0.0002, "BTC": 0.0006, "GLD": 0.0002, "USO": 0.0003},
                  prizes={"NVDA": (500.0,), "BTC": (500.0, 300.0, 100.0), "GLD": (500.0,),
                          "USO": (500.0, 300.0)})
CEILINGS = {"NVDA": 0.50, "BTC": 0.30, "USO": 0.12, "ETH": 0.2}
# (entrant, symbol, return, coverage); None: no position earned a bar yet
TRACKS: tuple[tuple[str, str, float | None, float], ...] = (
    ("ann", "BTC", 0.40, 0.90),   # tied first with bob, above the ceiling
    ("bob", "BTC", 0.40, 1.00),
    ("cat", "BTC", 0.10, 0.75),   # third, below the ceiling
    ("dan", "BTC", 0.90, 0.50),   # the best return, ineligible: no place, no prize, not cleared
    ("eve", "BTC", None, 0.00),   # no position yet
    ("ann", "NVDA", 0.45, 0.95),  # first, below the ceiling
    ("bob", "NVDA", 0.20, 0.80),
    ("cat", "USO", 0.12, 0.70),   # first, exactly at the ceiling: not above it
    ("dan", "USO", 0.05, 0.71),   # three tied second share the second prize
    ("eve", "USO", 0.05, 0.99),
    ("fay", "USO", 0.05, 0.88),
    ("ann", "ETH", 0.90, 1.00),   # not an asset of the contest
)
MARTS = ("contest_standings", "contest_boundary")
TESTS = ("contest_prizes_add_up_to_the_places_taken", "contest_boundary_counts_are_nested")


def track_rows(tracks: Sequence[tuple[str, str, float | None, float]],
               ceilings: Mapping[str, float], eligibility: float) -> pd.DataFrame:
    """The ``asset_tracks`` table of ``tracks``: scored ones placed as the season's build
    places them (1 + the eligible tracks of the asset with a strictly higher return)."""
    rows = []
    for entrant, symbol, ret, coverage in tracks:
        scored = ret is not None
        rows.append({
            "entrant": entrant, "symbol": symbol, "status": "scored" if scored else "no_position",
            "season_start": START, "season_end": END, "first_submitted_at": START,
            "grid": "1h", "bars": 100, "return": ret, "turnover": 1.0 if scored else None,
            "fees": 0.0006 if scored else None, "coverage": coverage,
            "eligible": scored and coverage >= eligibility,
            "percentile": 0.9 if scored else None, "rank_score": 1.0 if scored else None,
            "rank": None, "players": 20_000 if scored else None, "seed": 0,
            "cost_rate": CONTEST.fees.get(symbol, 0.0006),
            "ceiling": ceilings[symbol] if scored else None})
    for row in rows:
        if row["eligible"]:
            row["rank"] = 1 + sum(o["eligible"] and o["return"] > row["return"] for o in rows
                                  if o["symbol"] == row["symbol"])
    return pa.Table.from_pylist(rows, schema=asset_tracks_schema()).to_pandas(
        types_mapper=pd.ArrowDtype)


def build(lake: Lake, contest: Contest | None, universe,
          tracks: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """Write the season's tables of ``contest`` (``tracks``: :data:`TRACKS` by default) into
    ``lake``, build the contest's marts with dbt (their tests passing) and read them back from
    dbt's database."""
    if tracks is None:
        tracks = track_rows(TRACKS, CEILINGS, 0.7 if contest is None else contest.eligibility)
    write_analytics(lake, Analytics({"asset_tracks": tracks,
                                     "contest_assets": contest_assets(contest, universe)}))
    result = run_dbt(lake, None, "--quiet", "--select", *(f"+{m}" for m in MARTS))
    ran = {n.name: n.status for n in result.nodes}
    assert {m: ran[m] for m in MARTS} == dict.fromkeys(MARTS, "success")
    assert {t: ran[t] for t in TESTS} == dict.fromkeys(TESTS, "pass")
    with open_built(build_dir(lake) / "warehouse.duckdb") as con:
        return {m: con.execute(f"select * from marts.{m}").df() for m in MARTS}


@pytest.fixture(scope="module")
def contest_marts(tmp_path_factory) -> dict[str, pd.DataFrame]:
    return build(Lake(tmp_path_factory.mktemp("contest") / "lake"), CONTEST, load_universe())


def _by(frame: pd.DataFrame, *keys: str) -> dict[object, dict[str, object]]:
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r
            for r in frame.to_dict("records")}


def test_the_standings_say_who_cleared_the_ceiling_and_who_is_paid(contest_marts):
    standings = _by(contest_marts["contest_standings"], "entrant", "symbol")
    assert ("ann", "ETH") not in standings  # only the contest's assets
    assert len(standings) == len(TRACKS) - 1
    cleared = {k for k, r in standings.items() if r["cleared"]}
    assert cleared == {("ann", "BTC"), ("bob", "BTC")}  # dan's 0.90 is ineligible, cat's
    # USO 0.12 is at the ceiling, not above it
    places = {k: (None if pd.isna(r["place"]) else int(r["place"])) for k, r in standings.items()}
    assert places == {("ann", "BTC"): 1, ("bob", "BTC"): 1, ("cat", "BTC"): 3,
                      ("dan", "BTC"): None, ("eve", "BTC"): None, ("ann", "NVDA"): 1,
                      ("bob", "NVDA"): 2, ("cat", "USO"): 1, ("dan", "USO"): 2,
                      ("eve", "USO"): 2, ("fay", "USO"): 2}
    prizes = {k: r["prize"] for k, r in standings.items()}
    assert prizes == {("ann", "BTC"): 400.0, ("bob", "BTC"): 400.0, ("cat", "BTC"): 100.0,
                      ("dan", "BTC"): 0.0, ("eve", "BTC"): 0.0, ("ann", "NVDA"): 500.0,
                      ("bob", "NVDA"): 0.0, ("cat", "USO"): 500.0, ("dan", "USO"): 100.0,
                      ("eve", "USO"): 100.0, ("fay", "USO"): 100.0}
    eve = standings[("eve", "BTC")]
    assert eve["status"] == "no_position" and not eve["eligible"] and not eve["cleared"]
    assert pd.isna(eve["total_return"]) and pd.isna(eve["luck_ceiling"])
    assert {r["contest"] for r in standings.values()} == {"FINCHAL"}
    assert standings[("ann", "BTC")]["fee_rate"] == 0.0006
    assert standings[("ann", "BTC")]["tied"] == 2 and standings[("dan", "USO")]["tied"] == 3


def test_the_sql_prizes_are_prizes_by_place(contest_marts):
    """Per asset, the mart's prizes are :func:`prizes_by_place` of the same places."""
    standings = contest_marts["contest_standings"]
    for symbol, rows in standings.groupby("symbol"):
        places = [None if pd.isna(p) else int(p) for p in rows["place"]]
        expected = prizes_by_place(places, CONTEST.prizes[str(symbol)])
        assert list(rows["prize"]) == pytest.approx(expected, rel=1e-12, abs=0), symbol


def test_the_boundary_has_a_row_per_asset_with_its_leader(contest_marts):
    boundary = contest_marts["contest_boundary"].sort_values("ordinal")
    assert list(boundary["symbol"]) == ["NVDA", "BTC", "GLD", "USO"]  # the contest's order
    rows = _by(boundary, "symbol")
    counts = {s: (r["entrants"], r["eligible_tracks"], r["cleared_tracks"]) for s, r in
              rows.items()}
    assert counts == {"NVDA": (2, 2, 0), "BTC": (5, 3, 2), "GLD": (0, 0, 0), "USO": (4, 4, 0)}
    assert {s: r["leaders"] for s, r in rows.items() if s != "GLD"} == {
        "NVDA": "ann", "BTC": "ann, bob", "USO": "cat"}
    assert rows["BTC"]["leader_count"] == 2 and rows["BTC"]["best_return"] == 0.40
    assert {s: r["leader_cleared"] for s, r in rows.items()} == {
        "NVDA": False, "BTC": True, "GLD": False, "USO": False}
    assert {s: r["luck_ceiling"] for s, r in rows.items() if s != "GLD"} == {
        "NVDA": 0.50, "BTC": 0.30, "USO": 0.12}
    assert {s: (r["prize_paid"], r["prize_pool"]) for s, r in rows.items()} == {
        "NVDA": (500.0, 500.0), "BTC": (900.0, 900.0), "GLD": (0.0, 500.0),
        "USO": (800.0, 800.0)}
    gld = rows["GLD"]  # no entrant yet: no ceiling of its tracks, no leader
    assert pd.isna(gld["luck_ceiling"]) and pd.isna(gld["leaders"]) and pd.isna(gld["best_return"])
    assert {s: r["fee_rate"] for s, r in rows.items()} == CONTEST.fees
    assert {r["eligibility"] for r in rows.values()} == {0.7}
    assert rows["BTC"]["name"] == "Bitcoin" and rows["USO"]["currency"] == "USD"


def test_a_season_that_is_not_a_contest_has_both_marts_empty(tmp_path, universe):
    marts = build(Lake(tmp_path / "lake"), None, universe)
    assert {m: len(f) for m, f in marts.items()} == dict.fromkeys(MARTS, 0)
    assert {"prize", "cleared", "place"} <= set(marts["contest_standings"].columns)
    assert {"leaders", "prize_paid"} <= set(marts["contest_boundary"].columns)


def test_places_that_skip_a_taken_prize_fail_the_build(tmp_path):
    universe = load_universe()  # every asset, GLD and USO included
    """The marts' tests hold the places to the prizes: a table that places bob's BTC track
    third beside cat's, leaving second place empty, would pay 600 (500 first, 100 shared at
    third) of the 900 its three eligible tracks take, and the build fails, naming the test."""
    tracks = track_rows(TRACKS, CEILINGS, 0.7)
    tracks.loc[(tracks["entrant"] == "bob") & (tracks["symbol"] == "BTC"), "rank"] = 3
    with pytest.raises(MartsError, match="contest_prizes_add_up_to_the_places_taken"):
        build(Lake(tmp_path / "lake"), CONTEST, universe, tracks)


def _publish(root, marts: Mapping[str, pd.DataFrame]) -> None:
    """``marts`` as a publication leaves them, ``<root>/marts/<mart>.parquet``."""
    (root / "marts").mkdir(parents=True)
    for name, frame in marts.items():
        frame.to_parquet(root / "marts" / f"{name}.parquet", index=False)


def test_the_site_serves_the_contest_page_from_these_marts(contest_marts, tmp_path):
    """``/contest`` (the current season's) and ``/seasons/<id>/contest`` show the marts built
    above, linked from the front page; a season that is not a contest has no contest page."""
    contest, plain = tmp_path / "finchal-1", tmp_path / "plain-1"
    _publish(contest, {**tiny_marts(), **contest_marts})
    _publish(plain, tiny_marts())
    with serving.Served(server_config(contest, "127.0.0.1", 0)) as url:
        home = httpx.get(url + "/", timeout=30).text
        assert 'href="/seasons/finchal-1/contest"' in home
        current, own = (httpx.get(url + path, timeout=30) for path in
                        ("/contest", "/seasons/finchal-1/contest"))
        assert current.status_code == own.status_code == 200
        assert current.text == own.text and "ann, bob" in own.text
        assert own.headers["X-Arena-Version"] == httpx.get(url + "/").headers["X-Arena-Version"]
    with serving.Served(server_config(plain, "127.0.0.1", 0)) as url:
        assert 'contest"' not in httpx.get(url + "/", timeout=30).text
        missing = httpx.get(url + "/contest", timeout=30)
        assert missing.status_code == 404
        assert "season plain-1 is not a contest" in missing.text
