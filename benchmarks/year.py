"""A year with twenty models: does any cost grow with the season?

Replays ``--days`` days (365) of the synthetic market, the whole universe ingested day by day
as a live season is, with ``--contestants`` (20) LLM contestants answering through litellm from
a loopback OpenAI-compatible server (a scripted trader: a long or a short of 10-25% with its
level 3% away, so positions open, close and are stopped out by the monitor on 15-minute bars),
then prints:

* the per-day cost in the first and the last month (wall seconds per day, and each step's:
  ingest, validation, monitor, cycle, daily report), and their ratio;
* the publication after a cycle (the season's tables with 2,000 players per asset, the dbt
  marts, the report) at day ``--early`` (28) and at the last day, CPU seconds, each step apart,
  each measured right after the publication of the day before (as after every live cycle);
* one live monitor tick (a 15-minute window for every contestant) after the early and the last
  day;
* the full passes of the garbage collector in each measured publication (a process holding a
  year's objects pays for them in each pass);
* the same two publications again, each in a process of its own (as a scheduled cycle's flow
  run publishes), from a copy of the lake taken just before it, early and late interleaved
  ``--fresh`` (3) times so a drift of the machine's speed falls on both: median CPU seconds,
  their range, and the ratio of the medians;
* peak RSS, the lake's and the ledger's size and file counts;
* the quadratic terms: every per-day or per-publication cost whose last value is more than
  20% above its early one (its sum over the season grows with the square of its length).

    python benchmarks/year.py [--days 365] [--contestants 20] [--early 28] [--symbols ...]
                              [--fresh 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from arena import DEMO_START
from arena.agents.llm import LLMContestant, load_litellm
from arena.agents.roster import ContestantSpec, Params
from arena.core.sessions import daily_cycles
from arena.core.settings import prepare_process
from arena.core.universe import Universe, load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.pipeline.day import DayReport, monitor_day
from arena.pipeline.live.publish import LIVE_PLAYERS
from arena.pipeline.season import SeasonOutputs, finish_season, replay_season

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the loopback server of the tests
from tests.agents.openai_stub import OpenAIStub, RecordedRequest, StubResponse

STEPS = ("ingest", "validation", "monitor", "cycle", "daily_report")
LUCK_PARTS = ("luck.cycle_prices", "luck.arena_luck", "luck.asset_luck", "luck.correlations")
SYMBOLS = ("BTC", "ETH", "SOL", "SPY", "AAPL", "NVDA", "MSFT", "ADA")
GROWTH = 1.2  # a cost more than 20% above its early value grows with the season


class Trader:
    """The loopback model: every request opens a long or a short on one of :data:`SYMBOLS`
    (by turn) at 10-25% of equity, its level 3% away from the briefing's price; a position
    already held is refused, and the repair that follows closes it."""

    def __init__(self) -> None:
        self.turns = itertools.count()
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> StubResponse:
        with self.lock:
            turn = next(self.turns)
        messages = request.body["messages"]
        symbol = SYMBOLS[turn % len(SYMBOLS)]
        if any(m["role"] == "assistant" for m in messages):
            return StubResponse.answer(json.dumps({"reasoning": "repair", "decisions": [
                {"action": "close", "symbol": symbol}]}))
        found = re.search(rf"### {symbol} price ([0-9.]+)", messages[-1]["content"])
        if found is None:  # not in the briefing this cycle (a stock on a weekend)
            return StubResponse.answer(json.dumps({"reasoning": "wait", "decisions": []}))
        price, long = float(found.group(1)), turn % 2 == 0
        level = price * (0.97 if long else 1.03)
        return StubResponse.answer(json.dumps({"reasoning": "scripted", "decisions": [{
            "action": "open_long" if long else "open_short", "symbol": symbol,
            "percent_of_equity": 10 + turn % 16, "confidence": 0.8,
            "invalidation_price": round(level, 6), "thesis": "scripted",
            "invalidation": "scripted"}]}))


def cpu() -> float:
    return time.process_time()


class Collections:
    """The garbage collector's passes over the oldest generation while it is on: how many,
    and their seconds (a process that holds a year's objects pays for them in each pass)."""

    def __init__(self) -> None:
        self.passes, self.seconds, self._t0, self.on = 0, 0.0, 0.0, False

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.on or info.get("generation") != 2:
            return
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.passes += 1
            self.seconds += time.perf_counter() - self._t0

    @contextlib.contextmanager
    def counting(self) -> Iterator[None]:
        self.passes, self.seconds, self.on = 0, 0.0, True
        try:
            yield
        finally:
            self.on = False


def size(path: Path) -> tuple[int, int]:
    """(bytes, files) under ``path``."""
    files = [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()]
    return sum(p.stat().st_size for p in files), len(files)


def means(days: list[DayReport]) -> dict[str, float]:
    out = {"day": statistics.fmean(d.seconds for d in days)}
    out.update({s: statistics.fmean(d.timings.get(s, 0.0) for d in days) for s in STEPS})
    return out


def publication(lake: Lake, universe: Universe, times: Sequence[pd.Timestamp]
                ) -> tuple[dict[str, float], SeasonOutputs]:
    """One publication of the season after ``times``: its CPU and wall seconds and each
    step's (luck, dbt, report), and what it produced."""
    c0, t0 = cpu(), time.perf_counter()
    out = finish_season(lake, SyntheticProvider().name, universe, times, players=LIVE_PLAYERS,
                        quiet=True)
    return {"cpu": cpu() - c0, "wall": time.perf_counter() - t0,
            **{k: v for k, v in out.seconds.items() if "." not in k or k in LUCK_PARTS}}, out


def luck_parts(seconds: dict[str, float]) -> str:
    """The luck step's parts (wall seconds) of a publication's :func:`publication` seconds."""
    return ", ".join(f"{k.split('.', 1)[1]} {seconds[k]:.2f}" for k in LUCK_PARTS
                     if k in seconds)


def publish_once(root: Path, days: int, symbols: str | None) -> None:
    """Publish the season of ``root`` after its first ``days`` cycles (a process of its own);
    print its :func:`publication` seconds as one JSON line."""
    prepare_process()
    universe = load_universe().select(symbols.split(",") if symbols else None)
    times = daily_cycles(pd.Timestamp(DEMO_START, tz="UTC"), days)
    print(json.dumps(publication(Lake(root), universe, times)[0]))


def fresh_publications(lake: Lake, snapshots: dict[int, Path], rounds: int,
                       symbols: str | None) -> dict[int, list[dict[str, float]]]:
    """Each snapshot's publication in a process of its own, ``rounds`` times, the days
    interleaved; each run starts from the snapshot put back at the lake's own path (so dbt's
    kept parse of the project stays valid)."""
    out: dict[int, list[dict[str, float]]] = {day: [] for day in snapshots}
    for _ in range(rounds):
        for day, snapshot in snapshots.items():
            shutil.rmtree(lake.root)
            shutil.copytree(snapshot, lake.root, symlinks=True)
            command = [sys.executable, __file__, "--publish-once", str(lake.root),
                       "--days", str(day), *(["--symbols", symbols] if symbols else [])]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"the publication after day {day} failed:\n{done.stderr[-3000:]}")
            out[day].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--contestants", type=int, default=20)
    parser.add_argument("--early", type=int, default=28, help="the early publication's day")
    parser.add_argument("--month", type=int, default=30, help="days in a month's mean")
    parser.add_argument("--symbols", help="comma-separated house symbols (default: all)")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="leave the season's lake in DIR/season (a new folder) to profile it")
    parser.add_argument("--fresh", type=int, default=3, metavar="N",
                        help="rounds of the publications in processes of their own (0: none)")
    parser.add_argument("--publish-once", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publish_once is not None:
        return publish_once(args.publish_once, args.days, args.symbols)
    if args.days < args.early + 2 or args.days < 2 * args.month + 1:
        parser.error("--days must exceed --early + 1 and twice --month")
    prepare_process()
    load_litellm()
    universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
    start = pd.Timestamp(DEMO_START, tz="UTC")
    times = daily_cycles(start, args.days)
    publications: dict[int, dict[str, float]] = {}
    ticks: dict[int, float] = {}
    tracked: dict[int, int] = {}
    snapshots: dict[int, Path] = {}
    slowest: dict[int, str] = {}
    t_start = time.perf_counter()
    collections = Collections()
    gc.callbacks.append(collections)

    if args.keep is not None and (args.keep / "season").exists():
        parser.error(f"{args.keep / 'season'} exists: --keep needs a new folder")
    with (contextlib.nullcontext(str(args.keep)) if args.keep is not None
          else tempfile.TemporaryDirectory()) as tmp, OpenAIStub(handler=Trader()) as stub:
        lake = Lake(Path(tmp) / "season")
        contestants = [LLMContestant(ContestantSpec(
            name=f"model-{i:02d}", kind="llm", model="openai/scripted", api_base=stub.url,
            params=Params(temperature=0.2, max_tokens=400, timeout=60, num_retries=0)))
            for i in range(args.contestants)]
        provider = SyntheticProvider()

        def publish(day: int, measured: bool) -> None:
            with collections.counting():
                seconds, out = publication(lake, universe, times[:day])
            if measured:
                nodes = sorted(out.marts.nodes, key=lambda n: -n.seconds)
                publications[day] = {**seconds, "dbt nodes": sum(n.seconds for n in nodes),
                                     "gc": collections.seconds, "gc passes": collections.passes}
                slowest[day] = ", ".join(f"{n.name} {n.seconds:.2f}" for n in nodes[:5])

        def tick(day: int) -> None:
            end = times[day - 1] + pd.Timedelta(minutes=15)
            c0 = cpu()
            monitor_day(lake, Ledger(lake), provider.name, universe, contestants, end)
            ticks[day] = cpu() - c0

        def progress(report: DayReport, i: int, total: int) -> None:
            if i == 1 or i % 30 == 0 or i == total:
                print(f"  day {i:>3}/{total} {report.at:%Y-%m-%d}: {report.seconds:5.2f} s "
                      f"({time.perf_counter() - t_start:5.0f} s in)", flush=True)
            if i in (args.early - 1, total - 1):
                publish(i, measured=False)  # the publication after the day before
            if i in (args.early, total):
                if args.fresh:  # the lake as the publication finds it, for fresh_publications
                    snapshots[i] = Path(tmp) / f"before-publication-{i}"
                    shutil.copytree(lake.root, snapshots[i], symlinks=True)
                tracked[i] = len(gc.get_objects())  # what each full collection walks
                publish(i, measured=True)
                tick(i)  # the next day's monitor window starts where the tick stopped
                print(f"    publication after day {i}: {publications[i]['cpu']:.1f} s CPU; "
                      f"a monitor tick {ticks[i]:.2f} s CPU", flush=True)

        played = replay_season(provider, universe, contestants, times, lake=lake,
                               ingest="daily", progress=progress)
        lake_bytes, lake_files = size(lake.root)
        ledger_bytes, ledger_files = size(lake.root / "ledger")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        fresh = fresh_publications(lake, snapshots, args.fresh, args.symbols)
        for snapshot in snapshots.values():
            shutil.rmtree(snapshot)
    total = time.perf_counter() - t_start
    days = played.days
    first, last = means(days[1:1 + args.month]), means(days[-args.month:])
    print(f"\n{args.days} days from {start:%Y-%m-%d}: {len(universe)} assets, "
          f"{args.contestants} LLM contestants (loopback), {played.fills} fills, "
          f"{total:.0f} s in all (the first day with its history ingest: {days[0].seconds:.0f} s)")
    print("per day (wall s)        " + "  ".join(f"{s:>12}" for s in ("day", *STEPS)))
    for label, m in ((f"days 2-{1 + args.month}", first), (f"last {args.month} days", last)):
        print(f"  {label:<22}" + "  ".join(f"{m[s]:12.2f}" for s in ("day", *STEPS)))
    print("  last / first          " + "  ".join(
        f"{(last[s] / first[s] if first[s] else float('nan')):12.2f}" for s in ("day", *STEPS)))
    early, late = publications[args.early], publications[args.days]
    print(f"publication after a cycle ({LIVE_PLAYERS:,} players per asset), CPU s:")
    print(f"  day {args.early:<4} {early['cpu']:6.1f} s CPU, {early['wall']:6.1f} s wall  "
          + ", ".join(f"{k} {early[k]:.1f}" for k in ("luck", "dbt", "report") if k in early))
    print(f"  day {args.days:<4} {late['cpu']:6.1f} s CPU, {late['wall']:6.1f} s wall  "
          + ", ".join(f"{k} {late[k]:.1f}" for k in ("luck", "dbt", "report") if k in late))
    print(f"  ratio    {late['cpu'] / early['cpu']:.2f} (target <= 1.2, and <= 20 s)")
    for day in (args.early, args.days):
        print(f"  day {day:<4} luck: " + luck_parts(publications[day]))
    for day in (args.early, args.days):
        print(f"  day {day:<4} dbt: {publications[day]['dbt nodes']:.1f} s in its nodes; slowest: "
              f"{slowest[day]}")
    print("  full garbage collections in the publication: " + ", ".join(
        f"day {day} {publications[day]['gc passes']:.0f} ({publications[day]['gc']:.2f} s, "
        f"{tracked[day]:,} objects tracked)" for day in (args.early, args.days)))
    if args.fresh:
        print(f"the same publications, each in a process of its own, interleaved {args.fresh} "
              "times, CPU s (median [range]):")
        medians = {}
        for day, runs in fresh.items():
            cpus = [r["cpu"] for r in runs]
            medians[day] = statistics.median(cpus)
            steps = ", ".join(f"{k} {statistics.median(r[k] for r in runs):.1f}"
                              for k in ("luck", "dbt", "report"))
            print(f"  day {day:<4} {medians[day]:6.1f} s CPU [{min(cpus):.1f}-{max(cpus):.1f}]"
                  f"  {steps}")
        print(f"  ratio    {medians[args.days] / medians[args.early]:.2f} "
              "(target <= 1.2, and <= 20 s)")
        for day, runs in fresh.items():
            print(f"  day {day:<4} luck: " + luck_parts(
                {k: statistics.median(r[k] for r in runs) for k in LUCK_PARTS}))
    print(f"monitor tick (every contestant, one 15-minute window): after day {args.early} "
          f"{ticks[args.early]:.2f} s CPU, after day {args.days} {ticks[args.days]:.2f} s CPU")
    print(f"peak RSS {rss:,.0f} MB; lake {lake_bytes / 1e6:,.0f} MB in {lake_files:,} files, "
          f"ledger {ledger_bytes / 1e6:,.0f} MB in {ledger_files:,} files")
    growing = [f"per-day {s} x{last[s] / first[s]:.2f}" for s in ("day", *STEPS)
               if first[s] > 0.01 and last[s] > GROWTH * first[s]]
    growing += [f"publication {k} x{late[k] / early[k]:.2f}" for k in ("cpu", "luck", "dbt",
                                                                         "dbt nodes", "report")
                if early.get(k, 0) > 0.01 and late.get(k, 0) > GROWTH * early[k]]
    if ticks[args.days] > GROWTH * ticks[args.early]:
        growing.append(f"monitor tick x{ticks[args.days] / ticks[args.early]:.2f}")
    print("quadratic terms: " + ("; ".join(growing) if growing else "none (every cost within "
                                 f"{GROWTH:.1f}x of its early value)"))


if __name__ == "__main__":
    main()
