"""The season's tables per asset: each tradable asset's zero-skill distribution (a
``luck_ceiling`` row) and its reference rules (``reference_rules`` rows), on the grid the lake
covers the season with; and the pairwise ``correlations`` of the assets' daily returns."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from arena.core.runner import step
from arena.core.universe import Asset, Universe
from arena.data.lake import Lake, PartitionKey
from arena.market.asof import Providers, provider_of
from arena.market.clocks import Clock, asset_clock
from arena.pipeline.season_ingest import history_start
from arena.pipeline.season_tables.store import BAND
from arena.scoring.correlations import return_correlations
from arena.scoring.rules_table import rules_table
from arena.scoring.scorer import asset_cost_rate

CORRELATION_DAYS = 90  # daily returns up to the season's end that the correlation matrix uses


def asset_tables(lake: Lake, provider: str, asset: Asset, start: pd.Timestamp, end: pd.Timestamp,
                 *, players: int, seed: int) -> tuple[dict[str, object], pd.DataFrame]:
    """(luck-ceiling row, reference-rules rows) of one asset over the season ``[start, end)``,
    on the grid the lake covers the season with (:func:`~arena.market.clocks.asset_clock`), the
    rules warmed up on that grid's bars from :func:`~arena.pipeline.season_ingest.history_start`
    of the asset's calendar (the longest rule's window): a rule the stored bars before ``start``
    do not cover is ``insufficient_history``."""
    grid = asset_clock(lake, provider, asset, start, end).grid
    bars = lake.read_bars(PartitionKey(provider, grid, asset.symbol),
                          history_start(start, (asset.calendar,)), end)
    clock = Clock(asset.symbol, asset.calendar, grid, bars)
    rate = asset_cost_rate(asset)
    table, ruler = rules_table(clock.bars, cost_rate=rate, periods_per_year=clock.periods_per_year,
                               start=start, players=players, seed=seed, calendar=asset.calendar)
    ceiling = {"symbol": asset.symbol, "asset_class": asset.asset_class, "grid": clock.grid,
               "bars": ruler.bars, "decision_steps": ruler.steps, "step": ruler.step,
               "draw": ruler.draw, "players": ruler.players, "seed": seed, "cost_rate": rate,
               **{f"q{round(q * 100):02d}": ruler.quantile(q) for q in BAND},
               "mean": float(np.mean(ruler.returns)), "ceiling": ruler.ceiling}
    table.insert(0, "symbol", asset.symbol)
    return ceiling, table


@step("luck-{asset.symbol}")
def asset_luck(asset: Asset, lake: Lake, provider: Providers, start: pd.Timestamp,
               end: pd.Timestamp, players: int, seed: int
               ) -> tuple[dict[str, object], pd.DataFrame] | str:
    """:func:`asset_tables` of one asset as a step of its own; an asset without bars in the
    season gives the reason (a string), not an error, so one such asset fails no fan-out."""
    try:
        return asset_tables(lake, provider_of(provider, asset), asset, start, end,
                            players=players, seed=seed)
    except (LookupError, ValueError) as exc:
        return str(exc) or type(exc).__name__


def correlations(lake: Lake, provider: Providers, universe: Universe, end: pd.Timestamp,
                 days: int = CORRELATION_DAYS) -> pd.DataFrame:
    """Long table ``symbol_a, symbol_b, correlation, observations``: Pearson correlation of daily
    close-to-close returns over the ``days`` before ``end``, on the dates both assets traded
    (:func:`return_correlations`)."""
    return return_correlations(daily_closes(lake, provider, universe.tradable,
                                            end - pd.Timedelta(days=days), end))


def daily_closes(lake: Lake, provider: Providers, assets: Iterable[Asset], start: pd.Timestamp,
                 end: pd.Timestamp) -> dict[str, pd.Series]:
    """Each asset's daily closes of ``[start, end)`` in the lake, by UTC date (an asset without
    daily bars there is left out)."""
    closes = {}
    for asset in assets:
        bars = lake.read_bars(PartitionKey(provider_of(provider, asset), "1d", asset.symbol),
                              start, end)
        if len(bars):
            closes[asset.symbol] = bars.set_index(
                pd.DatetimeIndex(bars["timestamp"]).tz_convert("UTC").normalize())["close"]
    return closes
