"""The one family of errors the arena names for its user.

Every error a user can cause or meet - a wrong argument, a lake without a season, a cycle that
is not due, a vendor that failed, a build that failed - is an :class:`ArenaError` of one of two
kinds, and the process edge (the ``arena`` command) maps the kind to an exit code in one place:

* :class:`UnusableInput` - the request cannot be carried out as asked (exit 2): nothing was
  done, and the message says what to ask instead;
* :class:`Failed` - the work was tried and did not succeed (exit 1): the message says what was
  kept and what was not.

A stage defines its own errors as subclasses of one kind (``class CycleRefused(UnusableInput)``),
so no caller lists exception classes to choose an exit code. ``consequence`` is what the edge
adds after the message, e.g. ``nothing recorded``.
"""

from __future__ import annotations


class ArenaError(Exception):
    """An error with a message for the arena's user (see the module docstring)."""

    exit_code = 1
    consequence = ""

    def describe(self) -> str:
        """The message, followed by the consequence when there is one."""
        text = str(self)
        return f"{text} ({self.consequence})" if self.consequence else text


class UnusableInput(ArenaError):
    """The request cannot be carried out as asked; nothing was done (exit 2)."""

    exit_code = 2


class Failed(ArenaError):
    """The work was tried and did not succeed (exit 1)."""

    exit_code = 1


class BadArgument(UnusableInput, ValueError):
    """A command-line argument or a flow parameter that cannot be read (a date that is no date,
    a count below one): the message names the argument and shows a value that works."""


class SettingsError(UnusableInput):
    """An ``ARENA_*`` environment variable holds a value the arena cannot use (exit 2):
    :mod:`arena.core.environment`."""


def validation_refusal(exc: Exception, kind: type[ArenaError], what: str) -> ArenaError:
    """The error a pydantic model's ``ValidationError`` ``exc`` is told as: the ``kind`` error
    its own check raised (its problems named together), else ``kind`` naming each field."""
    errors = exc.errors()  # type: ignore[attr-defined]
    for error in errors:
        found = (error.get("ctx") or {}).get("error")
        if isinstance(found, kind):
            return found
    problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in errors)
    return kind(f"{what}: {problems}")
