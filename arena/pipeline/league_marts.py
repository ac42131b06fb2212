"""The league's marts: dbt models over every published season of a league, and the verdict on
skill across them.

``arena league publish DIR`` (the league job, :mod:`arena.app.league`):

1. **Gather** (:func:`gather`): each published season's leaderboard, round trips and matched
   players, read from
   one publication of its marts (the version ``<season>/marts`` links to when the read starts,
   so a season publishing meanwhile is read whole, old or new), each row labelled with its
   season; the seasons' table (:func:`arena.pipeline.league.league_frame`); and the verdict on
   skill (:func:`verdict_frame`, computed here in Python with :mod:`arena.scoring.verdict`, as
   the luck tables are). They are written under ``<league>/dbt/league/<table>/`` (swapped in
   whole), where the league's dbt source reads them. A season's marts published before its
   leaderboard had a column the league reads are refused by name; a leaderboard without
   ``replicate_of`` (published before replicates) reads as one instance per contestant.
2. **Build**: ``dbt build --select tag:league`` (the models of ``dbt_project/models/league/``,
   excluded from a season's own build), with the league's folder as the lake
   (:func:`arena.pipeline.warehouse.dbt_args`: dbt's files in ``<league>/dbt/``): the seasons,
   the results per season and contestant, the totals per contestant, the verdict, and the
   archive's headline figures (``league_archive``: seasons, contestants, trades - round trips,
   from the gathered round trips -, and the share of seasons the contestants ended positive).
3. **Publish** (:func:`publish_league`): ``<league>/league.duckdb`` (a copy, swapped in; the
   marts in its schema ``marts``: ``select * from marts.league_verdict``) and
   ``<league>/marts/<mart>.parquet`` (the folder swapped whole), as a season's marts are.

Which seasons count: the totals and the verdict read the *counted* seasons only - ended (closed,
or a replay played to its last cycle) and published; ``league_results`` lists every published
season, an open one marked as not counted. The verdict places each model, season by season,
among its matched players (the ``matched_players`` mart: its book with the assets relabelled at
random; player ``d`` relabels the same way every season) - a replicated model (``replicate_of``)
as one draw a season, its instances' mean return among the means of players that relabel them
together; every other contestant is one instance of itself. Its families for Holm-Bonferroni
are the roles: the contestants are tested together, and the rulers (the house rules) apart, so
a yardstick never weakens a contestant's verdict.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.core.marts import LEAGUE_MARTS
from arena.data.lake import Lake, swap_dir
from arena.pipeline.knowledge import contamination
from arena.pipeline.league import (
    LEAGUE_DB,
    MARTS_DIR,
    LeagueError,
    LeagueSeason,
    league_frame,
)
from arena.pipeline.season_config import LIVE, REPLAY, season_roster
from arena.pipeline.warehouse import (
    BuildResult,
    Invoke,
    MartsError,
    build_dir,
    dbt_args,
    dbt_invoke,
    invoke_build,
    open_built,
)
from arena.reporting.roles import CONTESTANT, ROLES
from arena.scoring.verdict import (
    ALPHA,
    MIN_SEASONS,
    NULL,
    TOO_FEW,
    SeasonPlace,
    Verdict,
    family_share,
    method,
    verdicts,
)

LEAGUE_TAG = "league"  # the models' tag (a season's build excludes it: pipeline.warehouse)
LEAGUE_SCHEMA = "marts"  # the marts' schema in league.duckdb, as in a season's warehouse
GATHERED = "league"  # <league>/dbt/league/<table>/*.parquet: the dbt source `league`
BOARD_COLUMNS = ("contestant", "role", "place", "total_return", "zero_skill_percentile",
                 "rank_score", "zero_skill_players", "skill_percentile", "skill_players",
                 "skill_status", "fills", "round_trips")
TRADE_COLUMNS = ("contestant", "status", "net_pnl")
MATCHED_COLUMNS = ("unit", "player", "final_return")
REPLICATE_OF = "replicate_of"


# Which of a model's counted seasons the verdict reads (``arena league publish --seasons``), in
# words: every selection but ``all`` leaves out a season contaminated for the model
# (arena.pipeline.knowledge), which tests its memory of the prices rather than its judgement.
SELECTIONS = {
    "clean": "every counted season, live or historical, not contaminated for the model",
    "live": "the live seasons not contaminated for the model",
    "historical": "the historical (replayed) seasons not contaminated for the model",
    "all": "every counted season, contaminated ones included",
}
SEASON_MODES = {"live": LIVE, "historical": REPLAY}


def _verdict_schema() -> pa.Schema:
    number = pa.float64()
    return pa.schema([
        ("model", pa.string()), ("role", pa.string()), ("instances", pa.int64()),
        ("seasons", pa.int64()), ("seasons_without_positions", pa.int64()),
        ("players", pa.int64()), ("first_season", pa.string()), ("last_season", pa.string()),
        ("median_skill_percentile", number), ("stouffer_z", number), ("p_value", number),
        ("normal_p_value", number), ("fisher_statistic", number), ("fisher_p_value", number),
        ("holm_p_value", number), ("bh_p_value", number), ("family_size", pa.int64()),
        ("family_skill_share", number), ("power_at_90", number),
        ("edge_flagged_half", number), ("edge_flagged_80", number), ("verdict", pa.string()),
        ("in_words", pa.string()), ("method", pa.string()), ("null_hypothesis", pa.string()),
        ("seasons_read", pa.string()), ("seasons_contaminated", pa.int64())])


def _seasons_schema() -> pa.Schema:
    moment = pa.timestamp("us", tz="UTC")
    return pa.schema([
        ("ordinal", pa.int64()), ("season_id", pa.string()), ("folder", pa.string()),
        ("mode", pa.string()), ("start_date", pa.date32()), ("days", pa.int64()),
        ("first_cycle", moment), ("last_cycle", moment), ("cycles", pa.int64()),
        ("state", pa.string()), ("ended", pa.bool_()), ("published", pa.bool_()),
        ("counted", pa.bool_()), ("follows", pa.string()), ("after", pa.string()),
        ("closed_at", moment), ("contestants", pa.int64()), ("rulers", pa.int64()),
        ("blind", pa.bool_())])


@dataclass
class LeagueBuild:
    """A league publication: the seasons read (every one of the league), the ones counted, the
    verdict table, dbt's result and where the marts went."""

    seasons: list[LeagueSeason]
    verdict: pd.DataFrame
    build: BuildResult
    warehouse: Path
    marts: Path

    @property
    def counted(self) -> list[LeagueSeason]:
        return [s for s in self.seasons if s.counted]

    @property
    def published(self) -> list[LeagueSeason]:
        return [s for s in self.seasons if s.published]


# ------------------------------------------------------------------------------------ gather
def _marts_of(season: LeagueSeason) -> Path:
    """The publication of the season's marts that ``<season>/marts`` links to now."""
    return Path(os.path.realpath(season.folder / MARTS_DIR))


def _read(path: Path, columns: Sequence[str], season: LeagueSeason,
          optional: Sequence[str] = ()) -> pd.DataFrame:
    try:
        names = pq.read_schema(path).names
    except (OSError, pa.ArrowInvalid) as exc:
        raise LeagueError(f"season {season.id!r}: cannot read {path}: {exc} (publish the season "
                          f"again: arena season publish --lake {season.folder})") from None
    missing = [c for c in columns if c not in names]
    if missing:
        raise LeagueError(f"season {season.id!r}: {path.name} has no {', '.join(missing)} (its "
                          "marts were published by an older arena): publish it again with arena "
                          f"season publish --lake {season.folder}")
    kept = [*columns, *(c for c in optional if c in names)]
    frame = pq.read_table(path, columns=kept).to_pandas()
    for column in optional:
        if column not in frame:
            frame[column] = pd.Series([None] * len(frame), dtype="string")
    frame.insert(0, "season_id", season.id)
    return frame


def read_results(season: LeagueSeason) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(leaderboard, round trips, matched players) of one published season, from one
    publication of its marts, each row labelled with the season."""
    marts = _marts_of(season)
    board = _read(marts / "leaderboard.parquet", BOARD_COLUMNS, season, (REPLICATE_OF,))
    trips = _read(marts / "trades.parquet", TRADE_COLUMNS, season)
    matched = _read(marts / "matched_players.parquet", MATCHED_COLUMNS, season)
    return board, trips, matched


def _places(boards: pd.DataFrame, matched: Mapping[tuple[str, str], pd.DataFrame], model: str,
            seasons: Sequence[str]) -> tuple[list[SeasonPlace], int]:
    """A model's seasons with a place (its return and its matched players' returns, ordered by
    player; ``matched``: the players by (season, unit)) and the number of its seasons without
    one (no position, or no players published)."""
    places, without = [], 0
    mine = dict(iter(boards[boards["model"] == model].groupby("season_id", sort=False)))
    for season in seasons:
        rows = mine.get(season)
        if rows is None:
            continue
        # a unit has matched players exactly when its book is scored (the mart's rule)
        players = matched.get((season, model))
        if players is None:
            without += 1
            continue
        players = players.sort_values("player")
        if not (players["player"].to_numpy() == range(len(players))).all():
            raise LeagueError(f"season {season!r}: the matched players of {model} are not "
                              "numbered 0.. (publish the season again)")
        value = float(rows["total_return"].astype(float).mean())
        places.append(SeasonPlace(season, value, players["final_return"].to_numpy(float)))
    return places, without


def verdict_frame(boards: pd.DataFrame, order: Sequence[str], matched: pd.DataFrame | None = None,
                  *, alpha: float = ALPHA, min_seasons: int = MIN_SEASONS,
                  selection: str = "clean") -> pd.DataFrame:
    """The verdict on skill of every model of ``boards`` (the counted seasons' leaderboard rows,
    with ``season_id``; ``order``: the season ids in league order; ``matched``: the counted
    seasons' matched players, with ``season_id``): each season's return (a replicated model's:
    its instances' mean) among its matched players', combined over its seasons
    (:func:`arena.scoring.verdict.verdicts`), a family per role. A model is ``replicate_of``
    where an instance names it, else the contestant; its role, the one of its latest season. A
    season in which it opened no position has no place: left out, and counted as such.

    ``selection`` (:data:`SELECTIONS`) says which seasons are read: ``live`` and ``historical``
    only the seasons whose ``season_mode`` is that one; a row whose ``contaminated`` is true is
    left out of its model's seasons unless the selection is ``all``, and counted
    (``seasons_contaminated``, and said in ``in_words``)."""
    schema = _verdict_schema()
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, not {selection!r}")
    if selection in SEASON_MODES and "season_mode" in boards:
        boards = boards[boards["season_mode"] == SEASON_MODES[selection]]
    if boards.empty:
        return schema.empty_table().to_pandas()
    if matched is None:
        matched = pd.DataFrame(columns=["season_id", *MATCHED_COLUMNS])
    position = {s: i for i, s in enumerate(order)}
    boards = boards.assign(model=_model_of(boards), ordinal=boards["season_id"].map(position),
                           role=boards["role"].fillna(CONTESTANT))
    tainted = (boards["contaminated"].fillna(False).astype(bool)
               if "contaminated" in boards and selection != "all"
               else pd.Series(False, index=boards.index))
    contaminated = boards[tainted].groupby("model")["season_id"].nunique()
    read = boards[~tainted]
    latest = boards.sort_values(["ordinal", "contestant"]).groupby("model")["role"].last()
    counted = sorted(set(read["season_id"]), key=lambda s: position.get(s, len(position)))
    by_unit = dict(iter(matched.groupby(["season_id", "unit"], sort=False)))  # split once
    rows = []
    for role in [*ROLES, *sorted(set(latest) - set(ROLES))]:
        models = sorted(latest.index[latest == role])
        if not models:
            continue
        band = read[read["model"].isin(models)]
        placed = {m: _places(band, by_unit, m, counted) for m in models}
        found = {v.name: v for v in verdicts({m: p for m, (p, _) in placed.items() if p},
                                             alpha=alpha, min_seasons=min_seasons)}
        tested = sum(v.tested for v in found.values())
        share = family_share(list(found.values()))
        how = method(f"{tested} {role}{'' if tested == 1 else 's'}", alpha=alpha,
                     min_seasons=min_seasons)
        for m in models:
            rows.append(_verdict_row(
                m, role, band[band["model"] == m], placed[m], found.get(m),
                int(contaminated.get(m, 0)), share=share, how=how, selection=selection,
                min_seasons=min_seasons))
    return pa.Table.from_pylist(rows, schema=schema).to_pandas()


def _verdict_row(model: str, role: str, mine: pd.DataFrame,
                 placed: tuple[list[SeasonPlace], int], v: Verdict | None, contaminated: int,
                 *, share: float | None, how: str, selection: str, min_seasons: int
                 ) -> dict[str, object]:
    """One model's row of the verdict table (see :func:`verdict_frame`): ``mine``, its rows of
    the seasons read; ``placed``, its places and the seasons without a position;
    ``contaminated``, the seasons left out as contaminated."""
    places, without = placed
    base = {"model": model, "role": role, "instances": mine["contestant"].nunique(),
            "seasons": len(places), "seasons_without_positions": without,
            "first_season": mine.loc[mine["ordinal"].idxmin(), "season_id"] if len(mine) else None,
            "last_season": mine.loc[mine["ordinal"].idxmax(), "season_id"] if len(mine) else None,
            "family_skill_share": share if v is not None and v.tested else None,
            "method": how, "null_hypothesis": NULL, "seasons_read": SELECTIONS[selection],
            "seasons_contaminated": contaminated}
    left = (f" {contaminated} contaminated season{'s' if contaminated > 1 else ''} left out "
            "(its model may have read their prices)." if contaminated else "")
    if v is None:
        return {**base, "family_size": 0, "verdict": TOO_FEW,
                "in_words": _untested(0, without, min_seasons) + left}
    words = v.power_words if v.tested else _untested(v.seasons, without, min_seasons)
    if v.tested and without:
        words += f" {without} season{'s' if without > 1 else ''} without a position left out."
    return {**base, "players": v.players, "median_skill_percentile": v.median_percentile,
            "stouffer_z": v.z, "p_value": v.p_value, "normal_p_value": v.normal_p_value,
            "fisher_statistic": v.fisher_statistic, "fisher_p_value": v.fisher_p_value,
            "holm_p_value": v.adjusted_p_value, "bh_p_value": v.bh_p_value,
            "family_size": v.family, "power_at_90": v.power,
            "edge_flagged_half": v.detectable_half, "edge_flagged_80": v.detectable_most,
            "verdict": v.verdict, "in_words": words + left}


def _model_of(boards: pd.DataFrame) -> pd.Series:
    """Each row's model: the replicated model an instance names, else the contestant."""
    model = (boards[REPLICATE_OF].astype("object").where(boards[REPLICATE_OF].notna(),
                                                         boards["contestant"])
             if REPLICATE_OF in boards else boards["contestant"])
    return model.astype(str)


def _untested(seasons: int, without: int, minimum: int) -> str:
    """Why a model was not tested, in words."""
    had = f"{seasons} season{'' if seasons == 1 else 's'} with positions"
    left = (f" ({without} without a position: no choice to test, left out)" if without else "")
    return f"Not tested: {had}{left}; the verdict needs at least {minimum}."


def _write(frame: pd.DataFrame, path: Path, schema: pa.Schema | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    pq.write_table(table, path)


def knowledge_of(season: LeagueSeason) -> dict[str, bool]:
    """Each contestant of the season's roster copy: whether the season is contaminated for it
    (:mod:`arena.pipeline.knowledge`), judged from the season's own config and roster, so a
    season published before the rule existed is judged too."""
    return {k.contestant: k.contaminated
            for k in contamination(season.config, list(season_roster(season.lake)))}


def _judged(board: pd.DataFrame, season: LeagueSeason) -> pd.DataFrame:
    """The season's leaderboard rows with its mode and each row's contamination."""
    known = knowledge_of(season)
    return board.assign(season_mode=season.config.mode,
                        contaminated=board["contestant"].map(known).fillna(False).astype(bool))


def gather(root: Path, seasons: Sequence[LeagueSeason], selection: str = "clean"
           ) -> pd.DataFrame:
    """Write what the league's dbt source reads (see the module docstring) into
    ``<league>/dbt/league/``, swapped in whole; returns the verdict table over the seasons
    ``selection`` reads (:data:`SELECTIONS`)."""
    published = [s for s in seasons if s.published]
    if not published:
        raise LeagueError(f"no season of the league {root} is published yet: publish one first "
                          "(arena season publish --lake <season>)")
    frame = league_frame(seasons)
    ordinal = dict(zip(frame["season_id"], frame["ordinal"], strict=True))
    results = {s.id: read_results(s) for s in published}
    counted = [s.id for s in seasons if s.counted]
    by_id = {s.id: s for s in seasons}
    boards = [_judged(results[s][0], by_id[s]) for s in counted]
    matched = [results[s][2] for s in counted]
    verdict = verdict_frame(pd.concat(boards, ignore_index=True) if boards else
                            pd.DataFrame(columns=["season_id", *BOARD_COLUMNS, REPLICATE_OF]),
                            [s.id for s in seasons],
                            pd.concat(matched, ignore_index=True) if matched else None,
                            selection=selection)
    base = build_dir(Lake(root))
    staging = base / f".{GATHERED}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        _write(frame, staging / "seasons" / "seasons.parquet", _seasons_schema())
        for season_id, (board, trips, _matched) in results.items():
            name = f"{ordinal[season_id]:05d}.parquet"
            _write(board, staging / "leaderboards" / name)
            _write(trips, staging / "trades" / name)
        _write(verdict, staging / "verdict" / "verdict.parquet", _verdict_schema())
        swap_dir(staging, base / GATHERED)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return verdict


# ------------------------------------------------------------------------------ build, publish
def run_league_dbt(root: Path, invoke: Invoke | None = None, *extra: str) -> BuildResult:
    """``dbt build`` of the league's models over what :func:`gather` wrote; :class:`MartsError`
    names what failed (nothing is published then)."""
    return invoke_build(invoke or dbt_invoke(),
                        dbt_args(Lake(root), "build", "--select", f"tag:{LEAGUE_TAG}", *extra),
                        "dbt build of the league")


def publish_league(root: Path, marts: Sequence[str] = LEAGUE_MARTS) -> tuple[Path, Path]:
    """Publish the league's built database as ``<league>/league.duckdb`` and its marts as
    ``<league>/marts/<mart>.parquet`` (each swapped in whole, as a season's are)."""
    source = build_dir(Lake(root)) / "warehouse.duckdb"
    if not source.is_file():
        raise MartsError(f"{source} does not exist: build the league's marts first")
    token = f"{os.getpid()}.{uuid.uuid4().hex[:8]}"
    parquet_dir = root / f".{MARTS_DIR}.{token}"
    parquet_dir.mkdir(parents=True)
    copy = root / f".{LEAGUE_DB}.{token}"
    try:
        with open_built(source) as con:
            con.execute("checkpoint")
            for mart in marts:
                target = str(parquet_dir / f"{mart}.parquet").replace("'", "''")
                con.execute(f"copy (select * from {LEAGUE_SCHEMA}.{mart}) to '{target}' "
                            "(format parquet, compression zstd)")
        shutil.copyfile(source, copy)
        os.replace(copy, root / LEAGUE_DB)
        swap_dir(parquet_dir, root / MARTS_DIR)
    except BaseException:
        shutil.rmtree(parquet_dir, ignore_errors=True)
        copy.unlink(missing_ok=True)
        raise
    return root / LEAGUE_DB, root / MARTS_DIR


def build_league(root: Path, seasons: Sequence[LeagueSeason], invoke: Invoke | None = None, *,
                 quiet: bool = True, progress: Callable[[str], None] | None = None,
                 selection: str = "clean") -> LeagueBuild:
    """Gather, build and publish the marts of the league at ``root`` over ``seasons`` (read by
    :func:`arena.pipeline.league.read_league`), the verdict over the seasons ``selection``
    reads (:data:`SELECTIONS`)."""
    say = progress or (lambda _m: None)
    published = sum(s.published for s in seasons)
    counted = sum(s.counted for s in seasons)
    if published:  # (gather names a league without one)
        say(f"gathering {published} published seasons ({counted} counted) and the verdict")
    verdict = gather(root, seasons, selection)
    say("building the league's marts (dbt)")
    result = run_league_dbt(root, invoke, *(["--quiet"] if quiet else []))
    warehouse, marts = publish_league(root)
    result.warehouse, result.marts = warehouse, marts
    return LeagueBuild(list(seasons), verdict, result, warehouse, marts)
