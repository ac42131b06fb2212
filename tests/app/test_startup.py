"""Start-up: importing a job, or asking any command for its help, loads none of the heavy
libraries; each is imported where it is used (arena.core.lazy). A structural check of what a
fresh process holds in ``sys.modules``, never a time: benchmarks/startup.py measures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

JOBS = ("cycle", "ingest", "monitor", "replay", "publish", "status", "serve", "verify", "handle")
HEAVY = ("pandas", "numpy", "pyarrow", "duckdb", "matplotlib", "great_expectations", "litellm",
         "prefect", "dbt", "exchange_calendars", "jinja2", "markdown_it", "rich", "yfinance",
         "ccxt", "tiktoken", "mcp", "websockets", "pydantic_settings")
DRAWS_HELP = ("rich", "markdown_it")  # what cyclopts renders a command's help with


def _loaded(heavy: tuple[str, ...]) -> str:
    """An expression: the heavy libraries a process holds."""
    return f"sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))"


def _run(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("job", JOBS)
def test_importing_a_job_loads_no_heavy_library(job):
    assert _run(f"import json, sys, arena.app.{job}; print(json.dumps({_loaded(HEAVY)}))") == []


def test_no_command_loads_a_heavy_library_for_its_help():
    """Every command and subcommand of ``arena`` (``arena cycle --help``, ``arena season
    backfill --help``, ...) in one fresh process, checked after each."""
    code = f"""
import contextlib, io, json, sys
from arena.cli import app, main
commands = [[]]
for name in sorted(n for n in app if not n.startswith("-")):
    commands.append([name])
    commands += [[name, sub] for sub in sorted(n for n in app[name] if not n.startswith("-"))]
loaded = {{}}
for words in commands:
    with contextlib.redirect_stdout(io.StringIO()):
        code = main([*words, "--help"])
    assert code == 0, (words, code)
    loaded[" ".join(words) or "arena"] = {_loaded(tuple(set(HEAVY) - set(DRAWS_HELP)))}
print(json.dumps(loaded))
"""
    loaded = _run(code)
    assert {"cycle", "season backfill", "ingest", "replay", "serve"} <= set(loaded)
    assert {command: mods for command, mods in loaded.items() if mods} == {}
