"""Ingest + validate the whole universe for six months of synthetic 15-minute bars.

Prints bars per second, the validation share of the wall time and the peak memory, and compares
the one-batch validation the product uses against the naive baseline of one Great Expectations
run per series, measured in the same run on the same data.

    python benchmarks/ingest.py [--days 182] [--baseline-series 40]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time

import pandas as pd

from arena.core.universe import load_universe
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.data.validation.checks import Window, validate_bars


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=182)
    parser.add_argument("--end", default="2026-11-01")
    parser.add_argument("--baseline-series", type=int, default=40,
                        help="series validated one by one for the baseline (extrapolated)")
    args = parser.parse_args()
    universe = load_universe()
    end = pd.Timestamp(args.end, tz="UTC")
    start = end - pd.Timedelta(days=args.days)
    rss0 = _peak_rss_mb()
    t0 = time.perf_counter()
    import great_expectations  # noqa: F401 - paid once per process; reported on its own line

    ge_import = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(tmp)
        t0 = time.perf_counter()
        result = run_ingest(SyntheticProvider(), universe, start=start, end=end, lake=lake)
        wall = time.perf_counter() - t0
        m = result.manifest
        timings = m["timings_seconds"]
        base_bars = sum(s["fetched"] for s in m["got"].values())
        bar_series = {k: n for k, n in m["partitions"].items()
                      if not k.startswith(("funding/", "earnings"))}
        all_bars = sum(bar_series.values())

        print(f"universe            {len(universe)} assets, {args.days} days of 15m bars "
              f"({start.date()} .. {end.date()}), synthetic")
        print(f"bars                {base_bars:,} base 15m bars, {all_bars:,} bars in all intervals")
        print(f"wall time           {wall:.2f} s  ({', '.join(f'{k} {v:.2f}s' for k, v in timings.items())})")
        print(f"throughput          {base_bars / wall:,.0f} base bars/s, {all_bars / wall:,.0f} bars/s")
        print(f"validation share    {timings['validate'] / wall:.1%} of the wall time "
              f"({all_bars / timings['validate']:,.0f} bars/s validated)")
        print(f"GE import           {ge_import:.2f} s once per process (not in the figures above)")
        print(f"peak memory         {_peak_rss_mb():,.0f} MB RSS (process start {rss0:,.0f} MB)")

        # baseline: one validation run per series instead of one per batch
        keys = lake.partitions()[: args.baseline_series]
        frames = [(k, lake.read_bars(k)) for k in keys]
        t0 = time.perf_counter()
        for k, f in frames:
            validate_bars(f.assign(symbol=k.symbol, interval=k.interval),
                          [Window(k.symbol, k.interval, universe[k.symbol].calendar)], as_of=end)
        per_series = (time.perf_counter() - t0) / len(frames)
        n_series = len(bar_series)
        naive = per_series * n_series
        print(f"baseline            one validation per series: {per_series * 1000:.0f} ms x "
              f"{n_series} series = {naive:.1f} s (extrapolated from {len(frames)})")
        print(f"ratio               batch validation is {naive / timings['validate']:.1f}x faster "
              f"than per-series validation")


if __name__ == "__main__":
    main()
