"""Start-up: the CPU a process spends importing a job or printing a command's help, before
anything is done, against another checkout (an older commit) measured in the same run.

* CPU: user + sys of each fresh process (``resource.getrusage(RUSAGE_CHILDREN)``), the median
  of ``--repeat`` runs: ``python -c "import arena.app.<job>"`` for every job module, and
  ``python -m arena.cli <command> --help`` for every command and subcommand.
* ``python -X importtime -c "import arena.app.cycle"``: the cumulative microseconds of the job
  module and of the libraries it imported directly or through the arena (one run; wall time),
  and how many modules the process holds.
* A command's whole run, what a scheduled job pays: ``arena ingest`` of two synthetic assets
  over a month into a fresh lake (start-up, the ingest, validation and publication).
* The first use of the trading calendar (``regular_session``): the process's CPU, pandas and
  the XNYS schedule included (after a warm-up run, which leaves the schedule's file when the
  checkout keeps one: ``core.sessions.schedule_file``).

By default the arena's bytecode is compiled once beforehand (a fresh ``PYTHONPYCACHEPREFIX``),
as in an installed package; ``--source`` compiles every module at every start instead (a
checkout where bytecode is not written, ``PYTHONDONTWRITEBYTECODE=1``).

    git worktree add /tmp/before <commit>
    python benchmarks/startup.py --before /tmp/before [--repeat 5] [--source]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOBS = ("cycle", "ingest", "monitor", "replay", "publish", "status", "serve", "verify", "handle")
LIBRARIES = ("pandas", "numpy", "pyarrow", "duckdb", "matplotlib", "great_expectations",
             "litellm", "prefect", "dbt", "exchange_calendars", "jinja2", "markdown_it",
             "pydantic", "pydantic_settings", "yaml", "filelock", "tenacity", "cyclopts")
COMMANDS = """
import json
from arena.cli import app
words = [[]]
for name in sorted(n for n in app if not n.startswith("-")):
    words.append([name])
    words += [[name, sub] for sub in sorted(n for n in app[name] if not n.startswith("-"))]
print(json.dumps(words))
"""
CALENDAR = "from arena.core.sessions import regular_session; regular_session('2026-10-01')"


class Tree:
    """A checkout the measured processes import the arena from."""

    def __init__(self, root: Path, *, source: bool, cache: Path) -> None:
        self.root = root
        # its own cache folder: the schedule file a warm-up run leaves (core.sessions)
        self.env = {**os.environ, "PYTHONPATH": str(root), "XDG_CACHE_HOME": str(cache)}
        self.env.pop("PYTHONPYCACHEPREFIX", None)
        if source:
            self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        else:
            self.env.pop("PYTHONDONTWRITEBYTECODE", None)
            self.env["PYTHONPYCACHEPREFIX"] = str(cache / "bytecode")

    def run(self, args: list[str]) -> tuple[float, str, str]:
        """CPU seconds (user + sys) of one process, and its output."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, *args], cwd=self.root, env=self.env,
                             capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return cpu, out.stdout, out.stderr

    def cpu(self, args: list[str], repeat: int) -> float:
        return statistics.median(self.run(args)[0] for _ in range(repeat))

    def check(self) -> None:
        _, out, _ = self.run(["-c", "import arena; print(arena.__file__)"])
        if not out.strip().startswith(str(self.root)):
            raise SystemExit(f"{self.root}: the arena is imported from {out.strip()}")

    def commands(self) -> list[list[str]]:
        return json.loads(self.run(["-c", COMMANDS])[1])

    def importtime(self, module: str) -> tuple[dict[str, int], int]:
        """Cumulative microseconds of ``module`` and of each library in LIBRARIES the process
        imported; the number of modules it holds."""
        code = f"import sys, {module}; print(len(sys.modules))"
        _, out, err = self.run(["-X", "importtime", "-c", code])
        cumulative: dict[str, int] = {}
        for line in err.splitlines():
            m = re.match(r"import time:\s+\d+ \|\s+(\d+) \|( *)(\S+)$", line)
            if m and (m[3] == module or m[3] in LIBRARIES):
                cumulative[m[3]] = max(cumulative.get(m[3], 0), int(m[1]))
        return cumulative, int(out.strip().splitlines()[-1])


def _row(name: str, before: float | None, after: float) -> str:
    if before is None:
        return f"  {name:<42} {'':>8} {after:>8.2f}"
    return f"  {name:<42} {before:>8.2f} {after:>8.2f} {before / after:>7.1f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="an older checkout to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (the median)")
    parser.add_argument("--source", action="store_true",
                        help="compile every module at every start (no bytecode written)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        after = Tree(ROOT, source=args.source, cache=Path(cache) / "after")
        before = (Tree(args.before.resolve(), source=args.source, cache=Path(cache) / "before")
                  if args.before else None)
        trees = [t for t in (before, after) if t is not None]
        for tree in trees:
            tree.check()
            tree.run(["-c", f"import arena.app.cycle, arena.app.replay, arena.cli; {CALENDAR}"])
        mode = "every module compiled at each start" if args.source else "bytecode compiled"
        print(f"start-up CPU, user + sys seconds of a process (median of {args.repeat}; {mode})")
        print(f"  {'':<42} {'before' if before else '':>8} {'after':>8}"
              f"{'  ratio' if before else ''}")
        for job in JOBS:
            code = ["-c", f"import arena.app.{job}"]
            print(_row(f"import arena.app.{job}", before.cpu(code, args.repeat) if before else None,
                       after.cpu(code, args.repeat)), flush=True)
        known = {tuple(w) for w in before.commands()} if before else None
        for words in after.commands():
            cmd = ["-m", "arena.cli", *words, "--help"]
            old = before.cpu(cmd, args.repeat) if before and tuple(words) in known else None
            print(_row(" ".join(["arena", *words, "--help"]), old, after.cpu(cmd, args.repeat)),
                  flush=True)
        runs = iter(range(1_000_000))

        def ingest(tree: Tree) -> list[str]:
            lake = Path(cache) / "lakes" / f"{id(tree)}-{next(runs)}"
            return ["-m", "arena.cli", "ingest", "--lake", str(lake), "--symbols", "BTC,SPY",
                    "--start", "2026-09-01", "--end", "2026-10-01"]

        print(_row("arena ingest (2 assets, a month, a new lake)",
                   statistics.median(before.run(ingest(before))[0] for _ in range(args.repeat))
                   if before else None,
                   statistics.median(after.run(ingest(after))[0] for _ in range(args.repeat))))
        print(_row("first calendar use (regular_session)",
                   before.cpu(["-c", CALENDAR], args.repeat) if before else None,
                   after.cpu(["-c", CALENDAR], args.repeat)))

        print('\npython -X importtime -c "import arena.app.cycle" (cumulative us, one run)')
        times = [t.importtime("arena.app.cycle") for t in trees]
        libraries = {n for cumulative, _ in times for n in cumulative} - {"arena.app.cycle"}
        names = ["arena.app.cycle", *sorted(libraries, key=lambda n: -times[0][0].get(n, 0))]
        for name in names:
            cells = [f"{c[name]:>12,}" if name in c else f"{'-':>12}" for c, _ in times]
            print(f"  {name:<24} {' -> '.join(cells)}")
        print(f"  {'modules loaded':<24} {' -> '.join(f'{n:>12,}' for _, n in times)}")


if __name__ == "__main__":
    main()
