"""The documentation as a user reads it after ``make run`` (the READMEs and every page of the
documentation site, :mod:`tests.docs`): every command in their code blocks runs as written (or
is named here with the reason it cannot run in a test), every SQL query runs on the demo's lake,
and the sample output is what ``arena demo`` prints.

The commands run in order, in a working directory laid out as the checkout is after ``make
run``: the demo's lake at ``data_lake/demo`` (the full 28-day demo, run once for the module) and
the shipped ``tests/fixtures`` the examples read. Inline code in the prose (templates such as
``arena season backfill YYYY-MM-DD --lake L``) is not a command.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from arena.cli import main
from tests.docs import ROOT, page, page_with, pages

READMES = pages()

# Commands of the READMEs that cannot run in an offline test, with the reason. The rest run.
NOT_RUN = {
    "make run": "the set-up this test stands in for",
    "make test": "the suite this test is part of",
    "arena ingest --source ccxt --lake data_lake/s1": "needs Binance (tests/data/test_binance.py "
                                                      "plays its recorded responses)",
    "arena ingest --source yfinance --lake data_lake/s1": "needs Yahoo (tests/data/test_yahoo.py)",
    "arena cycle --lake data_lake/s1": "needs the vendors' bars of the two ingests above",
    "arena mcp --lake data_lake/s1": "a server until Ctrl-C (tests/doors/test_mcp_server.py)",
    "arena web --lake data_lake/demo": "a server until Ctrl-C (tests/doors/test_web.py)",
    "arena web --lake leagues/main": "a server until Ctrl-C (tests/doors/test_web.py serves a "
                                     "league folder)",
    "make ui": "a server until Ctrl-C (tests/test_makefile.py starts it on another port)",
    "make serve LAKE=data_lake/s1": "a server until Ctrl-C (tests/test_makefile.py)",
    "make serve LAKE=data_lake/live": "a server until Ctrl-C (tests/test_makefile.py)",
    "make serve LAKE=data_lake/ops": "a server until Ctrl-C (tests/test_makefile.py)",
    "make run MODEL=openai/gpt-4o-mini": "needs OpenAI's key and network (tests/app/"
                                         "test_demo_model.py plays --model on a loopback model)",
    "make run MODEL=openai/my-model API_BASE=http://127.0.0.1:8000/v1":
        "needs a model server there (tests/app/test_demo_model.py starts one on loopback)",
    "arena replay --start 2026-10-01 --days 28 --roster my-roster.yaml --lake data_lake/mine":
        "the reader's own roster (tests/pipeline/test_replicates.py replays a season "
        "with a roster of its own and a loopback model)",
    "arena league replay leagues/history --from 2025-01-06 --seasons 10 --days 28":
        "ten full seasons, minutes of a test (tests/app/test_league_replay.py replays two "
        "short ones, killed and resumed)",
    "arena league replay leagues/blind --from 2025-01-06 --seasons 10 --days 28 --blind "
    "--drop bars/":
        "ten full seasons of a drop folder of one's own (tests/app/test_league_replay.py "
        "replays a blind league of two, killed and resumed; tests/app/test_replay_drop.py a "
        "blind league of a drop folder)",
    "arena league publish leagues/history --verdict-seasons historical":
        "the league of the replay above (tests/pipeline/test_league.py reads each selection)",
    "arena mcp --lake data_lake/open": "a server until Ctrl-C (tests/doors/test_mcp_server.py)",
    "arena signal-server --port 8971": "a server until Ctrl-C (tests/doors/test_signal_server.py)",
}
EXIT_CODES = {  # commands whose documented outcome is not exit 0
    # the sample answer has a decision the engine rejects
    "arena check --state tests/fixtures/check/state.json --answer tests/fixtures/check/"
    "answer.json --prices tests/fixtures/check/prices.json --at 2025-11-29T16:00:00Z": 1,
}


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


def readme_commands(path: Path) -> list[str]:
    """The commands of a README's code blocks, in order: lines that start with ``arena`` or
    ``make`` - in a block that shows a session, only those after the ``$`` prompt (the rest is
    their output) - continued over ``\\``, split at ``&&``, comments dropped; a synopsis
    (``[--opt]``, ``A | B``) is no command."""
    out: list[str] = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S):
        lines = re.sub(r"\\\n\s*", " ", block).splitlines()
        if any(line.startswith("$ ") for line in lines):
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        for line in lines:
            line = " ".join(line.split("  #")[0].split(" # ")[0].split())
            if not re.match(r"(arena|make) ", line) or re.search(r"\[|\s\|\s|\.\.\.", line):
                continue
            out += [part.strip() for part in line.split("&&")]
    return out


@pytest.fixture(scope="session")
def after_make_run(tmp_path_factory, worker_id) -> tuple[Path, str]:
    """A working directory as ``make run`` leaves the checkout, and what ``arena demo`` printed.
    Built once for the whole run: the first pytest-xdist worker to need it runs the demo, the
    others wait for it and read the same directory (the workers share the run's base folder)."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    shared = shared.parent if worker_id != "master" else shared
    cwd, printed = shared / "after_make_run", shared / "after_make_run.stdout"
    with FileLock(str(shared / "after_make_run.lock")):
        if not printed.is_file():
            cwd.mkdir(exist_ok=True)
            (cwd / "tests").mkdir(exist_ok=True)
            (cwd / "tests" / "fixtures").symlink_to(ROOT / "tests" / "fixtures")
            env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
            demo = subprocess.run([sys.executable, "-m", "arena.cli", "demo"], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=900)
            assert demo.returncode == 0, demo.stderr[-3000:]
            printed.write_text(demo.stdout, encoding="utf-8")
    return cwd, printed.read_text(encoding="utf-8")


def _masked(line: str) -> str:
    """A line of output with its timings written as ``N`` (they differ run to run)."""
    return re.sub(r"\d+(\.\d+)? s\b", "N s", line.rstrip())


@pytest.mark.parametrize("name", ["README.md", "docs/getting-started.md"])
def test_the_docs_show_what_the_demo_prints(after_make_run, name):
    """The sample after "you see:" is the demo's output, line by line (``...`` stands for lines
    left out, timings aside)."""
    _, printed = after_make_run
    sample = page(name).split("About a minute\nafter installation you see:", 1)[1]
    sample = sample.split("```\n", 2)[1]
    shown = [_masked(line) for line in sample.splitlines()]
    actual = [_masked(line) for line in printed.splitlines()]
    at = 0
    for line in shown:
        if line.strip() == "...":
            continue
        found = next((i for i in range(at, len(actual)) if actual[i] == line), None)
        assert found is not None, f"{name} shows {line!r}; the demo printed:\n{printed}"
        at = found + 1
    # the leaderboard's rows: the demo's five house rules, rulers (not ranked: no place)
    board = [line for line in shown if re.match(r"(\d+|–) ", line)]
    assert len(board) == 5 and board == [line for line in actual if re.match(r"(\d+|–) ", line)]


def test_every_readme_command_runs_as_written(after_make_run, monkeypatch, capsys):
    cwd, _ = after_make_run
    monkeypatch.chdir(cwd)
    for name in [n for n in os.environ if n.startswith("ARENA_")]:
        monkeypatch.delenv(name)
    commands = [c for path in READMES for c in readme_commands(path)]
    assert set(NOT_RUN) <= set(commands), set(NOT_RUN) - set(commands)  # no stale entry
    ran = 0
    for command in commands:
        if command in NOT_RUN:
            continue
        assert command.startswith("arena "), f"{command!r}: say why it cannot run (NOT_RUN)"
        code = main(shlex.split(command)[1:])
        err = capsys.readouterr().err
        assert code == EXIT_CODES.get(command, 0), f"{command}: exit {code}\n{err}"
        assert "Traceback" not in err, command
        ran += 1
    assert ran >= 8


def test_every_readme_query_runs_on_the_demos_lake(after_make_run, monkeypatch):
    cwd, _ = after_make_run
    monkeypatch.chdir(cwd)
    queries = [(path, sql) for path in READMES for sql in _blocks(path, "sql")]
    assert len(queries) >= 5
    # the marts' guide opens the warehouse once (its first "-- warehouse" query says how); the
    # queries that start "-- warehouse" run there, the others on the Parquet in place
    warehouse = re.search(r"-- warehouse: duckdb -readonly (\S+)",
                          page("docs/guides/marts.md")).group(1)
    for path, sql in queries:
        database = warehouse if sql.startswith("-- warehouse") else None
        with duckdb.connect(database or ":memory:", read_only=bool(database)) as con:
            rows = con.execute(sql).fetchall()
        assert rows, f"{path.name}: no rows from\n{sql}"
    text = page("docs/guides/marts.md")
    parquet = re.search(r"`(select \* from 'data_lake/demo/marts/leaderboard.parquet')`", text)
    with duckdb.connect() as con:
        assert len(con.execute(parquet.group(1)).fetchall()) == 5


def test_the_docs_open_the_warehouse_from_the_venvs_python(after_make_run):
    """The one-line opens the documentation gives for a machine without the DuckDB CLI, run as
    written (``python`` as the venv's), on the warehouse in the storage DuckDB 1.2 and later
    read."""
    from arena.pipeline.warehouse import WAREHOUSE_STORAGE_NUMBER, storage_number

    cwd, _ = after_make_run
    lines = [line for path in pages() for line in re.findall(
        r'((?:\.venv/bin/)?python -c "import duckdb; [^"]+")', path.read_text(encoding="utf-8"))]
    assert len(lines) >= 2, lines
    for line in lines:
        ran = subprocess.run([sys.executable, *shlex.split(line)[1:]], cwd=cwd,
                             capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, f"{line}\n{ran.stderr[-2000:]}"
        assert "total_return" in ran.stdout or "leaderboard" in ran.stdout, ran.stdout
    assert storage_number(cwd / "data_lake" / "demo" / "warehouse.duckdb") == (
        WAREHOUSE_STORAGE_NUMBER)


def test_readme_reason_codes_are_the_engines():
    from arena.engine.rules import REASON_CODES

    text = page_with("every rejection carries one of these codes:")
    listed = re.findall(r"`([a-z_]+)`", text.split("every rejection carries one of these codes:")[1]
                        .split("\n\n")[0])
    assert listed == list(REASON_CODES)


def test_readme_luck_example_prints_what_the_readme_shows(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    text = page_with("$ arena luck ")
    line = next(ln for ln in text.splitlines() if ln.startswith("$ arena luck "))
    assert main(line.split()[2:]) == 0
    shown = text.split(line, 1)[1].split("```", 1)[0].strip().splitlines()
    assert capsys.readouterr().out.strip().splitlines() == shown


def test_the_command_synopsis_names_every_command():
    """The commands guide's list (``arena <command> ...``) holds every command the CLI has."""
    from arena.cli import COMMANDS

    text = page("docs/guides/commands.md")
    synopsis = text.split("# The `arena` command", 1)[1].split("```", 2)[1]
    named = set(re.findall(r"^arena (\S+)", synopsis, flags=re.M)) | set(
        re.findall(r"\| (\w+)", synopsis))
    assert {name for _, name, _ in COMMANDS} <= named | {"score", "luck", "rules"}, named


def test_every_command_the_docs_name_exists():
    """Every ``arena ...`` the documentation names in its prose or its code (``arena season
    add``, ``arena season backfill|retry DATE``) is a command of the CLI: a page cannot send a
    reader to a command that does not exist."""
    from arena.cli import app

    named = 0
    for path in pages():
        text = path.read_text(encoding="utf-8")
        spans = re.findall(r"`(arena [^`]+)`", text) + [
            line for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
            for line in block.splitlines() if line.startswith(("arena ", "$ arena "))]
        for span in spans:
            words = " ".join(span.removeprefix("$ ").split()).split(" ")[1:]
            level, said = app, ["arena"]
            for word in words:
                if word.startswith(("-", "[")) or not re.fullmatch(r"[a-z|-]+", word):
                    break
                subcommands = {n for n in level if not n.startswith("-")}
                if not subcommands:
                    break
                for choice in word.split("|"):
                    assert choice in subcommands, f"{path.name}: `{span}` - no {' '.join(said)} {choice}"
                said.append(word)
                level = level[word.split("|")[0]]
            named += 1
    assert named >= 100


def test_the_demos_leaderboard_judges_every_rule_uncontaminated(after_make_run):
    """The demo's season (configured, synthetic) reaches the leaderboard's knowledge columns:
    its house rules call no model, so none is contaminated, each with the rule that decided."""
    cwd, _ = after_make_run
    with duckdb.connect() as con:
        rows = con.execute("select contaminated, contamination from "
                           f"'{cwd}/data_lake/demo/marts/leaderboard.parquet'").fetchall()
    assert rows and set(rows) == {(False, "calls no model: no training data to remember")}


def test_the_demo_builds_its_marts_from_the_parse_it_ran_beside_its_days(after_make_run):
    """``make run``'s replay parsed the dbt project in a process of its own while it played
    its days (``pipeline.warehouse.parse_ahead``), and the build read that saved parse instead
    of parsing again; its Data Docs were built beside the days too."""
    cwd, _ = after_make_run
    lake = cwd / "data_lake" / "demo"
    assert (lake / "dbt" / "logs" / "parse-ahead.log").is_file()
    log = (lake / "dbt" / "logs" / "dbt.log").read_text(encoding="utf-8")
    assert "Partial parsing enabled, no changes found, skipping parsing" in log
    assert (lake / "validation" / "docs" / "index.html").is_file()
