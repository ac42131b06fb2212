"""The season's leaderboard, defined once: its columns (key, header, kind of number), its order
and its two bands, read by the season report's table, the terminal's table (``arena replay``,
``arena demo``) and the season flow's table artifact, so the three cannot drift apart.

Rows come from the ``leaderboard`` mart (one per player of the season). The contestants come
first, by place (1 is the best return; ties share a place), then by name; then, in a band of
their own, the rulers - the house rules, which play beside the contestants as the yardstick and
have no place (:mod:`arena.reporting.roles`) - by return, then by name. "The best" anywhere is
the best contestant (:func:`best_contestant`); a season of house rules only has none, and every
output says so (:func:`summary_line`).

A replicated model (a roster entry with ``replicates: N``: its instances play as contestants
``<name>-r1`` ..) is also read as one, from the ``replicates`` mart: its median return and the
spread of its instances' returns, beside the zero-skill players' returns at the season's end
(:data:`REPLICATES`, :func:`replicate_lines`), in the season report and on the terminal.

Two percentiles stand beside each return: the luck percentile (``zero_skill_percentile``: the
place among the arena's zero-skill players, long or short 50/50 - so it includes the market's
direction) and the skill percentile (``skill_percentile``: the place among the contestant's
matched players, its own book on assets relabelled at random - direction and exposure held fixed;
missing when it opened no position).

Returns, excess returns, the percentiles, the drawdown and the win rate are fractions (0.05
is 5%); ``fills`` counts fills (opens, adds and closes), not round trips; ``cost_usd`` is USD
(missing when no call carries a price: the mart's ``pricing`` says whether it is ``unpriced`` -
a local model without the roster's ``prices:`` - or has ``no_calls``); ``sharpe`` is annualised
(missing with too few returns). The terminal writes every value with the report's
own :func:`~arena.reporting.layout.fmt` kinds; the artifact keeps the values, JSON-safe.
"""

from __future__ import annotations

import datetime as dt
import math
from numbers import Integral, Real

import numpy as np
import pandas as pd

from arena.reporting.layout import Column, fmt, missing, records
from arena.reporting.roles import CONTESTANT, ROLES, RULER

LEADERBOARD: tuple[Column, ...] = (
    Column("place", "#", "int"),
    Column("contestant", "contestant"),
    Column("total_return", "return", "return"),
    Column("zero_skill_percentile", "luck pct", "share"),
    Column("rank_score", "rank score", "score"),
    Column("skill_percentile", "skill pct", "share"),
    Column("sharpe", "Sharpe", "score"),
    Column("max_drawdown", "max DD", "drawdown"),
    Column("round_trips", "closed trips", "int"),
    Column("win_rate", "win rate", "share"),
    Column("fills", "fills", "int"),
    Column("excess_vs_btc", "vs BTC", "return"),
    Column("excess_vs_spy", "vs SPY", "return"),
    Column("excess_vs_universe", "vs universe", "return"),
    Column("cost_usd", "calls $", "usd"),
)
TERMINAL: tuple[str, ...] = ("place", "contestant", "total_return", "zero_skill_percentile",
                             "rank_score", "skill_percentile", "sharpe", "max_drawdown", "fills",
                             "cost_usd")
_BY_KEY = {c.key: c for c in LEADERBOARD}


# a replicated model across its instances, beside the zero-skill band (the replicates mart)
REPLICATES: tuple[Column, ...] = (
    Column("replicate_of", "model"),
    Column("instances", "instances", "int"),
    Column("median_return", "median return", "return"),
    Column("min_return", "lowest", "return"),
    Column("max_return", "highest", "return"),
    Column("return_iqr", "IQR", "drawdown"),
    Column("median_zero_skill_percentile", "median luck pct", "share"),
    Column("skill_percentile", "model skill pct", "share"),
    Column("zero_skill_q05_return", "zero-skill 5th pct", "return"),
    Column("zero_skill_median_return", "zero-skill median", "return"),
    Column("zero_skill_q95_return", "zero-skill 95th pct", "return"),
)
REPLICATES_TITLE = "replicated models: median and spread of the returns across their instances"

# the bands' titles, as the terminal and the report's tables caption them
BAND_TITLES = {CONTESTANT: "contestants",
               RULER: "rulers: the house rules, the yardstick beside the contestants (not ranked)"}
NO_CONTESTANT = "no contestant played this season, only the house rules (rulers)"


def sorted_board(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard in its order: the contestants by place, then name; then the rulers by
    return (best first), then name; the index reset and ``place`` whole numbers (missing for a
    ruler). A board without ``role`` is refused (marts built before the rulers had their band:
    a ``KeyError`` naming it)."""
    if "role" not in board.columns:
        raise KeyError("role: the leaderboard does not tell its contestants from its rulers")
    band = board["role"].map({role: i for i, role in enumerate(ROLES)})
    if band.isna().any():
        raise ValueError(f"unknown roles on the leaderboard: {sorted(set(board['role']) - set(ROLES))}")
    ordered = board.assign(_band=band, _return=-board["total_return"].astype(float)).sort_values(
        ["_band", "place", "_return", "contestant"], kind="stable", na_position="last")
    ordered = ordered.drop(columns=["_band", "_return"]).reset_index(drop=True)
    return ordered.assign(place=ordered["place"].astype("Int64"))


def bands(board: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The board's two bands, each in :func:`sorted_board` order: ``(CONTESTANT, rows)`` and
    ``(RULER, rows)``, either possibly empty."""
    ordered = sorted_board(board)
    return [(role, ordered[ordered["role"] == role].reset_index(drop=True)) for role in ROLES]


def best_contestant(board: pd.DataFrame) -> dict[str, object] | None:
    """The best contestant's row (place 1; of several, the first by name), or None when the
    board has no contestant: a ruler is never the best."""
    contestants = bands(board)[0][1]
    return records(contestants.head(1))[0] if len(contestants) else None


def best_ruler(board: pd.DataFrame) -> dict[str, object] | None:
    """The ruler with the best return (of several, the first by name), or None."""
    rulers = bands(board)[1][1]
    return records(rulers.head(1))[0] if len(rulers) else None


def summary_line(board: pd.DataFrame) -> str:
    """One line naming the best contestant (its return and luck percentile) and the best
    ruler's return beside it; a board without a contestant says so and names the best ruler."""
    leader, ruler = best_contestant(board), best_ruler(board)
    ruled = "" if ruler is None else \
        f"best ruler: {ruler['contestant']}, {fmt(ruler['total_return'], 'return')}"
    if leader is None:
        return NO_CONTESTANT + (f"; {ruled}" if ruled else "")
    return (f"best contestant: {leader['contestant']}, {fmt(leader['total_return'], 'return')} "
            f"(luck pct {fmt(leader['zero_skill_percentile'], 'share')}, skill pct "
            f"{fmt(leader.get('skill_percentile'), 'share')})"
            + (f"; {ruled}" if ruled else ""))


def replicate_lines(replicates: pd.DataFrame | None) -> list[str]:
    """One line per replicated model of the ``replicates`` mart, by name: "gpt: median return
    +1.20%, spread -0.50% to +2.90% across 3 instances (median luck pct 61.0%); zero-skill band
    -3.10% to +3.52% (5th to 95th percentile), median +0.12%". None or no row (marts built before
    replicates, a season without any): no line."""
    if replicates is None or replicates.empty:
        return []
    lines = []
    for row in records(replicates.sort_values("replicate_of", kind="stable")):
        n = int(row["instances"])  # type: ignore[call-overload]
        lines.append(
            f"{row['replicate_of']}: median return {fmt(row['median_return'], 'return')}, spread "
            f"{fmt(row['min_return'], 'return')} to {fmt(row['max_return'], 'return')} across "
            f"{n} instance{'s' if n != 1 else ''} (median luck pct "
            f"{fmt(row['median_zero_skill_percentile'], 'share')}, model skill pct "
            f"{fmt(row.get('skill_percentile'), 'share')}); zero-skill band "
            f"{fmt(row['zero_skill_q05_return'], 'return')} to "
            f"{fmt(row['zero_skill_q95_return'], 'return')} (5th to 95th percentile), median "
            f"{fmt(row['zero_skill_median_return'], 'return')}")
    return lines


def terminal_rows(board: pd.DataFrame) -> tuple[list[Column], list[list[str]]]:
    """The :data:`TERMINAL` columns and, per row of ``board`` in :func:`sorted_board` order,
    each cell as text written the report's way ("+5.23%", "79.7%", "0.69", "–" when missing:
    a ruler's place)."""
    columns = [_BY_KEY[key] for key in TERMINAL]
    rows = [[fmt(row[c.key], c.kind) for c in columns]
            for row in records(sorted_board(board)[[c.key for c in columns]])]
    return columns, rows


def terminal_bands(board: pd.DataFrame) -> tuple[list[Column], list[tuple[str, list[list[str]]]]]:
    """The :data:`TERMINAL` columns and each band's role with its rows (:func:`terminal_rows`):
    the contestants, then the rulers."""
    columns = [_BY_KEY[key] for key in TERMINAL]
    return columns, [(role, terminal_rows(rows)[1]) for role, rows in bands(board)]


def artifact_rows(board: pd.DataFrame) -> list[dict[str, object]]:
    """Per row in :func:`sorted_board` order (the contestants, then the rulers): its ``market``
    and ``role``, then every :data:`LEADERBOARD` column's value, JSON-safe (None for a missing
    value - a ruler's place -, Python numbers and strings, a time as an ISO 8601 string)."""
    keys = ["market", "role", *(c.key for c in LEADERBOARD)]
    return [{key: _json_value(row[key]) for key in keys}
            for row in records(sorted_board(board)[keys])]


def json_rows(board: pd.DataFrame) -> list[dict[str, object]]:
    """Every column of every row in :func:`sorted_board` order, JSON-safe (as
    :func:`artifact_rows`): the leaderboard the command line prints as JSON."""
    return [{key: _json_value(value) for key, value in row.items()}
            for row in records(sorted_board(board))]


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
