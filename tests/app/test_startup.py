"""Start-up: asking any command for its help loads none of the heavy libraries (the commands
import their jobs inside the command: the one place of deferred imports, with the adapters of
the integrations that take a second or more to import); importing a job loads the data stack
it works with, and none of those integrations. Structural checks of what a fresh process holds
in ``sys.modules`` and of where the code imports, never a time: benchmarks/startup.py
measures."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import arena

JOBS = ("cycle", "ingest", "monitor", "replay", "publish", "status", "serve", "verify", "handle")
HEAVY = ("pandas", "numpy", "pyarrow", "duckdb", "matplotlib", "great_expectations", "litellm",
         "prefect", "dbt", "exchange_calendars", "jinja2", "markdown_it", "rich", "yfinance",
         "ccxt", "tiktoken", "mcp", "websockets", "pydantic_settings")
DRAWS_HELP = ("rich", "markdown_it")  # what cyclopts renders a command's help with
# a second or more each to import, and a job may not need them: imported where they are called
INTEGRATIONS = ("great_expectations", "litellm", "dbt", "ccxt", "yfinance")
# and the frameworks of the doors and the flows, which no job imports
NOT_IN_A_JOB = (*INTEGRATIONS, "prefect", "mcp", "websockets", "fastapi", "uvicorn")


def _loaded(heavy: tuple[str, ...]) -> str:
    """An expression: the heavy libraries a process holds."""
    return f"sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))"


def _run(code: str) -> object:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.mark.parametrize("job", JOBS)
def test_importing_a_job_loads_no_integration_it_may_not_need(job):
    code = f"import json, sys, arena.app.{job}; print(json.dumps({_loaded(NOT_IN_A_JOB)}))"
    assert _run(code) == []


def _deferred_imports(path: Path) -> list[tuple[int, str]]:
    """The imports inside the functions of a module: (line, module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import):
                    found += [(inner.lineno, a.name) for a in inner.names]
                elif isinstance(inner, ast.ImportFrom) and inner.level == 0 and inner.module:
                    found.append((inner.lineno, inner.module))
    return found


def test_imports_are_deferred_only_at_the_edge():
    """Everywhere but the command line, a module imports what it uses at its top; the only
    imports inside a function are those of the integrations that take a second or more to
    import (and of the arena's modules built on them, ``...expectations``), in their adapters."""
    root = Path(arena.__file__).parent
    allowed = (*INTEGRATIONS, "arena.data.validation.expectations")
    deferred = {f"{path.relative_to(root)}:{line}": module
                for path in sorted(root.rglob("*.py")) if path.parts[len(root.parts)] != "cli"
                for line, module in _deferred_imports(path)
                if not module.startswith(allowed)}
    assert deferred == {}
    # the edge: a command imports its job when it runs
    assert "arena.app.cycle" in {module for _, module in _deferred_imports(root / "cli" / "cycle.py")}


def test_the_heavy_libraries_are_imported_by_name():
    """No stand-in module bound at import (``lazy_import``) anywhere in the arena."""
    root = Path(arena.__file__).parent
    users = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if "lazy_import(" in p.read_text(encoding="utf-8")]
    assert users == []


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
