"""A contest: a season whose single-asset tracks are the game, with its own rules.

A season made by ``arena contest init`` carries a :class:`Contest` in its ``season.json``
(``contest``): the assets entrants hold positions in (the season's symbols), the cost each
asset's track and zero-skill players pay per unit of position change (``fees``), the share of
an asset's season a track must cover to be ranked (``eligibility``), the prize for each place
among an asset's eligible tracks (``prizes``), and the correlation check the assets passed when
the contest was made (``max_correlation`` over ``correlation_days`` of daily returns before its
start; the matrix is kept in ``correlations``). FINCHAL's contest (:func:`finchal`) is the
default: NVIDIA, Bitcoin, gold and crude oil (the ETFs GLD and USO, whose prices an entrant can
trade, rather than futures, whose continuous series splice contracts), 122 days, 0.06% for
Bitcoin, 0.03% for oil, 0.02% for the others, 70% eligibility, $500 for the best eligible track
of each asset.

Prizes follow places: the eligible tracks of an asset ranked by return (1 = best); tracks that
tie share the prizes of the places they take together, equally (two tracks tied first share
the first and second prizes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from arena.core.errors import UnusableInput, validation_refusal
from arena.core.universe import Universe, load_universe, normalise_symbol
from arena.scoring.correlations import return_correlations
from arena.scoring.scorer import default_cost_rate

FINCHAL = "FINCHAL"
FINCHAL_DAYS = 122
FINCHAL_FEES = {"NVDA": 0.0002, "BTC": 0.0006, "GLD": 0.0002, "USO": 0.0003}
FINCHAL_PRIZE = 500.0
MAX_CORRELATION = 0.70  # the documents cut DOGE (0.763 with BTC) and a chip ETF (0.797 with NVDA)
CORRELATION_DAYS = 3 * 365  # the daily history the check reads before the contest's start
MAX_FEE = 0.01  # 1% per unit of position change: anything above is a typo


class ContestError(UnusableInput, ValueError):
    """A contest's rules that cannot be played (each problem named)."""


class Contest(BaseModel):
    """One contest's rules (see the module docstring); validated where made or read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = FINCHAL
    fees: dict[str, float]
    eligibility: float = 0.70
    prizes: dict[str, tuple[float, ...]] = Field(default_factory=dict)
    currency: str = "USD"
    max_correlation: float = MAX_CORRELATION
    correlation_days: int = CORRELATION_DAYS
    correlations: dict[str, float] = Field(default_factory=dict)  # "A|B" -> at the check

    def __init__(self, **data: object) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise validation_refusal(exc, ContestError, f"contest {data.get('name', FINCHAL)!r}"
                                     ) from None

    @model_validator(mode="after")
    def _check(self) -> Contest:
        problems = []
        if not self.fees:
            problems.append("a contest needs at least one asset (fees: symbol -> rate)")
        for symbol, rate in self.fees.items():
            if not 0.0 <= rate <= MAX_FEE:
                problems.append(f"fees: {symbol}: {rate} is not a rate in [0, {MAX_FEE}]")
        if not 0.0 < self.eligibility <= 1.0:
            problems.append(f"eligibility must be a share in (0, 1], not {self.eligibility}")
        for symbol, places in self.prizes.items():
            if symbol not in self.fees:
                problems.append(f"prizes: {symbol} is not an asset of the contest")
            if any(p < 0 for p in places):
                problems.append(f"prizes: {symbol}: a prize cannot be negative")
        if not 0.0 < self.max_correlation <= 1.0:
            problems.append(f"max_correlation must be in (0, 1], not {self.max_correlation}")
        if self.correlation_days < 30:
            problems.append(f"correlation_days must be at least 30, not {self.correlation_days}")
        if problems:
            raise ContestError(f"contest {self.name!r}: " + "; ".join(problems))
        return self

    @property
    def assets(self) -> tuple[str, ...]:
        return tuple(self.fees)

    @property
    def prize_pool(self) -> float:
        return sum(sum(places) for places in self.prizes.values())


def finchal(assets: Sequence[str] | None = None, *,
            prizes: Sequence[float] = (FINCHAL_PRIZE,),
            fees: Mapping[str, float] | None = None, universe: Universe | None = None,
            **rules: object) -> Contest:
    """FINCHAL's contest (the module docstring), or its rules over other ``assets``: an asset
    pays the rate ``fees`` gives it, else FINCHAL's, else the default of its calendar
    (:func:`~arena.scoring.scorer.default_cost_rate`); ``prizes`` by place among each asset's
    eligible tracks (a zero is no prize); ``rules``: the other fields of :class:`Contest`."""
    universe = universe or load_universe()
    chosen = [universe[normalise_symbol(s)].symbol for s in (assets or FINCHAL_FEES)]
    given = {normalise_symbol(s): r for s, r in (fees or {}).items()}
    rates = {s: float(given.get(s, FINCHAL_FEES.get(s, default_cost_rate(universe[s].calendar))))
             for s in chosen}
    return Contest(fees=rates, prizes={s: tuple(p for p in prizes if p) for s in chosen},
                   **rules)  # type: ignore[arg-type]


def prizes_by_place(places: Sequence[int | None], prizes: Sequence[float]) -> list[float]:
    """Each track's prize from its place (``None``: not ranked, no prize) and the prize list of
    its asset: tracks tied at a place share, equally, the prizes of the places they take."""
    out = []
    for place in places:
        if place is None:
            out.append(0.0)
            continue
        tied = sum(1 for p in places if p == place)
        taken = prizes[place - 1:place - 1 + tied]
        out.append(sum(taken) / tied)
    return out


# ------------------------------------------------------------------------ the correlation check
MIN_OVERLAP = 60  # dates with a return of both assets a pair's correlation needs


@dataclass(frozen=True)
class CorrelationCheck:
    """The contest's assets' pairwise correlations of daily returns (:func:`check_correlations`):
    the matrix, each pair's number of dates, and what refuses the contest: pairs above the
    bound (by absolute value: a pair that moves opposite is as much one bet as a pair that
    moves together), assets without enough history."""

    matrix: pd.DataFrame
    overlap: pd.DataFrame
    max_correlation: float
    too_close: tuple[tuple[str, str, float], ...]
    too_short: tuple[str, ...]
    unmeasured: tuple[tuple[str, str], ...] = ()

    @property
    def passed(self) -> bool:
        return not (self.too_close or self.too_short or self.unmeasured)

    def pairs(self) -> dict[str, float]:
        """Each pair's correlation, ``"A|B"`` in the matrix's order (kept with the contest)."""
        names = list(self.matrix.columns)
        return {f"{a}|{b}": round(float(self.matrix.loc[a, b]), 6)
                for i, a in enumerate(names) for b in names[i + 1:]
                if pd.notna(self.matrix.loc[a, b])}

    def table(self) -> str:
        """The matrix as printed: one row per asset, two decimals."""
        names = list(self.matrix.columns)
        width = max(6, *(len(n) for n in names))
        lines = [" " * width + "".join(f"{n:>{width + 1}}" for n in names)]
        for a in names:
            cells = "".join(f"{'':>{width + 1}}" if pd.isna(v) else f"{v:>{width + 1}.2f}"
                            for v in self.matrix.loc[a])
            lines.append(f"{a:<{width}}{cells}")
        return "\n".join(lines)

    def refusal(self) -> str:
        """Why the contest is refused (empty when it passed)."""
        parts = [f"{a} and {b} correlate {c:+.3f} (above {self.max_correlation:g} in absolute "
                 "value: entries on both would be one bet twice)" for a, b, c in self.too_close]
        parts += [f"{s} has fewer than {MIN_OVERLAP} daily returns in the history read"
                  for s in self.too_short]
        parts += [f"{a} and {b} share fewer than {MIN_OVERLAP} dates with a return of both"
                  for a, b in self.unmeasured]
        return "; ".join(parts)


def check_correlations(closes: Mapping[str, pd.Series], assets: Sequence[str],
                       max_correlation: float) -> CorrelationCheck:
    """The correlation check of ``assets`` over their daily ``closes`` (by date): Pearson
    correlation of each asset's returns between its consecutive trading days, on the dates two
    assets both have one (:func:`~arena.pipeline.season_tables.assets.return_correlations`,
    the season's own ``asset_correlations``)."""
    long = return_correlations({s: closes[s] for s in assets if s in closes},
                               min_periods=MIN_OVERLAP)
    matrix = pd.DataFrame(np.nan, index=list(assets), columns=list(assets))
    overlap = pd.DataFrame(0, index=list(assets), columns=list(assets))
    for row in long.itertuples(index=False):
        matrix.loc[row.symbol_a, row.symbol_b] = row.correlation
        overlap.loc[row.symbol_a, row.symbol_b] = row.observations
    names = list(assets)
    too_close = tuple((a, b, float(matrix.loc[a, b])) for i, a in enumerate(names)
                      for b in names[i + 1:]
                      if pd.notna(matrix.loc[a, b]) and abs(matrix.loc[a, b]) > max_correlation)
    too_short = tuple(a for a in names if overlap.loc[a, a] < MIN_OVERLAP)
    unmeasured = tuple((a, b) for i, a in enumerate(names) for b in names[i + 1:]
                       if a not in too_short and b not in too_short
                       and overlap.loc[a, b] < MIN_OVERLAP)
    return CorrelationCheck(matrix, overlap, max_correlation, too_close, too_short, unmeasured)
