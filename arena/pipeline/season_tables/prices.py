"""The season's ``cycle_prices`` table: the price every symbol had at every cycle
(:func:`arena.market.asof.cycle_prices`: the engine's own marks), continued from the stored
state's latest trusted checkpoint; and the tradable assets' prices, wide, that the zero-skill
and matched players play on."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.market.asof import NoPrices, Providers, cycle_prices
from arena.pipeline.season_state import (
    PriceCheckpoint,
    SeasonReads,
    SeasonState,
    changed_assets,
    changed_cycle,
    price_sources,
)
from arena.pipeline.season_tables.checkpoints import and_others, checkpoint_counts, minute
from arena.pipeline.season_tables.store import AnalyticsError


@dataclass
class SeasonPrices:
    """The ``cycle_prices`` table; how many of its cycles were kept from the stored state (and,
    if none, why); where each asset's prices come from; the checkpoints the build leaves."""

    table: pd.DataFrame
    kept: int
    why: str
    since: dict[str, int | None]
    checkpoints: list[PriceCheckpoint]


def season_prices(lake: Lake, provider: Providers, universe: Universe,
                  times: Sequence[pd.Timestamp], reads: SeasonReads,
                  stored: SeasonState | None, why: str) -> SeasonPrices:
    """The ``cycle_prices`` table of ``times``: the rows of the cycles of the latest stored
    checkpoint whose price bars are unchanged are kept, the later cycles' are read
    (:func:`~arena.market.asof.cycle_prices`: a cycle's price depends on its own cycle only,
    so a table read in parts equals one read whole); all of them without such a checkpoint."""
    intervals = reads.price_intervals()
    counts = checkpoint_counts(len(times))
    ends = [times[n - 1] for n in counts]
    kept, ahead = 0, None
    if stored is not None and stored.intervals != intervals:
        changed = changed_assets(stored.intervals, intervals)
        why = f"the cycle prices of {changed[0]} come from another interval now"
    elif stored is not None:
        points = sorted(stored.prices, key=lambda p: p.cycles, reverse=True)
        why = "the stored state holds no cycle prices to continue from"
        digests = reads.price_digests([stored.cycles[p.cycles - 1] for p in points] + ends,
                                      stored.since)
        ahead = digests[len(points):]
        for point, now in zip(points, digests, strict=False):
            at = stored.cycles[point.cycles - 1]
            reason = changed_cycle(stored.cycles, times, point.cycles)
            if reason is None and (changed := changed_assets(point.bars, now)):
                reason = (f"the {intervals.get(changed[0], 'price')} bars of {changed[0]} up to "
                          f"{minute(at)} changed since they were stored{and_others(changed)}")
            if reason is None:
                kept = point.cycles
                break
            if point is points[0]:  # the latest checkpoint's reason: the one to say
                why = reason
    parts = []
    if kept:
        assert stored is not None
        old = stored.table("cycle_prices")
        parts.append(old[old["cycle_at"] <= times[kept - 1]])
    if kept < len(times):
        try:
            parts.append(cycle_prices(lake, provider, universe, times[kept:]))
        except NoPrices as exc:
            if not kept:
                raise AnalyticsError(str(exc)) from exc
    table = parts[0] if len(parts) == 1 and not kept else pd.concat(parts, ignore_index=True)
    if kept:
        table = table.sort_values(["cycle_at", "symbol"]).reset_index(drop=True)
    since = price_sources(table, times, intervals)
    if ahead is None or stored is None or since != stored.since:
        ahead = reads.price_digests(ends, since)
    return SeasonPrices(table, kept, "" if kept else why, since,
                        [PriceCheckpoint(n, d) for n, d in zip(counts, ahead, strict=True)])


def tradable_prices(prices: pd.DataFrame, universe: Universe) -> pd.DataFrame:
    """The cycle prices of the tradable assets, wide: a row per cycle, a column per symbol
    (NaN where a symbol has no price of that cycle) - what the zero-skill and matched players
    play on."""
    wide = prices.pivot(index="cycle_at", columns="symbol", values="price")
    return wide[[a.symbol for a in universe.tradable if a.symbol in wide.columns]]
