"""A small lake of hand-made bars whose indicators have closed forms, for the researcher's tools.

ETH (a crypto asset: its bars close at open + interval), :data:`CLOSED` bars closed by the cycle
time :data:`AT` on each interval, every bar's range 2 (high = close + 1, low = close - 1 on the
ramps):

* ``1d``: an up ramp, closes ``100, 101, ...`` (each open the previous close);
* ``4h``: a down ramp, closes ``1000, 999, ...``;
* ``1w``: flat at 50 (high 51, low 49).

After them, bars that must never be seen at :data:`AT`, all at ten times the last close: the next three
of each interval, the first of them still forming at :data:`AT` on ``1d`` and ``1w`` (opened
before it) and opening at :data:`AT` on ``4h``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from arena.core.universe import Universe
from arena.data.lake import Lake, PartitionKey, write_bars_file
from arena.pipeline.cycle import CycleCharts
from tests.conftest import ts

AT = ts("2025-03-03 16:00")  # a Monday
CLOSED = 150
PROVIDER = "synthetic"
POISON = 10.0  # the bars after AT: ten times the last close (a move a lake still holds)
STEP = {"1d": pd.Timedelta(days=1), "4h": pd.Timedelta(hours=4), "1w": pd.Timedelta(days=7)}
# the open of the last bar closed by AT on each interval
LAST_OPEN = {"1d": AT.normalize() - STEP["1d"], "4h": AT - STEP["4h"],
             "1w": AT.normalize() - STEP["1w"]}


def ramp_closes(interval: str) -> list[float]:
    """The closes of the bars closed by :data:`AT`, oldest first."""
    if interval == "1d":
        return [100.0 + t for t in range(CLOSED)]
    if interval == "4h":
        return [1000.0 - t for t in range(CLOSED)]
    return [50.0] * CLOSED


def _frame(interval: str) -> pd.DataFrame:
    closes = ramp_closes(interval)
    opens = [closes[0], *closes[:-1]]
    poison = POISON * closes[-1]
    times = pd.date_range(end=LAST_OPEN[interval], periods=CLOSED, freq=STEP[interval])
    after = pd.date_range(start=LAST_OPEN[interval] + STEP[interval], periods=3,
                          freq=STEP[interval])  # the first opens at AT or is forming at AT
    assert after[0] <= AT < after[0] + STEP[interval]
    return pd.DataFrame({
        "timestamp": times.append(after),
        "open": [*opens, *[poison] * 3], "high": [c + 1 for c in closes] + [poison + 1] * 3,
        "low": [c - 1 for c in closes] + [poison - 1] * 3, "close": [*closes, *[poison] * 3],
        "volume": [1.0] * (CLOSED + 3)})


def chart_lake(root: Path, universe: Universe) -> tuple[Lake, CycleCharts]:
    """The lake at ``root`` (written) and the cycle's charts of it at :data:`AT`."""
    lake = Lake(root)
    for interval in STEP:
        write_bars_file(_frame(interval), lake.path(PartitionKey(PROVIDER, interval, "ETH")))
    return lake, CycleCharts(lake, PROVIDER, universe, AT)
