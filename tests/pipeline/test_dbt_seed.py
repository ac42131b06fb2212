"""The universe seed loads with dbt-duckdb and passes its schema tests (a real `dbt build`)."""

from arena.data.lake import Lake
from arena.pipeline.warehouse import dbt_args, open_built


def test_universe_seed_builds(tmp_path):
    from dbt.cli.main import dbtRunner

    result = dbtRunner().invoke(dbt_args(Lake(tmp_path), "build", "--select", "universe",
                                         "--quiet"))
    assert result.success, result.exception
    statuses = {r.node.name: str(r.status) for r in result.result.results}
    assert statuses["universe"] == "success" and "unique_universe_symbol" in statuses
    with open_built(tmp_path / "dbt" / "warehouse.duckdb") as con:  # dbt keeps its handle open
        rows = con.execute("select count(*), count(*) filter (where tradable), "
                           "max(case when symbol = 'BRK.B' then yfinance_symbol end), "
                           "string_agg(symbol, ',' order by symbol) filter (where not default_season)"
                           " from universe").fetchall()
        kind = con.execute("select data_type from information_schema.columns "
                           "where table_name = 'universe' and column_name = 'default_season'"
                           ).fetchall()
    # the 62 assets of the default season and GLD and USO, played only by a season naming them
    assert rows == [(64, 62, "BRK-B", "GLD,USO")] and kind == [("BOOLEAN",)]
