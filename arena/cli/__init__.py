"""The ``arena`` command, on cyclopts (as Prefect's own CLI is).

One module per command group (``arena/cli/<group>.py``), each registered here by its import path
and loaded only when its command runs, so ``arena --help`` imports none of them (nor pandas,
Prefect, dbt, litellm or Great Expectations). A command translates: it reads its arguments
(:mod:`arena.app.params`), calls one job of :mod:`arena.app` and renders the result. Exit codes
come from one place, :func:`main`: 0 done; 2 unusable input (a wrong argument, a lake without a
season, a cycle that is not due: an :class:`~arena.core.errors.UnusableInput`); 1 failed (a
vendor, a model or a build: a :class:`~arena.core.errors.Failed`, or a command's own result,
such as an asset that did not publish); ``128 + signum`` when stopped by SIGINT or SIGTERM (130,
143), each step's cleanup having run.

Whatever goes wrong, the user reads one line on stderr, never a traceback: a value the command
line refuses names the option and its range (:func:`refusal`); a disk that refuses a write - the
lake's, or a log's such as dbt's in ``<lake>/dbt/logs`` - ends the command with the errno and the
file (:func:`disk_errors_stop`: a log handler's failed write would otherwise print logging's
traceback for every line and carry on).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import cyclopts

from arena.cli._options import Within
from arena.core.errors import ArenaError
from arena.core.settings import Interrupted, SettingsError, prepare_process, stop_signals

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2

app = cyclopts.App(
    name="arena", help="An LLM trading arena with a luck ceiling.", version_flags=[],
    help_flags=["--help", "-h"], default_parameter=cyclopts.Parameter(negative=()),
    suppress_keyboard_interrupt=False)  # main() turns SIGINT and SIGTERM into 130 and 143

# Each string is resolved only when its command runs (cyclopts' lazy loading).
COMMANDS = (
    ("arena.cli.ingest:ingest", "ingest", "fetch/generate bars into the lake (validated, atomic)"),
    ("arena.cli.scoring:validate", "validate",
     "run the candle expectations on a price file or lake partition"),
    ("arena.cli.scoring:check", "check",
     "dry-run one answer against a portfolio state and prices"),
    ("arena.cli.season:season_app", "season",
     "a season: init, status, backfill or retry a cycle, add or retire contestants, publish, "
     "verify"),
    ("arena.cli.contest:contest_app", "contest",
     "a contest: single-asset tracks with their own fees, eligibility and prizes (FINCHAL's by "
     "default): init, once its assets pass the correlation check"),
    ("arena.cli.league:league_app", "league",
     "a league of seasons: status, publish (the marts across its seasons, the verdict on skill)"),
    ("arena.cli.cycle:cycle", "cycle",
     "run the season's current decision cycle (after its monitor window), only when it is sound"),
    ("arena.cli.cycle:monitor", "monitor",
     "one live monitor tick: close the positions whose invalidation level the 15-minute bars "
     "reached since the last tick"),
    ("arena.cli.serve:serve", "serve",
     "serve the season's scheduled deployments (ingest hourly, monitor every 15 minutes, cycle "
     "daily, publish nightly) until stopped"),
    ("arena.cli.lake:lake_app", "lake", "the lake's own settings: where its market data lives"),
    ("arena.cli.doors:entrant_app", "entrant",
     "outside entrants of the season (they play through arena mcp): add, list, revoke"),
    ("arena.cli.doors:mcp", "mcp",
     "serve the season to outside agents over MCP (streamable HTTP, keys as bearer tokens or in X-Finchal-Key)"),
    ("arena.cli.doors:signal_server", "signal-server",
     "serve bull/bear/risk debates to trading terminals over a WebSocket"),
    ("arena.cli.doors:signal_marts", "signal-marts",
     "build the signal server's mart: which patterns of disagreement were followed by which "
     "returns"),
    ("arena.cli.web:web", "web",
     "serve the site: live leaderboard, a page per contestant, trade, asset and day, and a "
     "JSON API, from the published marts of a season or a league"),
    ("arena.cli.replay:demo", "demo", "replay a season offline, build the marts and the report"),
    ("arena.cli.replay:replay", "replay",
     "replay a season on the synthetic market (resumable), then build the marts and the report"),
    ("arena.cli.replay:report", "report", "write the season report from the published marts"),
    ("arena.cli.scoring:score", "score", "score a position series on a price file"),
    ("arena.cli.scoring:luck", "luck", "zero-skill distribution, luck ceiling, an entrant's rank"),
    ("arena.cli.scoring:rules", "rules", "the reference-rules table of a price file"),
)
for path, name, help_text in COMMANDS:
    app.command(path, name=name, help=help_text)


def command_name(tokens: Sequence[str]) -> str:
    """How messages name the command: ``arena ingest``, ``arena season backfill``."""
    words, level = ["arena"], app
    for token in tokens:
        if token.startswith("-") or token not in {n for n in level if not n.startswith("-")}:
            break
        words.append(token)
        try:
            level = level[token]
        except Exception:  # a command that does not load names itself as far as it got
            break
    return " ".join(words)


def _stopped(name: str, signum: int) -> str:
    """The one line an interrupted command leaves on stderr."""
    what = ("nothing half-published, staging cleaned" if name == "arena ingest" else
            "nothing half-written: a record or a publication is whole or absent")
    return f"{name}: interrupted ({signal.Signals(signum).name}); {what}"


def refusal(exc: cyclopts.CycloptsError) -> str:
    """The line a value the command line refused is told with: a number out of its range, or
    no number at all, names the option and the range its :class:`~arena.cli._options.Within`
    gives (``--port must be at least 1 and at most 65,535, not 99999``; ``--port must be a
    whole number, at least 1 and at most 65,535, not 'http'``); any other refusal is cyclopts'
    own message, on one line."""
    argument = exc.argument
    ranges = [] if argument is None else [
        v for v in argument.parameter.validator or () if isinstance(v, Within)]
    if (argument is None or not ranges
            or not isinstance(exc, cyclopts.ValidationError | cyclopts.CoercionError)):
        return _shortened(" ".join(str(exc).split()))
    token = argument.tokens[0] if argument.tokens else None
    option = token.keyword if token is not None and token.keyword else argument.name
    if isinstance(exc, cyclopts.ValidationError):
        return f"{option} {exc.exception_message}"
    given = _shortened(exc.token.value if exc.token is not None else "that", 40)
    return f"{option} must be {ranges[0].kind}, {ranges[0].describe()}, not {given!r}"


def _shortened(text: str, most: int = 300) -> str:
    """``text``, its middle cut when longer than ``most`` characters (a 5,000-digit number)."""
    if len(text) <= most:
        return text
    keep = (most - 3) // 2
    return f"{text[:keep]}...{text[-keep:]}"


@contextmanager
def disk_errors_stop() -> Iterator[None]:
    """While a command runs, a log write its disk refuses (full, read-only, no permission) -
    dbt's log in ``<lake>/dbt/logs`` on a full disk - raises that error naming the log's file,
    as any other write would, instead of printing logging's traceback on stderr for every line
    and carrying on; the command then ends as one line (:func:`main`). Other failures of a log
    handler are logging's own business, as before."""
    original = logging.Handler.handleError

    def handle_error(handler: logging.Handler, record: logging.LogRecord) -> None:
        from arena.data.lake import is_disk_error  # not at start: the lake's module loads pandas

        exc = sys.exc_info()[1]
        if not isinstance(exc, OSError) or not is_disk_error(exc):
            original(handler, record)
            return
        raise OSError(exc.errno, os.strerror(exc.errno or 0),
                      getattr(handler, "baseFilename", None)) from exc

    logging.Handler.handleError = handle_error  # type: ignore[method-assign]
    try:
        yield
    finally:
        logging.Handler.handleError = original  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``arena`` command; its exit code (see the module docstring). A lake, ledger or
    log its disk refuses to write (full, read-only, no permission) is one line and ``1``."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    name = command_name(tokens)
    prepare_process()
    try:
        with stop_signals(), disk_errors_stop():
            result = app(tokens, exit_on_error=False, print_error=False,
                         result_action="return_value")
    except cyclopts.CycloptsError as exc:
        print(f"{name}: {refusal(exc)} (see {name} --help)", file=sys.stderr)
        return EXIT_UNUSABLE
    except (ArenaError, SettingsError) as exc:
        described = exc.describe() if isinstance(exc, ArenaError) else str(exc)
        print(f"{name}: {described}", file=sys.stderr)
        return exc.exit_code if isinstance(exc, ArenaError) else EXIT_UNUSABLE
    except KeyboardInterrupt as exc:  # Interrupted (SIGINT, SIGTERM), or Python's own SIGINT
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        print(_stopped(name, signum), file=sys.stderr)
        return 128 + signum
    except OSError as exc:
        from arena.data.lake import is_disk_error, os_error_text

        if not is_disk_error(exc):
            raise
        print(f"{name}: cannot write: {os_error_text(exc)}", file=sys.stderr)
        return EXIT_FAILED
    if result is None and not {"--help", "-h"} & set(tokens):  # a group without its command
        print(f"{name}: name a command (see {name} --help)", file=sys.stderr)
        return EXIT_UNUSABLE
    return EXIT_OK if result is None else int(result)


if __name__ == "__main__":
    sys.exit(main())
