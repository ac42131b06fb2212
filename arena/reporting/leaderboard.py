"""The season's leaderboard, defined once: its columns (key, header, kind of number) and order,
read by the season report's table, the terminal's table (``arena replay``, ``arena demo``) and
the season flow's table artifact, so the three cannot drift apart.

Rows come from the ``leaderboard`` mart (one per contestant), ordered by place (1 is the best
return; ties share a place), then by name. Returns, excess returns, the luck percentile, the
drawdown and the win rate are fractions (0.05 is 5%); ``cost_usd`` is USD (missing when a
contestant's calls have no known price); ``sharpe`` is annualised (missing with too few
returns). The terminal writes every value with the report's own :func:`~arena.reporting.layout.fmt`
kinds; the artifact keeps the values, JSON-safe.
"""

from __future__ import annotations

import datetime as dt
import math
from numbers import Integral, Real

from arena.core.lazy import lazy_import
from arena.reporting.layout import Column, fmt, missing, records

np = lazy_import("numpy")
pd = lazy_import("pandas")

LEADERBOARD: tuple[Column, ...] = (
    Column("place", "#", "int"),
    Column("contestant", "contestant"),
    Column("total_return", "return", "return"),
    Column("zero_skill_percentile", "luck pct", "share"),
    Column("rank_score", "rank score", "score"),
    Column("sharpe", "Sharpe", "score"),
    Column("max_drawdown", "max DD", "drawdown"),
    Column("round_trips", "closed trips", "int"),
    Column("win_rate", "win rate", "share"),
    Column("trades", "fills", "int"),
    Column("excess_vs_btc", "vs BTC", "return"),
    Column("excess_vs_spy", "vs SPY", "return"),
    Column("excess_vs_universe", "vs universe", "return"),
    Column("cost_usd", "calls $", "usd"),
)
TERMINAL: tuple[str, ...] = ("place", "contestant", "total_return", "zero_skill_percentile",
                             "rank_score", "sharpe", "max_drawdown", "trades", "cost_usd")
_BY_KEY = {c.key: c for c in LEADERBOARD}


def sorted_board(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard in its order: by place, then contestant; the index reset."""
    return board.sort_values(["place", "contestant"], kind="stable").reset_index(drop=True)


def terminal_rows(board: pd.DataFrame) -> tuple[list[Column], list[list[str]]]:
    """The :data:`TERMINAL` columns and, per contestant in :func:`sorted_board` order, each
    cell as text written the report's way ("+5.23%", "79.7%", "0.69", "–" when missing)."""
    columns = [_BY_KEY[key] for key in TERMINAL]
    rows = [[fmt(row[c.key], c.kind) for c in columns]
            for row in records(sorted_board(board)[[c.key for c in columns]])]
    return columns, rows


def artifact_rows(board: pd.DataFrame) -> list[dict[str, object]]:
    """Per contestant in :func:`sorted_board` order: its ``market``, then every
    :data:`LEADERBOARD` column's value, JSON-safe (None for a missing value, Python numbers and
    strings, a time as an ISO 8601 string)."""
    keys = ["market", *(c.key for c in LEADERBOARD)]
    return [{key: _json_value(row[key]) for key in keys}
            for row in records(sorted_board(board)[keys])]


def _json_value(value: object) -> object:
    if missing(value):
        return None
    if isinstance(value, (pd.Timestamp, dt.datetime, dt.date)):
        return value.isoformat()
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        number = float(value)
        return number if math.isfinite(number) else None
    return str(value)
