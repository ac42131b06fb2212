"""The universe seed loads with dbt-duckdb and passes its schema tests (a real `dbt build`)."""

from arena.data.lake import Lake
from arena.pipeline.warehouse import dbt_args


def test_universe_seed_builds(tmp_path):
    import duckdb
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(dbt_args(Lake(tmp_path), "build", "--select", "universe",
                                         "--quiet"))
    assert result.success, result.exception
    statuses = {r.node.name: str(r.status) for r in result.result.results}
    assert statuses["universe"] == "success" and "unique_universe_symbol" in statuses
    with duckdb.connect(str(tmp_path / "dbt" / "warehouse.duckdb")) as con:  # dbt keeps its handle open
        rows = con.execute("select count(*), count(*) filter (where tradable), "
                           "max(case when symbol = 'BRK.B' then yfinance_symbol end) "
                           "from universe").fetchall()
    assert rows == [(62, 60, "BRK-B")]
