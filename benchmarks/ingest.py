"""Ingest + validate the whole universe for months of synthetic 15-minute bars, and the memory of
a long history ingest.

1. Throughput (``--days``, 182 by default): bars per second, the validation share of the wall
   time, and the one-batch validation the product uses against the naive baseline of one
   validation run per series, measured in the same run on the same data.
2. Memory (``--memory-days``, 730 by default: two years of the 62 assets, ~1.94 million bars in
   all intervals): a first ingest in a fresh process, its peak RSS growth over the process's
   RSS before the ingest (imports done, calendar loaded) divided by the bars it stored. The run
   is the day's first, so it builds the day's Data Docs too (Great Expectations' import
   included). ``--before TREE`` runs the same ingest from an older source tree in its own
   process. ``--memory-days 0`` skips it; a shorter history is a smaller representative case
   (the fixed costs - imports, Data Docs, one validation group - then weigh more per bar).

    python benchmarks/ingest.py [--days 182] [--baseline-series 40] [--memory-days 730]
        [--before /tmp/before-ingest]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from arena.core.universe import load_universe
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.data.validation.checks import Window, validate_bars

TARGET_BYTES_PER_BAR = 200


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def throughput(days: int, end: pd.Timestamp, baseline_series: int) -> None:
    """Section 1 of the module docstring."""
    universe = load_universe().select(None)  # the default season's assets
    start = end - pd.Timedelta(days=days)
    rss0 = _peak_rss_mb()
    t0 = time.perf_counter()
    import great_expectations  # noqa: F401 - paid once per process (the day's Data Docs)

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

        print(f"universe            {len(universe)} assets, {days} days of 15m bars "
              f"({start.date()} .. {end.date()}), synthetic")
        print(f"bars                {base_bars:,} base 15m bars, {all_bars:,} bars in all intervals")
        print(f"wall time           {wall:.2f} s  ({', '.join(f'{k} {v:.2f}s' for k, v in timings.items())})")
        print(f"throughput          {base_bars / wall:,.0f} base bars/s, {all_bars / wall:,.0f} bars/s")
        print(f"validation share    {timings['validate'] / wall:.1%} of the wall time "
              f"({all_bars / timings['validate']:,.0f} bars/s validated)")
        print(f"GE import           {ge_import:.2f} s once per process (not in the figures above)")
        print(f"peak memory         {_peak_rss_mb():,.0f} MB RSS (process start {rss0:,.0f} MB)")

        # baseline: one validation run per series instead of one per batch
        keys = lake.partitions()[:baseline_series]
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


def _high_water_bytes() -> int:
    """This process's peak RSS (``VmHWM``: the high-water mark of its own memory since exec;
    ``ru_maxrss`` would carry the parent's peak into a child)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def memory_child(days: int, end: pd.Timestamp) -> None:
    """In a fresh process: a first ingest of ``days`` days; prints its RSS figures as JSON."""
    from arena.core.sessions import expected_bars
    from arena.core.settings import prepare_process

    prepare_process()
    universe, provider = load_universe().select(None), SyntheticProvider()
    expected_bars("XNYS", "1h", end - pd.Timedelta(days=7), end)  # the calendar, loaded
    base = _high_water_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.process_time()
        result = run_ingest(provider, universe, start=end - pd.Timedelta(days=days), end=end,
                            lake=Lake(tmp), now=end)
        cpu = time.process_time() - t0
        peak = _high_water_bytes()
    print(json.dumps({"base": base, "peak": peak, "bars": result.manifest["bars_published"],
                      "cpu": cpu, "status": result.manifest["status"]}))


def memory(days: int, end: pd.Timestamp, before: Path | None) -> None:
    """Section 2 of the module docstring."""
    trees = {"after": None, **({"before": before} if before is not None else {})}
    figures = {}
    for name, tree in trees.items():
        env = dict(os.environ)
        if tree is not None:
            env["PYTHONPATH"] = str(tree)
        done = subprocess.run([sys.executable, __file__, "--memory-child", str(days),
                               "--end", str(end.date())], env=env, capture_output=True,
                              text=True, check=False, cwd=tree or Path.cwd())
        if done.returncode != 0:
            raise SystemExit(f"{name}: the memory run failed: {done.stderr[-2000:]}")
        f = json.loads(done.stdout.strip().splitlines()[-1])
        per_bar = (f["peak"] - f["base"]) / f["bars"]
        figures[name] = per_bar
        print(f"memory {name:<6}      first ingest of {days} days: {f['bars']:,} bars stored, "
              f"RSS {f['base'] / 2**20:,.0f} MB before, peak {f['peak'] / 2**20:,.0f} MB: "
              f"{per_bar:,.0f} bytes per stored bar (target {TARGET_BYTES_PER_BAR}); "
              f"{f['cpu']:.1f} s CPU")
    if before is not None:
        print(f"memory ratio        after / before {figures['after'] / figures['before']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=182)
    parser.add_argument("--end", default="2026-11-01")
    parser.add_argument("--baseline-series", type=int, default=40,
                        help="series validated one by one for the baseline (extrapolated)")
    parser.add_argument("--memory-days", type=int, default=730,
                        help="history of the memory run (0: none)")
    parser.add_argument("--before", type=Path, default=None,
                        help="a source tree of an older commit to run the memory case from too")
    parser.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    end = pd.Timestamp(args.end, tz="UTC")
    if args.memory_child is not None:
        memory_child(args.memory_child, end)
        return
    if args.days:
        throughput(args.days, end, args.baseline_series)
    if args.memory_days:
        memory(args.memory_days, end, args.before)


if __name__ == "__main__":
    main()
