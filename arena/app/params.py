"""Parameters as a command line or a flow run gives them, read once at the edge.

A time or a day comes in as text (``--at 2026-12-01T16:00Z``, a flow's ``at`` parameter) and
leaves as a UTC :class:`pandas.Timestamp` or a :class:`datetime.date`; what cannot be read is a
:class:`~arena.core.errors.BadArgument` naming the argument and a value that works, never a
parser's traceback.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import pandas as pd

from arena.app.handle import Clock, fixed_clock, wall_clock
from arena.core.errors import BadArgument

TIME_EXAMPLE = "2026-12-01T16:00Z"
DAY_EXAMPLE = "2026-12-01"


def parse_time(value: str | dt.datetime | pd.Timestamp, name: str) -> pd.Timestamp:
    """``value`` as a UTC timestamp (a naive time is UTC); :class:`BadArgument` naming
    ``name`` when it is no time."""
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError, OverflowError):
        stamp = pd.NaT
    if stamp is pd.NaT or (isinstance(value, str) and not any(c.isdigit() for c in value)):
        raise BadArgument(f"{name} {value!r} is not a date or time: give an ISO-8601 time in "
                          f"UTC, e.g. {TIME_EXAMPLE} (or a day, {DAY_EXAMPLE})")
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def optional_time(value: str | None, name: str) -> pd.Timestamp | None:
    return None if value is None or value == "" else parse_time(value, name)


def parse_day(value: str | dt.date, name: str) -> dt.date:
    """``value`` as a calendar day (``YYYY-MM-DD``); :class:`BadArgument` naming ``name``."""
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(value.strip())
    except ValueError:
        raise BadArgument(f"{name} {value!r} is not a day: give an ISO date, e.g. "
                          f"{DAY_EXAMPLE}") from None


def clock_of(now: str | None, name: str = "now") -> Clock:
    """The wall clock, or a fixed one at ``now`` (a rehearsal's or a test's)."""
    return wall_clock if now is None else fixed_clock(parse_time(now, name))


def symbol_list(value: str | Sequence[str] | None) -> list[str] | None:
    """Comma-separated symbols (``ETH,AAPL``) or a list of them; None: the default season's assets."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    symbols = [s.strip() for s in items if s.strip()]
    return symbols or None


def at_least(value: int, minimum: int, name: str) -> int:
    if value < minimum:
        raise BadArgument(f"{name} must be at least {minimum}, not {value}")
    return value
