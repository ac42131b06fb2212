"""dbt's files stay in the lake: a relative lake (the default ``data_lake/demo``) must not make dbt
write into ``dbt_project/``, which resolves a relative ``--target-path`` against itself."""

from __future__ import annotations

import os
from pathlib import Path

from arena.data.lake import Lake
from arena.pipeline.warehouse import DBT_PROJECT, dbt_args, lake_env, run_dbt


def _files(root: Path) -> dict[str, int]:
    """Every file under ``root`` with its modification time (a new or rewritten file shows)."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_dbt_paths_are_absolute_for_a_relative_lake(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lake = Lake("data_lake/demo")
    args = dbt_args(lake, "build")
    paths = {flag: args[args.index(flag) + 1]
             for flag in ("--project-dir", "--profiles-dir", "--target-path", "--log-path")}
    assert all(Path(p).is_absolute() for p in paths.values()), paths
    assert paths["--target-path"] == str(tmp_path / "data_lake" / "demo" / "dbt" / "target")
    assert paths["--log-path"] == str(tmp_path / "data_lake" / "demo" / "dbt" / "logs")
    with lake_env(lake):  # the profile and the sources read the lake through $ARENA_LAKE
        assert os.environ["ARENA_LAKE"] == str(tmp_path / "data_lake" / "demo")


def test_dbt_run_on_a_relative_lake_writes_nothing_into_dbt_project(tmp_path, monkeypatch):
    """Regression: with ``--lake data_lake/demo`` dbt wrote its target/ into
    ``dbt_project/data_lake/demo/dbt/target``. A real dbt build (the universe seed only)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    before = _files(DBT_PROJECT)
    result = run_dbt(Lake("data_lake/demo"), None, "--select", "universe", "--quiet")
    assert result.count("seed") == 1
    after = _files(DBT_PROJECT)
    written = sorted(name for name, mtime in after.items() if before.get(name) != mtime)
    assert written == [], f"dbt wrote into {DBT_PROJECT}: {written[:5]}"
    dbt_dir = tmp_path / "data_lake" / "demo" / "dbt"
    assert (dbt_dir / "target" / "manifest.json").is_file()
    assert (dbt_dir / "logs" / "dbt.log").is_file()
    assert (dbt_dir / "warehouse.duckdb").is_file()


def test_the_dbt_project_has_no_relative_default_lake(tmp_path, monkeypatch):
    """Without $ARENA_LAKE dbt refuses (it used to fall back to ``../data_lake``, resolved against
    whatever directory dbt ran in)."""
    from dbt.cli.main import dbtRunner

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_LAKE", raising=False)
    monkeypatch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    result = dbtRunner().invoke(dbt_args(Lake(tmp_path / "lake"), "parse", "--quiet"))
    assert not result.success and "ARENA_LAKE" in str(result.exception)
