"""Is a season day's cost flat in the season's length? A long replay (120 days by default) on
the synthetic market, timing every day: the mean seconds per day of the first 20 days (the
first day, which ingests the history, left out) against the last 20, with each step's share
(ingest, validation, monitor, cycle, daily report). Weekdays and weekend days differ (stocks
take no bars on a weekend), so the weekday means are printed apart. Target: the last 20 days
within 20% of the first 20. The days ingest day by day (``--ingest daily``, a live season's
cadence and the harder case) unless ``--ingest season`` is given.

    python benchmarks/replay_days.py [--days 120] [--symbols BTC,ETH,...] [--window 20]
                                     [--ingest daily|season]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import pandas as pd

from arena import DEMO_START
from arena.agents.factory import contestants_from_roster
from arena.core.sessions import daily_cycles
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.pipeline.day import DayReport
from arena.pipeline.season import replay_season

STEPS = ("ingest", "validation", "monitor", "cycle", "daily_report")


def _means(days: list[DayReport]) -> dict[str, float]:
    out = {"day": statistics.fmean(d.seconds for d in days)}
    out.update({s: statistics.fmean(d.timings.get(s, 0.0) for d in days) for s in STEPS})
    return out


def _line(label: str, days: list[DayReport]) -> str:
    m = _means(days)
    steps = ", ".join(f"{s} {m[s]:.2f}" for s in STEPS)
    return f"  {label:<26} {m['day']:6.2f} s/day over {len(days):>2} days  ({steps})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=120)
    parser.add_argument("--window", type=int, default=20, help="days compared at each end")
    parser.add_argument("--symbols", help="comma-separated house symbols (default: all 62)")
    parser.add_argument("--ingest", choices=("daily", "season"), default="daily")
    args = parser.parse_args()
    if args.days < 2 * args.window + 1:
        parser.error(f"--days must be at least {2 * args.window + 1} for --window {args.window}")
    universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
    prepare_process()
    contestants, _ = contestants_from_roster(None, os.environ)
    start = pd.Timestamp(DEMO_START, tz="UTC")

    def progress(day: DayReport, i: int, total: int) -> None:
        if i == 1 or i % 10 == 0:
            print(f"  day {i:>3}/{total} {day.at:%Y-%m-%d}: {day.seconds:6.2f} s", flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        played = replay_season(SyntheticProvider(), universe, contestants, daily_cycles(start, args.days),
                               lake=Lake(Path(tmp) / "season"), ingest=args.ingest,
                               progress=progress)
        total = time.perf_counter() - t0
    days = played.days
    first, last = days[1:1 + args.window], days[-args.window:]
    history = (f"the first day, with its history ingest: {days[0].seconds:.1f} s"
               if args.ingest == "daily" else
               f"the season's ingest: {sum(played.timings.values()):.1f} s")
    print(f"replay ({args.ingest} ingest): {args.days} days from {start:%Y-%m-%d}, "
          f"{len(universe)} assets, {len(contestants)} contestants, {played.fills} fills, "
          f"{total:.0f} s ({history})")
    print(_line(f"days 2-{1 + args.window}", first))
    print(_line(f"last {args.window} days", last))
    weekday = [d for d in first if d.at.weekday() < 5], [d for d in last if d.at.weekday() < 5]
    print(_line(f"days 2-{1 + args.window}, weekdays", weekday[0]))
    print(_line(f"last {args.window} days, weekdays", weekday[1]))
    ratio = _means(last)["day"] / _means(first)["day"]
    ratio_wd = _means(weekday[1])["day"] / _means(weekday[0])["day"]
    verdict = "within" if max(abs(ratio - 1), abs(ratio_wd - 1)) <= 0.2 else "NOT within"
    print(f"  last / first: {ratio:.2f} (weekdays {ratio_wd:.2f}): {verdict} 20%")


if __name__ == "__main__":
    main()
