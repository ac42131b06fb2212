"""One new hour into a lake that holds months of 15-minute bars, for the whole universe.

An ingest run fetches, derives and validates what it adds plus the trailing context its checks
need (and re-fetches two days to look for restatements), so its cost should not grow with the
stored history. Measured in one warm process (imports and the lake's initial build are printed
apart): the one-hour run on a lake of ``--short`` days and on one of ``--days`` days, and - as
the baseline measured in the same run - deriving and validating the whole stored series the way
every run did before ingest was incremental.

    python benchmarks/incremental_ingest.py [--days 365] [--short 90] [--repeat 3]
"""

from __future__ import annotations

import time

T_IMPORT = time.perf_counter()

import argparse  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

from arena.core.sessions import coarser_or_equal  # noqa: E402
from arena.core.settings import prepare_process  # noqa: E402
from arena.core.universe import load_universe  # noqa: E402
from arena.data.ingest import derive_complete, run_ingest  # noqa: E402
from arena.data.lake import Lake, PartitionKey, concat_partitions  # noqa: E402
from arena.data.providers.synthetic import SyntheticProvider  # noqa: E402
from arena.data.validation.checks import Window, validate_bars  # noqa: E402

IMPORTS = time.perf_counter() - T_IMPORT
END = pd.Timestamp("2025-11-03 15:00", tz="UTC")  # a Monday, inside the NYSE session


def one_hour_runs(lake: Lake, universe, provider, repeat: int) -> list[float]:
    """Seconds of ``repeat`` consecutive one-hour ingests (each the next hour)."""
    times = []
    for i in range(repeat):
        start = END + pd.Timedelta(hours=i)
        end = start + pd.Timedelta(hours=1)
        t0 = time.perf_counter()
        result = run_ingest(provider, universe, start=start, end=end, lake=lake, now=end)
        times.append(time.perf_counter() - t0)
        assert result.manifest["status"] == "published", result.manifest["not_published"]
    return times


def whole_series_baseline(lake: Lake, universe) -> float:
    """Derive every coarser interval from the whole stored base series and validate every
    stored bar (what each run did before)."""
    t0 = time.perf_counter()
    frames, windows = [], []
    for asset in universe:
        base = lake.read_bars(PartitionKey("synthetic", "15m", asset.symbol))
        for interval in coarser_or_equal("15m"):
            bars = base if interval == "15m" else derive_complete(base, "15m", interval,
                                                                  asset.calendar)
            frames.append((PartitionKey("synthetic", interval, asset.symbol), bars))
            windows.append(Window(asset.symbol, interval, asset.calendar))
    validate_bars(concat_partitions(frames), windows, as_of=None)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="history of the long lake")
    parser.add_argument("--short", type=int, default=90, help="history of the short lake")
    parser.add_argument("--repeat", type=int, default=3, help="one-hour runs per lake")
    args = parser.parse_args()
    prepare_process()
    universe, provider = load_universe(), SyntheticProvider()
    print(f"imports: {IMPORTS:.2f} s (not counted below)")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for days in (args.short, args.days):
            lake = Lake(Path(tmp) / f"lake{days}")
            t0 = time.perf_counter()
            run_ingest(provider, universe, start=END - pd.Timedelta(days=days), end=END,
                       lake=lake, now=END)
            built = time.perf_counter() - t0
            runs = one_hour_runs(lake, universe, provider, args.repeat)
            baseline = whole_series_baseline(lake, universe)
            rows[days] = (min(runs), baseline)
            print(f"lake of {days:>3} days ({len(universe)} assets, built in {built:.1f} s): "
                  f"one new hour {min(runs):.2f} s (best of {args.repeat}: "
                  f"{', '.join(f'{t:.2f}' for t in runs)}); whole-series derive + validate "
                  f"{baseline:.2f} s; ratio {min(runs) / baseline:.3f}")
    (short_run, short_base), (long_run, long_base) = rows[args.short], rows[args.days]
    print(f"growth from {args.short} to {args.days} days: one new hour x{long_run / short_run:.2f}, "
          f"whole-series baseline x{long_base / short_base:.2f}")


if __name__ == "__main__":
    main()
