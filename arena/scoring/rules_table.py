"""The reference-rules table of one asset, and the files the scoring commands read.

Rules see the whole history (indicators need warm-up); the table scores them from ``start`` on
(the display window) with the same scorer, costs and clock as the zero-skill players it is read
against.

A rule whose window the history before ``start`` (when one is given) does not cover (fewer bars than its warm-up,
:func:`arena.scoring.reference_rules.warmup_bars`: a new listing, a lake ingested too short) has
no result: its row says ``insufficient_history`` with the bars it had and needed, and its
return, turnover, fees, percentile, rank score and rank are empty (NaN), so it is in no rank
and no chart. A flat warm-up scored as a 0% return would read as a result of the rule.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from arena.core.sessions import utc
from arena.scoring.asset_luck import DEFAULT_PLAYERS, LuckResult, luck
from arena.scoring.reference_rules import BASELINES, RULES, checked_once, warmup_bars
from arena.scoring.scorer import ScorerInputError, score
from arena.scoring.self_check import ensure_self_checked

SCORED = "scored"
INSUFFICIENT_HISTORY = "insufficient_history"  # fewer bars before the start than the rule's window


def load_positions(path: str | Path, bars: pd.DatetimeIndex) -> pd.Series:
    """A ``timestamp,position`` CSV on the price bars: a position holds from the bar it is set at
    until it is replaced; bars before the first position have none (flat, not valid)."""
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ScorerInputError(f"positions file {path}: {exc}") from exc
    if list(frame.columns[:2]) != ["timestamp", "position"]:
        raise ScorerInputError(f"positions file {path} needs the columns timestamp,position")
    ts = pd.to_datetime(frame["timestamp"], utc=True, errors="coerce")
    values = pd.to_numeric(frame["position"], errors="coerce")
    if ts.isna().any() or values.isna().any() or not np.isfinite(values).all():
        bad = int((ts.isna() | values.isna()).idxmax()) + 2
        raise ScorerInputError(f"positions file {path}, line {bad}: not a time and a number")
    series = pd.Series(values.to_numpy(), index=pd.DatetimeIndex(ts).as_unit("us"))
    unknown = series.index.difference(bars)
    if len(unknown):
        raise ScorerInputError(f"positions file {path}: {len(unknown)} timestamp(s) are not bars "
                               f"of the price file, first {unknown[0].isoformat()}")
    if series.index.has_duplicates:
        raise ScorerInputError(f"positions file {path}: a bar has two positions")
    return series.reindex(bars).ffill()


def rules_table(bars: pd.DataFrame, *, cost_rate: float, periods_per_year: float,
                start: object | None = None, players: int = DEFAULT_PLAYERS, seed: int = 0,
                calendar: str = "24/7") -> tuple[pd.DataFrame, LuckResult]:
    """Every reference rule and baseline scored from ``start`` on, with its place among
    zero-skill players on the same bars (rank among rules: 1 = best return, among the scored
    ones). ``status`` is :data:`SCORED`, or :data:`INSUFFICIENT_HISTORY` when the
    ``history_bars`` before ``start`` are fewer than the rule's ``needed_bars`` (see the module
    docstring). Without ``start`` the whole of ``bars`` is scored, each rule's warm-up inside
    it (``history_bars`` 0, every row scored), as the caller asked."""
    ensure_self_checked()
    closes = bars.set_index("timestamp")["close"]
    try:
        keep = closes.index >= utc(start) if start is not None else np.ones(len(closes), bool)
    except (ValueError, TypeError) as exc:
        raise ScorerInputError(f"--start {start!r} is not a date") from exc
    if keep.sum() < 2:
        raise ScorerInputError(f"fewer than two bars on or after {start}")
    shown = closes[keep]
    history = int(len(closes) - keep.sum())  # the display window is the tail of the bars
    ruler = luck(shown, players=players, seed=seed, cost_rate=cost_rate, calendar=calendar)
    rows = []
    with checked_once(bars):  # the bars are checked once for all the rules
        for kind, table in (("rule", RULES), ("baseline", BASELINES)):
            for name, rule in table.items():
                needed = warmup_bars(name, periods_per_year=periods_per_year)
                known = {"status": SCORED, "history_bars": history, "needed_bars": needed}
                if start is not None and history < needed:
                    rows.append({"rule": name, "kind": kind, "return": np.nan,
                                 "turnover": np.nan, "fees": np.nan, "percentile": np.nan,
                                 "rank_score": np.nan, **known, "status": INSUFFICIENT_HISTORY})
                    continue
                positions = pd.Series(rule(bars, periods_per_year=periods_per_year).to_numpy(),
                                      index=closes.index)[keep]
                result = score(shown, positions, cost_rate)
                p, rank = ruler.place(result.total_return)
                rows.append({"rule": name, "kind": kind, "return": result.total_return,
                             "turnover": result.turnover, "fees": result.fees, "percentile": p,
                             "rank_score": rank, **known})
    table = pd.DataFrame(rows)
    is_rule = (table["kind"] == "rule") & (table["status"] == SCORED)
    table["rank"] = np.nan
    table.loc[is_rule, "rank"] = table.loc[is_rule, "return"].rank(ascending=False, method="min")
    return table, ruler
