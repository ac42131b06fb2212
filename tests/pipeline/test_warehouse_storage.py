"""The warehouse in the storage analysts' tools read (issue 46, item 3): dbt creates its database
in DuckDB storage v1.2 (65, which DuckDB 1.2 and later read; DuckDB 2's default is read by 2.x
alone), and a build database in another storage - written before the setting - is removed for the
build that makes it again. The published warehouse's storage is checked on a published season in
tests/pipeline/test_finchal_season.py."""

from __future__ import annotations

import duckdb

from arena.pipeline.warehouse import (
    WAREHOUSE_STORAGE,
    WAREHOUSE_STORAGE_NUMBER,
    _readable_storage,
    storage_number,
)


def _database(path, **config) -> None:
    with duckdb.connect(str(path), config=config) as con:
        con.execute("create table t as select 1 as x")


def test_the_storage_setting_writes_the_number_older_clients_read(tmp_path):
    _database(tmp_path / "old.duckdb", storage_compatibility_version=WAREHOUSE_STORAGE)
    _database(tmp_path / "new.duckdb")
    assert storage_number(tmp_path / "old.duckdb") == WAREHOUSE_STORAGE_NUMBER == 65
    assert storage_number(tmp_path / "new.duckdb") != 65
    (tmp_path / "text.duckdb").write_text("not a database, but long enough to hold a header")
    assert storage_number(tmp_path / "text.duckdb") is None


def test_a_build_database_of_another_storage_is_built_anew(tmp_path):
    kept, other = tmp_path / "kept.duckdb", tmp_path / "other.duckdb"
    _database(kept, storage_compatibility_version=WAREHOUSE_STORAGE)
    _database(other)
    (tmp_path / "other.duckdb.wal").write_bytes(b"")
    _readable_storage(kept)
    _readable_storage(other)
    _readable_storage(tmp_path / "absent.duckdb")
    assert kept.is_file() and not other.exists() and not (tmp_path / "other.duckdb.wal").exists()
