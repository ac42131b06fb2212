"""The market of a cycle, its monitor window and the daily report: what one cycle's reads cost.

On a demo-sized lake (the whole universe from the season's history start, a year and a few
days of the synthetic market before the first cycle), at a weekday, a Saturday and a Monday
cycle:

* ``build_market`` read per symbol (every series on its own, how it was built before: the
  reference of ``tests/market/reference.py``) against the one-scan read, neither keeping what it
  read; both results are checked equal.
* One season day's reads - the monitor window of a book holding a dozen assets, the cycle's
  market, the daily report's damage check and prices - on a lake that keeps nothing (every read
  opens its file, as each cycle did before the lake kept its reads) and on one lake kept across
  the three cycles (the first cold, the later ones served from memory): bar files opened and
  CPU seconds per cycle, every result checked equal.
* The invalidation monitor's per-bar loop (``tests/engine/reference_monitor.py``, how it was
  written before) against the vectorised search, on the same windows (every tradable asset
  held, the 15-minute bars of the day before each cycle, a level reached by about half of
  them), results checked equal.
* The daily report's time on day 5 and on day ``--days`` of a replayed season (flat when each
  report reads only its own cycle's records).
* ``--demo-days N``: bar files opened over a whole replayed season (``arena.app.replay``, the
  ``arena demo`` job) by each of its steps, on a lake that keeps nothing and on one that keeps
  its reads (one replay each; minutes).

    python benchmarks/market.py [--repeat 3] [--days 25] [--symbols BTC,ETH,...] [--demo-days 0]
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the references in tests/

from arena import DEMO_START
from arena.agents.factory import contestants_from_roster
from arena.core.sessions import daily_cycles
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data import market_store
from arena.data.ingest import run_ingest
from arena.data.lake import Lake, PartitionKey
from arena.data.providers.synthetic import SyntheticProvider
from arena.engine.monitor import check_invalidations
from arena.engine.portfolio import LONG, OPEN, SHORT, Fill, Portfolio, fee
from arena.market.asof import cycle_prices
from arena.market.briefing import build_market, market_damage
from arena.pipeline.day import history_start
from arena.pipeline.season import replay_season
from tests.engine.reference_monitor import check_invalidations_per_bar
from tests.market.reference import build_market_per_symbol

HELD = ("ETH", "SOL", "DOGE", "AAPL", "KO", "JPM", "NVDA", "XOM", "PG", "MSFT", "BTC", "TSLA")
DAY = pd.Timedelta(days=1)


def _best(repeat: int, fn):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.process_time()
        out = fn()
        times.append(time.process_time() - t0)
    return min(times), out


def _book(lake: Lake, universe, symbols, at: pd.Timestamp, reach: float) -> Portfolio:
    """A book holding ``symbols`` since the day before ``at`` (alternating long and short), each
    level ``reach`` of the price away (0.003: most are reached within a day; 0.3: none)."""
    prices = cycle_prices(Lake(lake.root, bar_cache_bytes=0), "synthetic", universe, [at - DAY])
    price = dict(zip(prices["symbol"], prices["price"], strict=True))
    book = Portfolio()
    for i, s in enumerate(symbols):
        side = LONG if i % 2 == 0 else SHORT
        level = price[s] * (1 - reach if side == LONG else 1 + reach)
        qty = 500.0 / price[s]
        book = book.apply(Fill(at - DAY, s, side, OPEN, qty, price[s], fee(qty * price[s]),
                               invalidation_price=level))
    return book


def _day_reads(lake: Lake, universe, at: pd.Timestamp, book: Portfolio, held):
    """One season day's reads, in its order: the monitor window, the market, the report's."""
    window = {s: lake.read_bars(PartitionKey("synthetic", "15m", s), at - DAY, at)
              for s in book.positions}
    watched = check_invalidations(book, window, universe, at - DAY, at)
    market = build_market(lake, "synthetic", universe, at, held=held)
    damaged = market_damage(lake, "synthetic", universe, at)
    prices = cycle_prices(lake, "synthetic", universe, [at - DAY, at], damage=dict(damaged))
    return watched, market, damaged, prices


def _same_reads(a, b) -> bool:
    return a[0] == b[0] and a[1] == b[1] and a[2] == b[2] and a[3].equals(b[3])


def _market_section(lake: Lake, universe, cycles, held, repeat: int) -> None:
    print(f"build_market, CPU best of {repeat}:   per symbol    one scan   speed-up")
    total_old = total_new = 0.0
    cold = Lake(lake.root, bar_cache_bytes=0)  # neither keeps what it read
    for name, at in cycles.items():
        old, ref = _best(repeat, lambda at=at: build_market_per_symbol(
            cold, "synthetic", universe, at, held=held))
        new, got = _best(repeat, lambda at=at: build_market(cold, "synthetic", universe, at,
                                                            held=held))
        assert got == ref and got.as_dict() == ref.as_dict(), f"markets differ at {at}"
        total_old, total_new = total_old + old, total_new + new
        print(f"  {name:<9} {at:%Y-%m-%d %a}       {old:8.3f} s  {new:8.3f} s  {old / new:6.2f}x")
    print(f"  all cycles                   {total_old:8.3f} s  {total_new:8.3f} s  "
          f"{total_old / total_new:6.2f}x  (results identical)")


def _day_section(lake: Lake, universe, cycles, repeat: int) -> None:
    held_book = [s for s in HELD if s in universe and universe[s].tradable]
    print(f"one day's reads (monitor window of {len(held_book)} held assets, market, report), "
          f"per cycle, CPU best of {repeat}:")
    print("                          keeping nothing             kept across the cycles")
    print("  cycle                    files    CPU s             files    CPU s   CPU ratio")
    books = {at: _book(lake, universe, held_book, at, 0.01) for at in cycles.values()}
    cpu = {at: [float("inf"), float("inf")] for at in cycles.values()}
    files: dict[pd.Timestamp, list[int]] = {}
    for _ in range(repeat):
        kept = Lake(lake.root)  # each repetition from cold: the first cycle opens its files
        for at in cycles.values():
            every = Lake(lake.root, bar_cache_bytes=0)
            t0 = time.process_time()
            want = _day_reads(every, universe, at, books[at], held_book)
            cpu[at][0] = min(cpu[at][0], time.process_time() - t0)
            opened_before = kept.bar_cache.stats.files_read
            t0 = time.process_time()
            got = _day_reads(kept, universe, at, books[at], held_book)
            cpu[at][1] = min(cpu[at][1], time.process_time() - t0)
            assert _same_reads(got, want), f"the reads differ at {at}"
            files[at] = [every.bar_cache.stats.files_read,
                         kept.bar_cache.stats.files_read - opened_before]
    for name, at in cycles.items():
        (files_old, files_new), (old, new) = files[at], cpu[at]
        print(f"  {name:<9} {at:%Y-%m-%d %a}   {files_old:6d} {old:8.3f}            "
              f"{files_new:6d} {new:8.3f}   {old / new:6.2f}x")
    sums = [sum(f[0] for f in files.values()), sum(c[0] for c in cpu.values()),
            sum(f[1] for f in files.values()), sum(c[1] for c in cpu.values())]
    print(f"  all cycles               {sums[0]:6d} {sums[1]:8.3f}            {sums[2]:6d} "
          f"{sums[3]:8.3f}   {sums[1] / sums[3]:6.2f}x  (results identical; "
          f"{kept.bar_cache.nbytes / 2**20:.0f} MB kept)")


def _monitor_section(lake: Lake, universe, cycles, repeat: int) -> None:
    tradable = [a.symbol for a in universe.tradable]
    print(f"monitor, {len(tradable)} assets held, the day's 15-minute bars, CPU best of {repeat}:"
          "   per bar    vectorised   speed-up   closes")
    total_old = total_new = 0.0
    for name, at in cycles.items():
        book = _book(lake, universe, tradable, at, 0.003)
        bars = {s: lake.read_bars(PartitionKey("synthetic", "15m", s), at - DAY, at)
                for s in tradable}
        old, ref = _best(repeat, lambda b=book, w=bars, at=at: check_invalidations_per_bar(
            b, w, universe, at - DAY, at))
        new, got = _best(repeat, lambda b=book, w=bars, at=at: check_invalidations(
            b, w, universe, at - DAY, at))
        assert got == ref, f"monitor results differ at {at}"
        total_old, total_new = total_old + old, total_new + new
        print(f"  {name:<9} {at:%Y-%m-%d %a}{'':36}{old:8.3f} s  {new:8.3f} s  "
              f"{old / new:7.1f}x   {len(got.fills):3d}")
    print(f"  all cycles{'':51}{total_old:8.3f} s  {total_new:8.3f} s  "
          f"{total_old / total_new:7.1f}x  (fills, books, counts identical)")


def _report_section(tmp: str, universe, start: pd.Timestamp, days: int) -> None:
    prepare_process()  # the process edge: litellm offline for a roster with models
    contestants, _ = contestants_from_roster(None, os.environ)
    t0 = time.perf_counter()
    played = replay_season(SyntheticProvider(), universe, contestants, daily_cycles(start, days),
                           lake=Lake(Path(tmp) / "season"))
    took = [d.timings["daily_report"] for d in played.days]
    first, last = took[4], took[-1]
    print(f"season: {days} days, {len(contestants)} contestants "
          f"(replay {time.perf_counter() - t0:.1f} s); daily report on day 5 {first:.3f} s, "
          f"on day {days} {last:.3f} s ({last / first:.2f}x); "
          f"mean of days 1-5 {sum(took[:5]) / 5:.3f} s, of the last 5 {sum(took[-5:]) / 5:.3f} s")
    assert [t.date() for t in daily_cycles(start, days)] == [d.at.date() for d in played.days]


_STEPS = ("monitor_day", "market_damage", "build_market", "cycle_prices", "run_ingest",
          "finish_season")


def _demo_section(tmp: str, days: int) -> None:
    """Bar files opened over a replayed season, by step (counted where the store opens them)."""
    from arena.app.replay import ReplayPlan, replay

    prepare_process()
    opened: collections.Counter[str] = collections.Counter()
    real = market_store.LocalMarket.open_signed

    def counting(self, key, signature=None):
        if key.startswith("bars/"):
            names = [f.name for f in traceback.extract_stack(limit=80)]
            opened[next((n for n in reversed(names) if n in _STEPS), "other")] += 1
        return real(self, key, signature)

    market_store.LocalMarket.open_signed = counting
    try:
        results = {}
        for label, cache in (("keeping nothing", 0), ("kept", None)):
            opened.clear()
            root = Path(tmp) / f"demo-{cache}"
            lake = Lake(root) if cache is None else Lake(root, bar_cache_bytes=cache)
            t0 = time.process_time()
            played = replay(lake, ReplayPlan(dt.date.fromisoformat(DEMO_START), days),
                            env=os.environ)
            results[label] = played.board
            print(f"  {label:<16} {sum(opened.values()):6d} bar files opened "
                  f"({', '.join(f'{k} {v}' for k, v in opened.most_common())}); "
                  f"{time.process_time() - t0:.1f} CPU s")
        # to 1e-9, as the golden season: DuckDB's parallel sums in the marts may round apart
        pd.testing.assert_frame_equal(results["kept"], results["keeping nothing"],
                                      check_exact=False, rtol=1e-9, atol=1e-12,
                                      obj="the leaderboards")
        print("  leaderboards equal (to 1e-9)")
    finally:
        market_store.LocalMarket.open_signed = real


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="timings per case (best is shown)")
    parser.add_argument("--days", type=int, default=25, help="season days (0: no daily reports)")
    parser.add_argument("--symbols", help="comma-separated house symbols (default: all 62)")
    parser.add_argument("--demo-days", type=int, default=0,
                        help="replay the demo for this many days, counting its reads (0: no)")
    args = parser.parse_args()
    universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
    held = [s for s in ("ETH", "AAPL", "KO") if s in universe and universe[s].tradable]
    start = pd.Timestamp(DEMO_START, tz="UTC")  # the edge: a UTC timestamp from here on
    cycles = {"weekday": start, "saturday": start + pd.Timedelta(days=2),
              "monday": start + pd.Timedelta(days=4)}
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "market")
        t0 = time.perf_counter()
        run_ingest(SyntheticProvider(), universe, lake=lake, start=history_start(start),
                   end=max(cycles.values()), now=max(cycles.values()))
        print(f"lake: {len(universe)} assets from {history_start(start):%Y-%m-%d}, "
              f"{len(lake.partitions('synthetic'))} partitions "
              f"(ingest {time.perf_counter() - t0:.1f} s)")
        _market_section(lake, universe, cycles, held, args.repeat)
        _day_section(lake, universe, cycles, args.repeat)
        _monitor_section(lake, universe, cycles, args.repeat)
        if args.days >= 6:
            _report_section(tmp, universe, start, args.days)
        if args.demo_days:
            print(f"the demo replayed for {args.demo_days} days:")
            _demo_section(tmp, args.demo_days)


if __name__ == "__main__":
    main()
