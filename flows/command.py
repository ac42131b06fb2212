"""The flows' command line: ``python -m arena.flows.<job> [options]`` runs one flow, its
parameters as options read from the flow function's signature (``lake_root`` as
``--lake-root``, a yes-or-no as ``--publish``/``--no-publish``, a choice as its choices, a list
as values after the option), so ``--help`` lists them and runs nothing, and an option the flow
does not take is refused (exit 2) before anything runs. An arena error the run ends with is one
line on stderr and the error family's exit code (:mod:`arena.core.errors`: 2 nothing was done,
1 it failed), after Prefect's own log of the run.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from collections.abc import Sequence
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from prefect import Flow

from arena.core.errors import ArenaError


def _value_type(annotation: Any) -> Any:
    """``X`` of a parameter typed ``X | None`` (else the annotation itself)."""
    if get_origin(annotation) in (Union, UnionType):
        kinds = [a for a in get_args(annotation) if a is not type(None)]
        return kinds[0] if len(kinds) == 1 else str
    return annotation


def _add_option(parser: argparse.ArgumentParser, name: str, annotation: Any,
                default: Any) -> None:
    kind, flag = _value_type(annotation), f"--{name.replace('_', '-')}"
    shown = "" if default is None else f"default: {default}"
    if kind is bool:
        parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default,
                            help=f"default: {'yes' if default else 'no'}")
    elif get_origin(kind) is Literal:
        parser.add_argument(flag, choices=get_args(kind), default=default, help=shown)
    elif get_origin(kind) is list:
        parser.add_argument(flag, nargs="+", default=default, metavar=name.upper(), help=shown)
    elif kind in (int, float, str):
        parser.add_argument(flag, type=kind, default=default, metavar=name.upper(), help=shown)
    else:
        raise TypeError(f"{name}: a parameter of type {annotation} has no command-line form")


def _prog(flow: Flow[..., Any]) -> str:
    """How the module was started (``python -m arena.flows.cycle``), else the flow's name."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return f"python -m {spec.name}" if spec is not None else flow.name


def flow_parser(flow: Flow[..., Any]) -> argparse.ArgumentParser:
    """The options of ``flow``'s parameters (see the module docstring), its docstring as the
    description."""
    parser = argparse.ArgumentParser(
        prog=_prog(flow), formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(inspect.getdoc(flow.fn) or "").replace("``", "`"),
        epilog="Without PREFECT_API_URL, Prefect starts a temporary server for the run.")
    hints = get_type_hints(flow.fn)
    for name, parameter in inspect.signature(flow.fn).parameters.items():
        _add_option(parser, name, hints.get(name, str), parameter.default)
    return parser


def run_from_command_line(flow: Flow[..., Any], argv: Sequence[str] | None = None) -> Any:
    """Run ``flow`` with the parameters ``argv`` gives (default: the process's arguments) and
    return its result; ``--help`` prints the options and exits 0 without running it."""
    parser = flow_parser(flow)
    given = vars(parser.parse_args(argv))
    try:
        return flow(**given)
    except ArenaError as exc:
        print(f"{parser.prog}: {exc.describe()}", file=sys.stderr)
        raise SystemExit(exc.exit_code) from None
