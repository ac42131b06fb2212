"""Every table of a lake's ledger, for tests that compare two ways of playing the same days."""

from __future__ import annotations

import pandas as pd

from arena.data.lake import Lake
from arena.ledger.records import MONITOR_SCHEMAS, SCHEMAS
from arena.ledger.store import Ledger


def ledger_tables(lake: Lake) -> dict[str, pd.DataFrame]:
    """``cycles/<table>`` and ``monitor/<table>`` -> its rows, without the calls' wall-clock
    latency and queue time (the columns two plays of the same days may differ in)."""
    ledger = Ledger(lake)
    return {f"{kind}/{name}": ledger.table(name, monitor=kind == "monitor").drop(
        columns=["latency_s", "queue_s"], errors="ignore")
        for kind, schemas in (("cycles", SCHEMAS), ("monitor", MONITOR_SCHEMAS))
        for name in schemas}
