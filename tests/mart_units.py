"""The marts' units, one vocabulary (CHANGELOG.md; dbt_project/models/overview.md): returns,
rates, shares and percentiles are fractions (0.05 = 5%; a percentile is a fraction in [0, 1],
never 0-100), money is USD, durations seconds or days. Every mart column holding a measured
value - a number that is not a whole one - names its unit in its description (the comment an
analyst reads in the warehouse), and a column whose name carries a unit (``_usd``, ``_s``,
``_days``) says the same in words. Read from a built warehouse's ``duckdb_columns()``, so a
column a model adds without its unit is caught the build it appears."""

from __future__ import annotations

from collections.abc import Iterable

# what a description may say of a measured value's unit (in any case)
UNITS = ("in USD", "a fraction", "in seconds", "in days", "units of the asset",
         "in the contest's currency", "a score", "a ratio", "a coefficient")
# a column named with its unit says it in words too
NAMED = {"_usd": "in USD", "_s": "in seconds", "_days": "in days"}
WHOLE = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
         "UINTEGER", "UBIGINT", "UHUGEINT")
MEASURED = ("DOUBLE", "FLOAT", "REAL", "DECIMAL")


def measured(data_type: str) -> bool:
    """Whether a column of ``data_type`` (DuckDB's name; a list of numbers too) holds measured
    values: floating or decimal numbers, not whole ones (counts, places, indices, seeds)."""
    base = data_type.upper().removesuffix("[]")
    return base.startswith(MEASURED) and not base.startswith(WHOLE)


def column_query(schema: str) -> str:
    """The query of every column of ``schema``'s tables: (table, column, type, comment)."""
    return ("select table_name, column_name, data_type, comment from duckdb_columns() "
            f"where schema_name = '{schema}' and database_name = current_database() "
            "order by table_name, column_index")


def unit_problems(columns: Iterable[tuple[str, str, str, str | None]]) -> list[str]:
    """Each ``(table, column, data_type, comment)`` that breaks the vocabulary, as
    ``table.column: why``; none when every measured column names its unit."""
    problems = []
    for table, column, data_type, comment in columns:
        text = (comment or "").lower()
        if measured(data_type) and not any(unit.lower() in text for unit in UNITS):
            problems.append(f"{table}.{column} ({data_type}): no unit among {UNITS}")
        for suffix, words in NAMED.items():
            if column.endswith(suffix) and words.lower() not in text:
                problems.append(f"{table}.{column}: named {suffix} but not said {words!r}")
    return problems
