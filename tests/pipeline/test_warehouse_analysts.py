"""The warehouse as analysts meet it, over the replayed season of ``test_season_marts``: the marts
in a schema of their own, every description a comment in the published database, dbt's docs
opening on the project's overview with its exposures, and ``dbt build`` run by hand from
``dbt_project/`` with the lake taken from ``$ARENA_LAKE``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
import yaml

from arena.data.lake import Lake
from arena.pipeline.warehouse import (
    DBT_PROJECT,
    MARTS,
    MARTS_SCHEMA,
    build_dir,
    generate_docs,
    open_built,
    publish,
)
from tests.mart_units import column_query, unit_problems
from tests.pipeline.test_season_marts import _warehouse, season  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
DBT = Path(sys.executable).parent / "dbt"  # the dbt command line of this environment
EXPOSURES = {"season_report", "daily_reports", "site_leaderboard", "site_contestant_pages",
             "site_asset_pages", "site_json_api"}


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _descriptions() -> dict[str, tuple[str, dict[str, str]]]:
    """Every model's description and its columns' from the YAML files of the dbt project."""
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for path in (DBT_PROJECT / "models").rglob("*.yml"):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models") or []:
            out[model["name"]] = (model.get("description") or "", {
                c["name"]: c.get("description") or "" for c in model.get("columns") or []})
    return out


def test_the_marts_are_in_their_own_schema(season):  # noqa: F811
    lake, *_ = season
    with _warehouse(lake) as con:
        tables = con.execute("select schema_name, table_name from duckdb_tables()").fetchall()
        views = con.execute("select schema_name, view_name from duckdb_views() "
                            "where not internal").fetchall()
        rows = con.execute(f"select count(*) from {MARTS_SCHEMA}.leaderboard").fetchone()[0]
        # a query that does not name the schema finds no mart (nor a stale copy of one)
        with pytest.raises(duckdb.CatalogException, match=r"marts\.leaderboard"):
            con.execute("select * from leaderboard")
    marts = {t for s, t in tables if s == MARTS_SCHEMA}
    assert set(MARTS) <= marts
    assert {t for s, t in tables if s == "main"} == {"universe"}  # the seed alone
    below = {s for s, t in [*tables, *views] if t.startswith(("stg_", "int_"))}
    assert below == {"staging", "intermediate"}
    assert rows == len(pd.read_parquet(lake.root / "marts" / "leaderboard.parquet")) > 0


def test_every_mart_column_is_described_in_the_published_warehouse(season):  # noqa: F811
    """dbt's persist_docs: the description of every model and column (its YAML file) is a
    comment on the table or view and on the column in ``<lake>/warehouse.duckdb``; every column
    of every mart has one."""
    lake, *_ = season
    described = _descriptions()
    with _warehouse(lake) as con:
        relations = con.execute(
            "select schema_name, table_name, comment from duckdb_tables() union all "
            "select schema_name, view_name, comment from duckdb_views() where not internal"
        ).fetchall()
        columns = con.execute("select schema_name, table_name, column_name, comment "
                              "from duckdb_columns() where not internal").fetchall()
    assert {t for s, t, _ in relations if s == MARTS_SCHEMA} >= set(MARTS)
    for schema, name, comment in relations:
        if schema in (MARTS_SCHEMA, "staging", "intermediate"):
            assert comment and comment.strip(), f"{schema}.{name} has no comment"
            assert comment.strip() == described[name][0].strip(), name
    mart_columns = [(t, c, comment) for s, t, c, comment in columns if s == MARTS_SCHEMA]
    assert len(mart_columns) >= 150
    undescribed = [f"{t}.{c}" for t, c, comment in mart_columns if not (comment or "").strip()]
    assert undescribed == [], f"mart columns without a description: {undescribed}"
    for table, column, comment in mart_columns:
        assert comment.strip() == described[table][1][column].strip(), f"{table}.{column}"
    # a comment is the whole description, text a dbt macro would have to escape included
    board = {c: comment for t, c, comment in mart_columns if t == "leaderboard"}
    assert board["rank_score"].startswith("-log10(1 - zero_skill_percentile)")
    assert "house/<strategy>" in board["role"]


def test_every_measured_mart_column_states_its_unit(season):  # noqa: F811
    """One unit per kind of column, said where an analyst reads it (tests/mart_units.py): every
    mart column holding a measured number names its unit in its comment - USD, a fraction,
    seconds or days, units of the asset, a score or a ratio -, a ``_usd`` column says USD; and
    the per-asset ceilings and the arena's band are named apart, each quantile saying whether
    it is a return or an equity."""
    lake, *_ = season
    with _warehouse(lake) as con:
        columns = con.execute(column_query(MARTS_SCHEMA)).fetchall()
    assert unit_problems(columns) == []
    names = {(t, c) for t, c, *_ in columns}
    assert {("asset_luck_ceilings", "q95_return"), ("asset_luck_ceilings", "luck_ceiling"),
            ("zero_skill_band", "q95_equity"), ("leaderboard", "fills"),
            ("leaderboard", "pricing")} <= names
    assert not {t for t, _ in names} & {"luck_ceiling"}
    assert not {c for t, c in names if t in ("leaderboard", "zero_skill_band")} & {
        "trades", "q05", "q95"}


def test_a_publication_drops_the_marts_an_older_build_left_in_main(tmp_path):
    """A lake whose dbt database was built before the marts had their schema still holds its
    old tables in ``main`` (dbt drops nothing it no longer builds): the publication drops them,
    so the published warehouse has each mart once, and leaves the rest of ``main`` alone."""
    lake = Lake(tmp_path / "lake")
    build_dir(lake).mkdir(parents=True)
    with open_built(build_dir(lake) / "warehouse.duckdb") as con:
        con.execute("create schema marts")
        con.execute("create table marts.leaderboard as select 'new' as contestant")
        con.execute("create table main.leaderboard as select 'stale' as contestant")
        con.execute("create table main.trades as select 1 as trip")  # no marts.trades: kept
        con.execute("create table main.universe as select 'BTC' as symbol")
    warehouse, marts = publish(lake, ["leaderboard"])
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert sorted(con.execute("select schema_name, table_name from duckdb_tables()")
                      .fetchall()) == [("main", "trades"), ("main", "universe"),
                                       ("marts", "leaderboard")]
    assert pd.read_parquet(marts / "leaderboard.parquet")["contestant"].tolist() == ["new"]


def test_the_docs_open_on_the_overview_and_list_the_exposures(season):  # noqa: F811
    lake, *_ = season
    page = generate_docs(lake)
    manifest = json.loads((build_dir(lake) / "target" / "manifest.json").read_text())
    overview = manifest["docs"]["doc.arena.__overview__"]
    assert overview["package_name"] == "arena"  # the project's, not dbt's welcome page
    text = overview["block_contents"]
    for words in ("# The arena's warehouse", "## The luck ruler", "marts.leaderboard",
                  "zero_skill_band", "ARENA_LAKE"):
        assert words in text, words
    exposures = {e["name"]: e for e in manifest["exposures"].values()}
    assert set(exposures) >= EXPOSURES
    reads = {name: {n.split(".")[-1] for n in e["depends_on"]["nodes"]}
             for name, e in exposures.items()}
    assert {"leaderboard", "equity_daily", "zero_skill_band", "benchmark_equity"} <= reads[
        "site_leaderboard"]
    assert {"trades", "decisions"} <= reads["site_contestant_pages"]
    assert {"asset_luck_ceilings", "reference_rules"} <= reads["site_asset_pages"]
    assert set(reads["site_json_api"]) <= set(MARTS) and "leaderboard" in reads["site_json_api"]
    assert set(reads["season_report"]) <= set(MARTS) and len(reads["season_report"]) >= 12
    assert {n.split(".")[0] for n in exposures["daily_reports"]["depends_on"]["nodes"]} == {
        "source"}  # the daily reports read the ledger, not the marts
    assert exposures["site_json_api"]["type"] == "application"
    # the static page carries the same manifest: it opens on the overview
    html = page.read_text()
    assert "The arena" in html and "site_contestant_pages" in html


def _by_hand_env(home: Path, **more: str) -> dict[str, str]:
    """An environment with no dbt or arena variable but ``more``: no var ``lake`` either."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), **more}


def _dbt(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(DBT), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL)


def test_dbt_builds_by_hand_from_the_project_with_the_lake_from_arena_lake(season, tmp_path):  # noqa: F811
    """``cd dbt_project && ARENA_LAKE=/abs/lake dbt build``: the profile and the sources take the
    lake from the environment (no --vars), the default selection builds the season's models and
    tests, and dbt's database is the lake's. dbt's target and logs go where DBT_TARGET_PATH and
    DBT_LOG_PATH say (as for a read-only project folder): nothing is written into it."""
    lake, *_ = season
    copy = Lake(tmp_path / "lake")  # the module's lake stays as published
    shutil.copytree(lake.root, copy.root)
    (tmp_path / "home").mkdir()
    env = _by_hand_env(tmp_path / "home", ARENA_LAKE=str(copy.root),
                       DBT_TARGET_PATH=str(copy.root / "dbt" / "target"),
                       DBT_LOG_PATH=str(copy.root / "dbt" / "logs"))
    before = _files(DBT_PROJECT)
    debug = _dbt(["debug"], DBT_PROJECT, env)
    assert debug.returncode == 0, debug.stdout + debug.stderr
    assert str(copy.root / "dbt" / "warehouse.duckdb") in debug.stdout
    (copy.root / "dbt" / "warehouse.duckdb").unlink()  # built afresh from the lake's files
    build = _dbt(["build"], DBT_PROJECT, env)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr
    assert "Completed successfully" in build.stdout and "signal_patterns" not in build.stdout
    written = sorted(n for n, t in _files(DBT_PROJECT).items() if before.get(n) != t)
    assert written == [], f"dbt wrote into {DBT_PROJECT}: {written[:5]}"
    assert not (tmp_path / "home" / ".dbt").exists()
    # the same leaderboard as the product's build published (both read through DuckDB; the
    # floats to DuckDB's parallel sums)
    parquet = str(lake.root / "marts" / "leaderboard.parquet").replace("'", "''")
    with duckdb.connect() as con:
        published = con.execute(f"select * from '{parquet}' order by contestant").df()
    with duckdb.connect(str(copy.root / "dbt" / "warehouse.duckdb"), read_only=True) as con:
        board = con.execute("select * from marts.leaderboard order by contestant").df()
        assert con.execute("select count(*) from duckdb_columns() where schema_name = 'marts' "
                           "and comment is null").fetchone() == (0,)
    pd.testing.assert_frame_equal(board, published, check_dtype=False)


def test_dbt_by_hand_with_only_arena_lake_writes_its_files_where_git_ignores_them(season,  # noqa: F811
                                                                               tmp_path):
    """With ARENA_LAKE alone, dbt writes its target/ and logs/ into the project folder (a copy of
    it here, so the checkout is left alone), both ignored by git, and nothing else: no user file
    (usage statistics are off in dbt_project.yml)."""
    lake, *_ = season
    project = tmp_path / "dbt_project"
    shutil.copytree(DBT_PROJECT, project,
                    ignore=shutil.ignore_patterns("target", "logs", "__pycache__"))
    (tmp_path / "home").mkdir()
    before = _files(project)
    parse = _dbt(["parse"], project, _by_hand_env(tmp_path / "home",
                                                  ARENA_LAKE=str(lake.root.resolve())))
    assert parse.returncode == 0, parse.stdout + parse.stderr
    written = {n.split(os.sep)[0] for n, t in _files(project).items() if before.get(n) != t}
    assert written == {"target", "logs"}
    ignored = (ROOT / ".gitignore").read_text().split()
    assert {"dbt_project/target/", "dbt_project/logs/"} <= set(ignored)


@pytest.mark.parametrize(("lake", "says"), [
    (None, "ARENA_LAKE (the absolute path of the season's lake"),
    ("data_lake/demo", "ARENA_LAKE as an absolute path (the lake given is data_lake/demo"),
])
def test_dbt_by_hand_without_an_absolute_lake_says_what_to_set(tmp_path, lake, says):
    (tmp_path / "home").mkdir()
    more = {} if lake is None else {"ARENA_LAKE": lake}
    env = _by_hand_env(tmp_path / "home", DBT_TARGET_PATH=str(tmp_path / "target"),
                       DBT_LOG_PATH=str(tmp_path / "logs"), **more)
    debug = _dbt(["debug"], DBT_PROJECT, env)
    assert debug.returncode != 0
    assert says in debug.stdout + debug.stderr
