"""The universe seed loads with dbt-duckdb and passes its schema tests (a real `dbt build`)."""

import shutil

from arena.core.resources import DBT_PROJECT


def test_universe_seed_builds(tmp_path, monkeypatch):
    import duckdb
    from dbt.cli.main import dbtRunner

    project = tmp_path / "dbt_project"
    shutil.copytree(DBT_PROJECT, project, ignore=shutil.ignore_patterns("target", "logs", ".user.yml"))
    monkeypatch.setenv("ARENA_LAKE", str(tmp_path))
    monkeypatch.setenv("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    (tmp_path / "dbt").mkdir()  # where the profile puts dbt's own database
    result = dbtRunner().invoke(["build", "--select", "universe", "--project-dir", str(project),
                                 "--profiles-dir", str(project), "--quiet"])
    assert result.success, result.exception
    statuses = {r.node.name: str(r.status) for r in result.result.results}
    assert statuses["universe"] == "success" and "unique_universe_symbol" in statuses
    with duckdb.connect(str(tmp_path / "dbt" / "warehouse.duckdb")) as con:  # dbt keeps its handle open
        rows = con.execute("select count(*), count(*) filter (where tradable), "
                           "max(case when symbol = 'BRK.B' then yfinance_symbol end) "
                           "from universe").fetchall()
    assert rows == [(62, 60, "BRK-B")]
