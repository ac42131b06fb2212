"""Package data: the dbt-duckdb project (read as files by dbt, never imported)."""
