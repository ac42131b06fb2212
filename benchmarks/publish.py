"""The season's Python tables per publication: does their cost grow with the season?

A long season on the synthetic market (365 daily cycles by default, all 62 assets), its lake
ingested as a live season's is - up to the cycle before each measured day, then that day's
bars. At an early and a late day (28 and 365), the tables are built twice on the same lake:

* incremental: after the previous day's publication, from the state it left
  (``build_analytics``: the cycle prices and the arena's zero-skill players continue from their
  stored checkpoint);
* from scratch (``resume=False``): every cycle from the season's first, as every publication
  did before.

For each: CPU seconds (``time.process_time``) of each term - cycle prices, arena luck (1,000
zero-skill players through the rules engine), per-asset luck ceiling and reference rules
(``--players`` per asset, 2,000 as after a live cycle), correlations - and of writing the tables
(and the state); then late / early for each path. The two paths' tables must be equal, exactly.

    python benchmarks/publish.py [--early 28] [--late 365] [--players 2000] [--symbols BTC,...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd

from arena import DEMO_START
from arena.core.sessions import daily_cycles
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.pipeline.day import history_start, ingest_window
from arena.pipeline.season_tables import Analytics, build_analytics, write_analytics

TERMS = ("cycle_prices", "arena_luck", "asset_luck", "correlations", "write")


def _ingest(lake: Lake, universe, start: pd.Timestamp, end: pd.Timestamp) -> float:
    t0 = time.process_time()
    ingest_window(SyntheticProvider(), universe, start, end, lake, f"to {end:%Y-%m-%d}")
    return time.process_time() - t0


def _build(lake: Lake, universe, times, players: int, *, resume: bool, write: bool
           ) -> tuple[Analytics, dict[str, float]]:
    built = build_analytics(lake, "synthetic", universe, times, players=players, resume=resume)
    cpu = dict(built.cpu)
    t0 = time.process_time()
    if write:
        write_analytics(lake, built)
    cpu["write"] = time.process_time() - t0
    cpu["total"] = sum(cpu.values())
    return built, cpu


def _equal(a: Analytics, b: Analytics) -> bool:
    for name in a.tables:
        try:
            pd.testing.assert_frame_equal(a.tables[name], b.tables[name], check_exact=True)
        except AssertionError as exc:
            print(f"  {name} differs: {str(exc)[:300]}")
            return False
    return a.tables.keys() == b.tables.keys()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--early", type=int, default=28)
    parser.add_argument("--late", type=int, default=365)
    parser.add_argument("--players", type=int, default=2000, help="zero-skill players per asset")
    parser.add_argument("--symbols", help="comma-separated house symbols (default: all 62)")
    args = parser.parse_args()
    if not 2 <= args.early < args.late:
        parser.error("need 2 <= --early < --late")
    universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
    times = daily_cycles(pd.Timestamp(DEMO_START, tz="UTC"), args.late)
    results: dict[tuple[int, str], dict[str, float]] = {}
    same: dict[int, bool] = {}
    kept: dict[int, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "season")
        since = history_start(times[0])
        for day in (args.early, args.late):
            print(f"day {day}: ingest to the cycle before, publish it, ingest the day", flush=True)
            _ingest(lake, universe, since, times[day - 2])
            since = times[day - 1]
            _build(lake, universe, times[:day - 1], args.players, resume=True, write=True)
            _ingest(lake, universe, times[day - 2], times[day - 1])
            scratch, results[(day, "scratch")] = _build(lake, universe, times[:day], args.players,
                                                       resume=False, write=False)
            inc, results[(day, "incremental")] = _build(lake, universe, times[:day],
                                                        args.players, resume=True, write=True)
            same[day], kept[day] = _equal(inc, scratch), inc.kept
    print(f"\nthe season's Python tables: {len(universe)} assets, 1,000 arena zero-skill players, "
          f"{args.players:,} per asset; CPU seconds per publication")
    head = f"  {'term':<14}" + "".join(f"{f'day {d} {p}':>22}" for d in (args.early, args.late)
                                       for p in ("scratch", "incremental"))
    print(head + f"{'late/early scratch':>20}{'late/early incr.':>18}")
    for term in (*TERMS, "total"):
        row = [results[(d, p)][term] for d in (args.early, args.late)
               for p in ("scratch", "incremental")]
        ratio_s = row[2] / row[0] if row[0] else float("nan")
        ratio_i = row[3] / row[1] if row[1] else float("nan")
        print(f"  {term:<14}" + "".join(f"{v:>22.2f}" for v in row)
              + f"{ratio_s:>20.2f}{ratio_i:>18.2f}")
    for day in (args.early, args.late):
        print(f"  day {day}: cycles kept by the incremental build {kept[day]}; tables equal to "
              f"the build from scratch: {same[day]}")
    late, early = results[(args.late, "incremental")], results[(args.early, "incremental")]
    print(f"  incremental at day {args.late} vs from scratch: "
          f"{results[(args.late, 'scratch')]['total'] / late['total']:.1f}x less CPU; "
          f"late / early {late['total'] / early['total']:.2f}")
    if not all(same.values()):
        raise SystemExit("the incremental tables differ from the tables built from scratch")


if __name__ == "__main__":
    main()
