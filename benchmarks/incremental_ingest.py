"""One new hour into a lake that holds months of 15-minute bars, for the whole universe.

An ingest run fetches, derives and validates what it adds plus the trailing context its checks
need (and re-fetches two days to look for restatements), so its cost should not grow with the
stored history. Printed:

1. the whole ``arena ingest`` command for one new hour of the 62 assets (248 new 15-minute
   bars), as a subprocess on a prepared lake of ``--short`` days whose Data Docs of the day are
   built (as on every hourly run but the day's first): its CPU time (user + system, imports
   included), best and median of ``--repeat`` runs, each on a fresh copy of the lake. With
   ``--before TREE`` (a worktree of an older commit) the same command of that tree runs on the
   same copies, alternately, and the ratio is printed;
2. in one warm process (imports and the lake's initial build apart; CPU seconds): the one-hour
   run on a lake of ``--short`` days and on one of ``--days`` days, and - as the baseline
   measured in the same run - deriving and validating the whole stored series the way every run
   did before ingest was incremental (``--no-growth`` skips it);
3. the validation pages of one run in a folder that keeps ``--runs`` runs (a year of hourly and
   15-minute watch runs keeps ~44,000): listing the run in the index against rebuilding the
   index from every run's folder, which each run did before (measured in the same run).

    python benchmarks/incremental_ingest.py [--days 365] [--short 90] [--repeat 3]
        [--before /tmp/before-ingest] [--no-growth] [--runs 5000]
"""

from __future__ import annotations

import time

T_IMPORT = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
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
HOUR = pd.Timedelta(hours=1)
TARGET_CPU_S = 2.0  # the whole command, imports included


def one_hour_runs(lake: Lake, universe, provider, repeat: int) -> list[float]:
    """CPU seconds of ``repeat`` consecutive one-hour ingests (each the next hour; the first
    builds the day's Data Docs)."""
    times = []
    for i in range(repeat):
        start = END + i * HOUR
        end = start + HOUR
        t0 = time.process_time()
        result = run_ingest(provider, universe, start=start, end=end, lake=lake, now=end)
        times.append(time.process_time() - t0)
        assert result.manifest["status"] == "published", result.manifest["not_published"]
    return times


def whole_series_baseline(lake: Lake, universe) -> float:
    """Derive every coarser interval from the whole stored base series and validate every
    stored bar (what each run did before); CPU seconds."""
    t0 = time.process_time()
    frames, windows = [], []
    for asset in universe:
        base = lake.read_bars(PartitionKey("synthetic", "15m", asset.symbol))
        for interval in coarser_or_equal("15m"):
            bars = base if interval == "15m" else derive_complete(base, "15m", interval,
                                                                  asset.calendar)
            frames.append((PartitionKey("synthetic", interval, asset.symbol), bars))
            windows.append(Window(asset.symbol, interval, asset.calendar))
    validate_bars(concat_partitions(frames), windows, as_of=None)
    return time.process_time() - t0


def command(tree: Path | None, lake: Path, start: pd.Timestamp) -> tuple[float, dict]:
    """CPU seconds (user + system) of ``arena ingest`` for the hour from ``start`` as a
    subprocess (``tree``: the source tree it runs from; None: the installed arena), and its
    manifest."""
    env = dict(os.environ)
    # as a scheduled run: the interpreter keeps the compiled modules it imports (a machine
    # that sets PYTHONDONTWRITEBYTECODE would otherwise compile every changed module each run)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    args = [sys.executable, "-m", "arena.cli", "ingest", "--start", start.isoformat(),
            "--end", (start + HOUR).isoformat(), "--lake", str(lake), "--json"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False,
                          cwd=tree or Path.cwd())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"arena ingest failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, json.loads(done.stdout)


def whole_command(root: Path, universe, provider, days: int, repeat: int,
                  before: Path | None) -> None:
    """Section 1 of the module docstring."""
    prepared = root / "prepared"
    run_ingest(provider, universe, start=END - pd.Timedelta(days=days), end=END,
               lake=Lake(prepared), now=END)
    command(None, prepared, END)  # the day's first hourly run: it builds the day's Data Docs
    hour = END + HOUR
    trees = {"after": None, **({"before": before} if before is not None else {})}
    for name, tree in trees.items():  # one run of each tree first: its modules compiled
        warm = root / f"warm-{name}"
        shutil.copytree(prepared, warm, symlinks=True)
        command(tree, warm, hour)
        shutil.rmtree(warm)
    cpu: dict[str, list[float]] = {name: [] for name in trees}
    manifest = {}
    for i in range(repeat):
        for name, tree in trees.items():
            copy = root / f"{name}-{i}"
            shutil.copytree(prepared, copy, symlinks=True)
            seconds, manifest[name] = command(tree, copy, hour)
            cpu[name].append(seconds)
            shutil.rmtree(copy)
    m = manifest["after"]
    new = sum(s["new"] for s in m["got"].values())
    print(f"whole command: arena ingest of one hour into a lake of {days} days "
          f"({len(m['published'])} assets, {new} new 15m bars; "
          f"{m['validation']['summary']})")
    for name in trees:
        runs = cpu[name]
        print(f"  {name:<6} {min(runs):.2f} s CPU best, {statistics.median(runs):.2f} median "
              f"of {repeat} ({', '.join(f'{t:.2f}' for t in runs)}); target {TARGET_CPU_S:.1f} s")
    if before is not None:
        print(f"  ratio  after / before {min(cpu['after']) / min(cpu['before']):.3f} (best), "
              f"{statistics.median(cpu['after']) / statistics.median(cpu['before']):.3f} "
              "(median)")


def pages(runs: int) -> None:
    """Section 3 of the module docstring."""
    from arena.data.validation.html import RESULTS, SUMMARY, add_to_index, write_index

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = pd.Timestamp("2025-01-01", tz="UTC")
        for i in range(runs):
            run = root / f"{start + i * pd.Timedelta(minutes=15):%Y%m%dT%H%M%S}-synthetic-{i:06x}"
            run.mkdir()
            (run / RESULTS).write_text("{}")
            (run / SUMMARY).write_text(json.dumps({
                "run_id": run.name, "provider": "synthetic", "started": None, "as_of": None,
                "success": True, "bars": 400, "series": 124, "checks": 1116, "failed": 0}))
        t0 = time.process_time()
        write_index(root)
        rebuild = time.process_time() - t0
        summary = {"run_id": "20991231T000000-synthetic-ffffff", "provider": "synthetic",
                   "started": None, "as_of": None, "success": True, "bars": 400,
                   "series": 124, "checks": 1116, "failed": 0}
        t0 = time.process_time()
        add_to_index(root, summary)
        listed = time.process_time() - t0
    print(f"validation pages with {runs:,} runs kept: one run listed {listed * 1000:.1f} ms CPU; "
          f"the index rebuilt from every run's folder {rebuild * 1000:.0f} ms; "
          f"ratio {listed / rebuild:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="history of the long lake")
    parser.add_argument("--short", type=int, default=90, help="history of the short lake")
    parser.add_argument("--repeat", type=int, default=3, help="one-hour runs per lake")
    parser.add_argument("--before", type=Path, default=None,
                        help="a source tree of an older commit to run the command from too")
    parser.add_argument("--no-growth", action="store_true",
                        help="only the whole command and the pages (sections 1 and 3)")
    parser.add_argument("--runs", type=int, default=5000, help="runs kept for section 3")
    args = parser.parse_args()
    prepare_process()
    universe, provider = load_universe().select(None), SyntheticProvider()
    print(f"imports: {IMPORTS:.2f} s (not counted in section 2)")
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        whole_command(Path(tmp) / "command", universe, provider, args.short, args.repeat,
                      args.before)
        pages(args.runs)
        if args.no_growth:
            return
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
                  f"one new hour {min(runs):.2f} s CPU (best of {args.repeat}: "
                  f"{', '.join(f'{t:.2f}' for t in runs)}); whole-series derive + validate "
                  f"{baseline:.2f} s; ratio {min(runs) / baseline:.3f}")
    (short_run, short_base), (long_run, long_base) = rows[args.short], rows[args.days]
    print(f"growth from {args.short} to {args.days} days: one new hour x{long_run / short_run:.2f}, "
          f"whole-series baseline x{long_base / short_base:.2f}")


if __name__ == "__main__":
    main()
