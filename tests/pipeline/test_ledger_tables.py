"""The ledger's tables as dbt reads them: every committed record's rows, each exactly once,
however many builds appended and merged their parts, and rebuilt whenever the copy cannot be
trusted."""

from __future__ import annotations

import json
import shutil

import duckdb
import pandas as pd
import pytest

from arena.ledger.records import MONITOR_SCHEMAS, SCHEMAS, MonitorRecord
from arena.ledger.store import Ledger
from arena.pipeline import ledger_tables
from arena.pipeline.ledger_tables import FAN_IN, MANIFEST, gather, tables_dir
from tests.ledger.test_ledger import full_record

DAY0 = pd.Timestamp("2025-11-24 16:00", tz="UTC")
NAMES = ("alpha", "beta")


def _day(ledger: Ledger, day: int) -> None:
    """One cycle of both contestants, and a monitor window of alpha before it."""
    at = DAY0 + pd.Timedelta(days=day)
    if day:
        ledger.record_monitor(at - pd.Timedelta(days=1), at, "alpha",
                              lambda: MonitorRecord("alpha", at - pd.Timedelta(days=1), at))
    for name in NAMES:
        ledger.record_cycle(at, name, lambda n=name: full_record(n, at))


def _scan(glob: str) -> pd.DataFrame:
    with duckdb.connect() as con:
        return con.execute(f"select * from read_parquet('{glob}', union_by_name = true)").df()


def _read(lake_root, kind: str, table: str) -> pd.DataFrame:
    """What dbt's source reads: every Parquet file of the table's folder, by column name."""
    return _scan(str(tables_dir(lake_root) / kind / table / "*.parquet"))


def _same_as_ledger(ledger: Ledger, lake_root) -> None:
    """The gathered tables hold what a scan of the ledger's own files reads, row for row."""
    for kind, schemas in (("cycles", SCHEMAS), ("monitor", MONITOR_SCHEMAS)):
        for table in schemas:
            got = _read(lake_root, kind, table)
            # the ledger's folder names are hive keys a scan adds as columns: not rows' values
            want = _scan(ledger.pattern(table, monitor=kind == "monitor"))[list(got.columns)]
            keys = [c for c in ("cycle_at", "window_start", "contestant", "seq", "round",
                                "decision_index") if c in want.columns]
            assert len(got) == len(want), (kind, table)
            pd.testing.assert_frame_equal(
                got.sort_values(keys, ignore_index=True),
                want.sort_values(keys, ignore_index=True))


def test_each_build_copies_only_the_new_records_and_merges_its_parts(tmp_path):
    ledger = Ledger(tmp_path)
    first = gather(ledger, tmp_path)  # before any record: typed empty tables
    assert first.copied == {"cycles": 0, "monitor": 0} and first.rebuilt is None
    assert len(_read(tmp_path, "cycles", "fills")) == 0
    for day in range(FAN_IN + 2):
        _day(ledger, day)
        done = gather(ledger, tmp_path)
        assert done.copied == {"cycles": 2, "monitor": 1 if day else 0}, day  # only the new
        _same_as_ledger(ledger, tmp_path)
    assert gather(ledger, tmp_path).copied == {"cycles": 0, "monitor": 0}  # nothing new
    manifest = json.loads((tables_dir(tmp_path) / MANIFEST).read_text())
    levels = sorted(p["level"] for p in manifest["cycles"]["parts"])
    assert levels == [0, 0, 1]  # eight day-parts merged into one, the last two not yet
    files = sorted(p.name for p in (tables_dir(tmp_path) / "cycles" / "fills").iterdir())
    assert len(files) == 4  # three parts and the empty schema file: nothing left over
    _same_as_ledger(ledger, tmp_path)


def test_a_part_no_manifest_names_is_removed_before_dbt_reads(tmp_path):
    """A build killed after writing its part and before its manifest: the next build counts
    those records once."""
    ledger = Ledger(tmp_path)
    _day(ledger, 0)
    gather(ledger, tmp_path)
    folder = tables_dir(tmp_path) / "cycles" / "outcome"
    [part] = [p for p in folder.iterdir() if p.name.startswith("p")]
    shutil.copy(part, folder / "p999999.parquet")  # a leftover of a killed build
    assert gather(ledger, tmp_path).rebuilt is None
    assert len(_read(tmp_path, "cycles", "outcome")) == 2
    _same_as_ledger(ledger, tmp_path)


@pytest.mark.parametrize("damage", ["record moved aside", "part deleted", "part truncated",
                                    "manifest garbled", "columns changed"])
def test_a_copy_that_cannot_be_trusted_is_rebuilt_from_the_ledger(tmp_path, damage, monkeypatch,
                                                                   caplog):
    ledger = Ledger(tmp_path)
    for day in range(3):
        _day(ledger, day)
        gather(ledger, tmp_path)
    root = tables_dir(tmp_path)
    part = sorted((root / "cycles" / "fills").glob("p*.parquet"))[0]
    if damage == "record moved aside":
        moved = ledger.record_dir(DAY0, "beta")
        shutil.move(moved, tmp_path / "aside")
    elif damage == "part deleted":
        part.unlink()
    elif damage == "part truncated":
        part.write_bytes(part.read_bytes()[:40])
    elif damage == "manifest garbled":
        (root / MANIFEST).write_text("{not json")
    else:
        monkeypatch.setattr(ledger_tables, "_fingerprint", lambda: "another-set-of-columns")
    done = gather(ledger, tmp_path)
    assert done.rebuilt, damage
    assert done.copied["cycles"] == len(ledger.folders())  # every record copied again
    assert "gathered tables are rebuilt" in caplog.text
    _same_as_ledger(ledger, tmp_path)


def test_a_record_damaged_before_it_was_gathered_stops_the_copy_by_name(tmp_path):
    """A record's files are checked against its chain link before its rows are copied: one
    rewritten since its commit stops the gathering (naming the file) and nothing of it is
    copied; the records gathered before stay as they were."""
    import pyarrow.parquet as pq

    from arena.ledger.chain import BrokenChain

    ledger = Ledger(tmp_path)
    _day(ledger, 0)
    gather(ledger, tmp_path)
    before = _read(tmp_path, "cycles", "fills")
    _day(ledger, 1)
    fills = ledger.record_dir(DAY0 + pd.Timedelta(days=1), "beta") / "fills.parquet"
    table = pq.ParquetFile(fills).read()
    pq.write_table(table.set_column(table.schema.get_field_index("quantity"), "quantity",
                                    [[q * 2 for q in table.column("quantity").to_pylist()]]),
                   fills)
    with pytest.raises(BrokenChain, match=rf"{fills} has changed since it was recorded"):
        gather(ledger, tmp_path)
    pd.testing.assert_frame_equal(_read(tmp_path, "cycles", "fills"), before)
