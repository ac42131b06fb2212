"""dbt's files stay in the lake and dbt needs nothing from the process environment: a relative
lake (the default ``data_lake/demo``) must not make dbt write into ``dbt_project/`` (which may be
installed read-only, and which resolves a relative ``--target-path`` against itself), and the lake
reaches dbt as a command-line var, not as ``$ARENA_LAKE`` (which only a run by hand reads:
``test_warehouse_analysts``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from arena.data.lake import Lake
from arena.pipeline.warehouse import DBT_PROJECT, dbt_args, generate_docs, profiles_dir, run_dbt


def _files(root: Path) -> dict[str, int]:
    """Every file under ``root`` with its modification time (a new or rewritten file shows)."""
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_dbt_paths_are_absolute_for_a_relative_lake(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    lake = Lake("data_lake/demo")
    dbt_dir = tmp_path / "data_lake" / "demo" / "dbt"
    args = dbt_args(lake, "build")
    paths = {flag: args[args.index(flag) + 1]
             for flag in ("--project-dir", "--profiles-dir", "--target-path", "--log-path")}
    assert all(Path(p).is_absolute() for p in paths.values()), paths
    assert paths["--project-dir"] == str(DBT_PROJECT)
    assert paths["--profiles-dir"] == str(dbt_dir / "profiles")
    assert paths["--target-path"] == str(dbt_dir / "target")
    assert paths["--log-path"] == str(dbt_dir / "logs")
    # the profile and the sources read the lake's absolute root (and its bars folder) from vars;
    # no usage statistics
    demo = tmp_path / "data_lake" / "demo"
    assert json.loads(args[args.index("--vars") + 1]) == {"lake": str(demo),
                                                          "bars": str(demo / "bars")}
    assert "--no-send-anonymous-usage-stats" in args
    # dbt gets a copy of the project's profile in the lake (it writes into its profiles dir)
    assert profiles_dir(lake) == dbt_dir / "profiles"
    assert (dbt_dir / "profiles" / "profiles.yml").read_text() == (DBT_PROJECT / "profiles.yml").read_text()
    assert dbt_args(lake, "docs generate", "--static")[:2] == ["docs", "generate"]


def test_dbt_run_on_a_relative_lake_writes_nothing_into_dbt_project(tmp_path, monkeypatch):
    """Regression: with ``--lake data_lake/demo`` dbt wrote its target/ into
    ``dbt_project/data_lake/demo/dbt/target``. A real dbt build (the universe seed only), then the
    docs: nothing written into the project, no environment variable needed or left behind."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARENA_LAKE", raising=False)
    monkeypatch.delenv("DBT_SEND_ANONYMOUS_USAGE_STATS", raising=False)
    environ = dict(os.environ)
    before = _files(DBT_PROJECT)
    lake = Lake("data_lake/demo")
    result = run_dbt(lake, None, "--select", "universe", "--quiet")
    assert result.count("seed") == 1
    page = generate_docs(lake)
    assert dict(os.environ) == environ
    after = _files(DBT_PROJECT)
    written = sorted(name for name, mtime in after.items() if before.get(name) != mtime)
    assert written == [], f"dbt wrote into {DBT_PROJECT}: {written[:5]}"
    dbt_dir = tmp_path / "data_lake" / "demo" / "dbt"
    assert (dbt_dir / "target" / "manifest.json").is_file()
    assert (dbt_dir / "logs" / "dbt.log").is_file()
    assert (dbt_dir / "warehouse.duckdb").is_file()
    assert not (dbt_dir / "profiles" / ".user.yml").exists()  # usage statistics off
    # one self-contained page with the lineage of the marts (the manifest is inlined)
    assert page == dbt_dir / "target" / "static_index.html"
    text = page.read_text()
    assert "model.arena.leaderboard" in text and "model.arena.int_positions_folded" in text


def test_the_products_runs_pass_the_lake_and_read_no_environment(tmp_path, monkeypatch):
    """The product's runs give dbt the lake as the var ``lake``: ``$ARENA_LAKE`` (which a run by
    hand without the var reads) changes nothing then. Without either, dbt refuses and says what
    to set (it used to fall back to ``../data_lake``, resolved against whatever directory dbt
    ran in)."""
    from dbt.cli.main import dbtRunner

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_LAKE", str(tmp_path / "elsewhere"))
    lake = Lake(tmp_path / "lake")
    result = dbtRunner().invoke(dbt_args(lake, "parse", "--quiet"))
    assert result.success, result.exception
    manifest = json.loads((tmp_path / "lake" / "dbt" / "target" / "manifest.json").read_text())
    read = {s["source_name"]: s["meta"]["external_location"] for s in manifest["sources"].values()}
    for source in ("ledger", "monitor", "analytics"):
        assert f"read_parquet('{tmp_path / 'lake'}/" in read[source], read[source]
    assert f"read_parquet('{tmp_path / 'lake' / 'bars'}/" in read["lake"]
    assert "elsewhere" not in json.dumps(read) and not (tmp_path / "elsewhere").exists()

    monkeypatch.delenv("ARENA_LAKE")
    args = dbt_args(lake, "parse", "--quiet")
    at = args.index("--vars")
    result = dbtRunner().invoke(args[:at] + args[at + 2:])
    assert not result.success and "ARENA_LAKE (the absolute path" in str(result.exception)
