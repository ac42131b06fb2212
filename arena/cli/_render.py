"""How the ``arena`` command writes: JSON, tables for the terminal, a progress bar, one line on
stderr. Only rich is imported here; everything a command renders comes to it as a job's result.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any


def _json_default(value: object) -> object:
    return str(value)


def print_json(payload: object) -> None:
    print(json.dumps(payload, indent=2, default=_json_default))


def say(command: str, message: str) -> None:
    """One line on stderr, prefixed by the command's name (``arena ingest: ...``)."""
    print(f"{command}: {message}", file=sys.stderr)


def market_text(config) -> str:
    """Whose prices a season trades on, as every output says it (SYNTHETIC, or the vendors)."""
    from arena.data.providers import provider_note

    names = config.sources
    if len(names) == 1:
        return provider_note(names[0])
    return "market data: " + ", ".join(f"{c} from {p}" for c, p in config.providers.items())


def console():
    """A rich Console on stdout: on a terminal its width and colours; otherwise 120 columns and
    no colour or style codes, so piped and captured output is stable. Cell text is never read
    as rich markup or emoji codes (a contestant name or an error may hold brackets or colons)."""
    from rich.console import Console

    tty = sys.stdout.isatty()
    return Console(file=sys.stdout, width=None if tty else 120,
                   color_system="auto" if tty else None, markup=False, emoji=False,
                   highlight=False)


def text_table(*columns: str | tuple[str, str], widths: Sequence[int] | None = None):
    """A borderless rich Table for the terminal: a header line, then one line per row, each row
    starting at the left margin with its first cell. A column is a name, or ``(name, "right")``
    for right-justified numbers, or ``(name, "wrap")`` for long text that may wrap; no other
    column ever wraps. ``widths``: each column's least width (tables printed one under the
    other line up)."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for i, column in enumerate(columns):
        name, how = (column, "") if isinstance(column, str) else column
        table.add_column(name, justify="right" if how == "right" else "left",
                         no_wrap=how != "wrap", overflow="fold",
                         min_width=None if widths is None else widths[i])
    return table


def print_leaderboard(board: Any, replicates: Any = None) -> None:
    """The leaderboard's terminal columns (:data:`arena.reporting.leaderboard.TERMINAL`), as
    the report writes them: a line naming the best contestant, then the contestants ranked
    and, apart, the rulers (the house rules, not ranked), each band under its title and with
    its own header, the columns of both as wide as either needs. A season without a contestant
    says so in its first line and shows its rulers. Then a line per replicated model of the
    ``replicates`` mart, if any: its median and spread beside the zero-skill band."""
    from rich.cells import cell_len

    from arena.reporting.layout import kind_class
    from arena.reporting.leaderboard import (
        BAND_TITLES,
        REPLICATES_TITLE,
        replicate_lines,
        summary_line,
        terminal_bands,
    )
    from arena.reporting.roles import RULER

    columns, bands = terminal_bands(board)
    headers = {role: [RULER if role == RULER and c.key == "contestant" else c.header
                      for c in columns] for role, _ in bands}
    widths = [max(cell_len(text) for role, rows in bands
                  for text in (headers[role][i], *(row[i] for row in rows)))
              for i in range(len(columns))]
    out = console()
    print()
    out.print(summary_line(board))
    for role, rows in bands:
        if not rows:  # no contestant: the summary line says so
            continue
        print()
        out.print(BAND_TITLES[role])
        shown = text_table(*((h, "right") if kind_class(c.kind) == "num" else h
                             for c, h in zip(columns, headers[role], strict=True)),
                           widths=widths)
        for row in rows:
            shown.add_row(*row)
        out.print(shown)
    lines = replicate_lines(replicates)
    if lines:
        print()
        out.print(REPLICATES_TITLE)
        for line in lines:
            out.print(line, highlight=False)


@contextmanager
def refused(consequence: str) -> Iterator[None]:
    """Inside, a refusal (an :class:`~arena.core.errors.UnusableInput`) says what it left as it
    was (``nothing recorded``, ``nothing changed``), unless it says so itself."""
    from arena.core.errors import UnusableInput

    try:
        yield
    except UnusableInput as exc:
        exc.consequence = exc.consequence or consequence
        raise


@contextmanager
def progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A rich progress bar on stderr for long work (None when not a terminal): the callback
    takes a stage, what is done and the total."""
    if not enabled:
        yield None
        return
    from rich.progress import Progress

    tasks: dict[str, Any] = {}
    with Progress(transient=True, console=_stderr()) as bar:

        def notify(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield notify


def _stderr():
    from rich.console import Console

    return Console(file=sys.stderr)
