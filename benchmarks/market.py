"""The market of a cycle and the daily report: what one cycle's reads cost.

* ``build_market`` read per symbol (every series on its own, how it was built before: the
  reference of ``tests/market/reference.py``) against the one-scan read, on a demo-sized lake
  (the whole universe, 220 days of the synthetic market before the first cycle), at a weekday, a
  Saturday and a Monday cycle; both results are checked equal.
* The daily report's time on day 5 and on day ``--days`` of a replayed season (flat when each
  report reads only its own cycle's records).

    python benchmarks/market.py [--repeat 3] [--days 25] [--symbols BTC,ETH,...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the per-symbol reference in tests/

from arena import DEMO_START
from arena.agents.factory import contestants_from_roster
from arena.core.sessions import daily_cycles
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.market.briefing import build_market
from arena.pipeline.day import HISTORY_DAYS
from arena.pipeline.season import replay_season
from tests.market.reference import build_market_per_symbol

HELD = ("ETH", "AAPL", "KO")


def _best(repeat: int, fn):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timings per case (best is shown)")
    parser.add_argument("--days", type=int, default=25, help="season days (0: no daily reports)")
    parser.add_argument("--symbols", help="comma-separated house symbols (default: all 62)")
    args = parser.parse_args()
    universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
    held = [s for s in HELD if s in universe and universe[s].tradable]
    start = pd.Timestamp(DEMO_START, tz="UTC")  # the edge: a UTC timestamp from here on
    cycles = {"weekday": start, "saturday": start + pd.Timedelta(days=2),
              "monday": start + pd.Timedelta(days=4)}
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "market")
        t0 = time.perf_counter()
        run_ingest(SyntheticProvider(), universe, lake=lake,
                   start=start.normalize() - pd.Timedelta(days=HISTORY_DAYS),
                   end=max(cycles.values()), now=max(cycles.values()))
        print(f"lake: {len(universe)} assets, {HISTORY_DAYS} days before {start:%Y-%m-%d}, "
              f"{len(lake.partitions('synthetic'))} partitions (ingest {time.perf_counter() - t0:.1f} s)")
        print(f"build_market, best of {args.repeat}:   per symbol    one scan   speed-up")
        total_old = total_new = 0.0
        for name, at in cycles.items():
            old, ref = _best(args.repeat, lambda at=at: build_market_per_symbol(
                lake, "synthetic", universe, at, held=held))
            new, got = _best(args.repeat, lambda at=at: build_market(
                lake, "synthetic", universe, at, held=held))
            assert got == ref and got.as_dict() == ref.as_dict(), f"markets differ at {at}"
            total_old, total_new = total_old + old, total_new + new
            print(f"  {name:<9} {at:%Y-%m-%d %a}       {old:8.3f} s  {new:8.3f} s  {old / new:6.2f}x")
        print(f"  all cycles                   {total_old:8.3f} s  {total_new:8.3f} s  "
              f"{total_old / total_new:6.2f}x  (results identical)")
        if args.days < 6:
            return
        prepare_process()  # the process edge: litellm offline for a roster with models
        contestants, _ = contestants_from_roster(None, os.environ)
        t0 = time.perf_counter()
        played = replay_season(SyntheticProvider(), universe, contestants, daily_cycles(start, args.days),
                               lake=Lake(Path(tmp) / "season"))
        took = [d.timings["daily_report"] for d in played.days]
        first, last = took[4], took[-1]
        print(f"season: {args.days} days, {len(contestants)} contestants "
              f"(replay {time.perf_counter() - t0:.1f} s); daily report on day 5 {first:.3f} s, "
              f"on day {args.days} {last:.3f} s ({last / first:.2f}x); "
              f"mean of days 1-5 {sum(took[:5]) / 5:.3f} s, of the last 5 {sum(took[-5:]) / 5:.3f} s")
        assert [t.date() for t in daily_cycles(start, args.days)] == [d.at.date() for d in played.days]


if __name__ == "__main__":
    main()
