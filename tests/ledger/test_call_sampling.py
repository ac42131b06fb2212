"""A call's sampling parameters in the ledger: the seed and temperature it sent and the model a
replicate's instance replicates are recorded with every call; records written before them read
with nulls there (not a replicate), by the ledger and by DuckDB."""

from __future__ import annotations

import duckdb
import pandas as pd
import pyarrow.parquet as pq

from arena.core.types import CallRecord
from arena.engine.outcomes import CycleOutcome
from arena.ledger.records import CycleRecord
from arena.ledger.store import Ledger

C1, C2 = (pd.Timestamp(t, tz="UTC") for t in ("2025-11-26 16:00", "2025-11-27 16:00"))
OLD_COLUMNS = ["cycle_at", "contestant", "seq", "role", "model", "tokens_in", "tokens_out",
               "latency_s", "cost_usd", "retries", "error", "queue_s"]


def record(name: str, at: pd.Timestamp, call: CallRecord) -> CycleRecord:
    return CycleRecord(name, at, CycleOutcome.NO_TRADE, prompt="p", responses={"answer": "{}"},
                       calls=(call,))


def test_a_call_records_its_seed_temperature_and_replicated_model(tmp_path):
    ledger = Ledger(tmp_path)
    call = CallRecord("gpt-r2", "decision", "openai/m", 10, 2, 0.5, 0.0, 0, seed=2,
                      temperature=0.7, replicate_of="gpt")
    ledger.record_cycle(C1, "gpt-r2", lambda: record("gpt-r2", C1, call))
    [row] = ledger.record_rows("calls", C1, "gpt-r2")
    assert (row["seed"], row["temperature"], row["replicate_of"]) == (2, 0.7, "gpt")


def test_calls_recorded_before_replicates_read_as_no_replicate(tmp_path):
    ledger = Ledger(tmp_path)
    ledger.record_cycle(C1, "gpt", lambda: record("gpt", C1, CallRecord(
        "gpt", "decision", "openai/m", 10, 2, 0.5, 0.0, 0)))
    for path in (ledger.record_dir(C1, "gpt") / "calls.parquet",
                 ledger.dir / "cycles/cycle=_schema/contestant=_schema/calls.parquet"):
        pq.write_table(pq.ParquetFile(path).read().select(OLD_COLUMNS), path)  # an older ledger
    fresh = Ledger(tmp_path)
    fresh.record_cycle(C2, "gpt-r1", lambda: record("gpt-r1", C2, CallRecord(
        "gpt-r1", "decision", "openai/m", 10, 2, 0.5, 0.0, 0, seed=1, replicate_of="gpt")))
    calls = fresh.table("calls")
    assert calls["contestant"].tolist() == ["gpt", "gpt-r1"]
    assert calls["replicate_of"].isna().tolist() == [True, False]
    assert calls["replicate_of"].iloc[1] == "gpt" and calls["seed"].iloc[1] == 1
    assert calls["seed"].isna().tolist() == [True, False]
    sql = (f"select contestant, replicate_of, seed from read_parquet('{fresh.pattern('calls')}', "
           "union_by_name = true) order by contestant")
    assert duckdb.connect().execute(sql).fetchall() == [("gpt", None, None), ("gpt-r1", "gpt", 1)]
