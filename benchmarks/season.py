"""The demo season end to end (what `arena demo` runs): total wall time and its split - the
season's ingest and validation, cycles, monitor, daily reports, luck tables, dbt, report - peak
memory, and the dbt build alone. Baseline, measured in the same run: the same season replayed
with a daily ingest before each day (``--ingest daily``, a live season's cadence), which must
leave the same leaderboard.

    python benchmarks/season.py [--days 28] [--symbols BTC,ETH,...] [--players 20000]
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import pandas as pd

from arena import DEMO_START
from arena.agents.factory import contestants_from_roster
from arena.core.sessions import daily_cycles
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.pipeline.season import finish_season, replay_season


def _board(marts: Path) -> pd.DataFrame:
    return pd.read_parquet(marts / "leaderboard.parquet").sort_values(
        ["place", "contestant"], ignore_index=True)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """Equal to 1e-9 relative (DuckDB's sums may add in another order: 1e-14 apart)."""
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9)
    except AssertionError as exc:
        print(f"  leaderboards differ: {exc}")
        return False
    return True


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=28)
    parser.add_argument("--symbols", help="comma-separated house symbols (default: all 62)")
    parser.add_argument("--players", type=int, default=20_000, help="zero-skill players per asset")
    args = parser.parse_args()
    universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
    prepare_process()  # the process edge: litellm offline for a roster with models
    contestants, _ = contestants_from_roster(None, os.environ)
    start = pd.Timestamp(DEMO_START, tz="UTC")  # the edge: a UTC timestamp from here on
    times = daily_cycles(start, args.days)
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "season")
        t0 = time.perf_counter()
        played = replay_season(SyntheticProvider(), universe, contestants, daily_cycles(start, args.days),
                               lake=lake)
        replay = time.perf_counter() - t0
        t0 = time.perf_counter()
        done = finish_season(lake, "synthetic", universe, times, players=args.players, quiet=True)
        finish = time.perf_counter() - t0
        total = replay + finish
        board = _board(done.marts.marts)
        daily_lake = Lake(Path(tmp) / "daily")
        t0 = time.perf_counter()
        replay_season(SyntheticProvider(), universe, contestants, daily_cycles(start, args.days),
                      lake=daily_lake, ingest="daily")
        daily = time.perf_counter() - t0
        daily_board = _board(finish_season(daily_lake, "synthetic", universe, times,
                                           players=args.players, quiet=True).marts.marts)
        same = _same(board, daily_board)
    split: dict[str, float] = defaultdict(float, played.timings)
    for day in played.days:
        for step, seconds in day.timings.items():
            split[step] += seconds
    split["luck tables"] = done.seconds["luck"]
    split["dbt build + publish"] = done.seconds["dbt"]
    split["season report"] = done.seconds["report"]
    print(f"season: {args.days} days, {len(universe)} assets, {len(contestants)} contestants, "
          f"{played.fills} fills, {args.players:,} zero-skill players per asset")
    print(f"  total wall time   {total:8.1f} s  (replay {replay:.1f} s, end of season {finish:.1f} s)")
    for step in ("ingest", "validation", "monitor", "cycle", "daily_report", "luck tables",
                 "dbt build + publish", "season report"):
        print(f"    {step:<20} {split[step]:8.1f} s  {split[step] / total:6.1%}")
    print(f"  dbt build alone   {done.marts.seconds:8.1f} s  ({done.marts.count('model')} models, "
          f"{done.marts.count('test') + done.marts.count('unit_test')} tests)")
    print(f"  per simulated day {replay / args.days:8.2f} s (the season's ingest included)")
    print(f"  baseline: the replay with a daily ingest {daily:.1f} s; with the season's ingest "
          f"{replay:.1f} s ({daily / replay:.1f}x faster); the same leaderboard: {same}")
    print(f"  peak memory       {_rss_mb():8,.0f} MB RSS")


if __name__ == "__main__":
    main()
