"""The season's Python-side numbers, landed in the lake for dbt to turn into tables.

dbt folds the ledger in SQL; what SQL should not do - simulate thousands of zero-skill players,
run the reference rules' indicators, read the cycle prices exactly as the engine read them - is
computed here, once per season, through the same modules the rest of the product uses:

* ``season``           one row: provider, its market label (``SYNTHETIC`` or the real provider's
                       name: :func:`arena.data.providers.market_label`), first and last cycle,
                       cycle count, players, seed, and the assets left out of the per-asset
                       tables (no bars in the season)
* ``cycle_prices``     the price every symbol had at every cycle (:func:`arena.market.asof.last_price`:
                       the engine's own marks), with when it printed; NaN-free, long format
* ``arena_luck``       each arena zero-skill player's final return (portfolio-level luck)
* ``arena_luck_band``  quantiles of the zero-skill players' equity after each cycle
* ``luck_ceiling``     per asset: its zero-skill distribution over the season (quantiles, ceiling,
                       the grid, bars and decision steps it was simulated on, cost rate)
* ``reference_rules``  per asset and rule: return, turnover, fees, percentile, rank score, rank;
                       ``status`` ``insufficient_history`` (and those empty) when the asset's
                       bars before the first cycle are fewer than the rule's window
                       (``history_bars`` < ``needed_bars``: a new listing)
* ``correlations``     pairwise correlation of daily returns over :data:`CORRELATION_DAYS`

Layout: ``<lake>/analytics/<table>.parquet``, one set for the lake's season. A build writes the
whole set into a staging directory and swaps it in with two renames, so readers see the old set
or the new one, never a mix; a failed build leaves the old set as it was.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from arena.core.errors import Failed
from arena.core.lazy import lazy_import
from arena.core.runner import step
from arena.core.universe import Asset, Universe
from arena.data.lake import Lake, PartitionKey, swap_dir
from arena.data.providers import market_label
from arena.engine.portfolio import START_CASH
from arena.market.asof import NoPrices, Providers, cycle_prices, provider_label, provider_of
from arena.market.clocks import Clock, asset_clock
from arena.pipeline.season_ingest import history_start
from arena.scoring.arena_luck import arena_zero_skill
from arena.scoring.asset_luck import DEFAULT_PLAYERS
from arena.scoring.rules_table import rules_table
from arena.scoring.scorer import default_cost_rate

np = lazy_import("numpy")
pa = lazy_import("pyarrow")
pd = lazy_import("pandas")
pq = lazy_import("pyarrow.parquet")

log = logging.getLogger(__name__)

ANALYTICS_DIR = "analytics"
ARENA_PLAYERS = 1000  # arena zero-skill players (each plays the full rules engine)
CORRELATION_DAYS = 90  # daily returns up to the season's end that the correlation matrix uses
BAND = (0.05, 0.25, 0.5, 0.75, 0.95)


class AnalyticsError(Failed, RuntimeError):
    """The season's numbers cannot be built (no cycles...); nothing was replaced."""


@dataclass
class Analytics:
    """The tables of one build, and how long each step took (seconds)."""

    tables: dict[str, pd.DataFrame]
    seconds: dict[str, float] = field(default_factory=dict)


def _monitor_bars(lake: Lake, provider: Providers, assets: Sequence[Asset],
                  start: pd.Timestamp, end: pd.Timestamp) -> dict[str, pd.DataFrame]:
    return {a.symbol: lake.read_bars(PartitionKey(provider_of(provider, a), "15m", a.symbol),
                                     start, end) for a in assets}


def arena_luck_tables(prices: pd.DataFrame, universe: Universe, monitor_bars: dict[str, pd.DataFrame],
                      *, players: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """(players' final returns, equity band per cycle, rejections) of the arena zero-skill
    players on the cycle prices of the tradable assets."""
    wide = prices.pivot(index="cycle_at", columns="symbol", values="price")
    tradable = [a.symbol for a in universe.tradable if a.symbol in wide.columns]
    luck = arena_zero_skill(wide[tradable], universe, players=players, seed=seed,
                            bars=monitor_bars or None, curves=True)
    returns = pd.DataFrame({"player": np.arange(players, dtype="int64"),
                            "final_return": luck.returns})
    band = pd.DataFrame(luck.band(BAND).T, columns=[f"q{round(q * 100):02d}" for q in BAND])
    band.insert(0, "cycle_at", wide.index)
    return returns, band, luck.rejections


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
    rate = default_cost_rate(asset.calendar)
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
    close-to-close returns over the ``days`` before ``end``, on the dates both assets traded."""
    closes = {}
    for asset in universe.tradable:
        bars = lake.read_bars(PartitionKey(provider_of(provider, asset), "1d", asset.symbol),
                              end - pd.Timedelta(days=days), end)
        if len(bars):
            closes[asset.symbol] = bars.set_index(
                pd.DatetimeIndex(bars["timestamp"]).tz_convert("UTC").normalize())["close"]
    if not closes:  # no tradable asset with daily bars (a season of benchmarks only)
        return pd.DataFrame({"symbol_a": pd.Series(dtype=str), "symbol_b": pd.Series(dtype=str),
                             "correlation": pd.Series(dtype=float),
                             "observations": pd.Series(dtype="int64")})
    frame = pd.DataFrame(closes)
    # returns between consecutive trading days of each asset (a stock's Monday vs Friday)
    returns = frame.apply(lambda s: s.dropna().pct_change()).reindex(frame.index)
    corr = returns.corr(min_periods=10)
    count = returns.notna().astype(float).T @ returns.notna().astype(float)
    out = corr.stack(future_stack=True).rename("correlation").reset_index()
    out.columns = ["symbol_a", "symbol_b", "correlation"]
    out["observations"] = [int(count.loc[a, b]) for a, b in zip(out["symbol_a"], out["symbol_b"],
                                                                 strict=True)]
    return out


def build_analytics(lake: Lake, provider: Providers, universe: Universe,
                    cycles: Sequence[pd.Timestamp], *,
                    players: int = DEFAULT_PLAYERS, arena_players: int = ARENA_PLAYERS,
                    seed: int = 0, progress: Callable[[str], None] | None = None,
                    fan_out: Callable[..., list[Any]] | None = None) -> Analytics:
    """Compute every table of the module docstring for the season of ``cycles`` (``provider``:
    one, or one per asset class). ``fan_out``: a runner's ``map``, to compute the assets' luck
    and rules tables elsewhere (:func:`asset_luck` on a Dask cluster); else one after another."""
    if not cycles:
        raise AnalyticsError("a season needs at least one cycle")
    times = sorted(cycles)
    start, end = times[0], times[-1]
    say = progress or (lambda _msg: None)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    try:
        prices = cycle_prices(lake, provider, universe, times)
    except NoPrices as exc:
        raise AnalyticsError(str(exc)) from exc
    seconds["cycle_prices"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    say(f"arena luck: {arena_players:,} zero-skill players x {len(times)} cycles")
    bars = _monitor_bars(lake, provider, universe.tradable, start, end)
    bars = {s: b for s, b in bars.items() if len(b)}
    luck_returns, band, rejected = arena_luck_tables(prices, universe, bars, players=arena_players,
                                                     seed=seed)
    if rejected:
        log.warning("arena zero-skill players got %d rejections (expected none)", rejected)
    seconds["arena_luck"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ceilings, rules, missing = [], [], []
    assets = list(universe.tradable)
    if fan_out is None:
        results = []
        for i, asset in enumerate(assets, start=1):
            results.append(asset_luck(asset, lake, provider, start, end, players, seed))
            if i % 10 == 0 or i == len(assets):
                say(f"luck ceiling and reference rules: {i}/{len(assets)} assets")
    else:
        say(f"luck ceiling and reference rules: {len(assets)} assets fanned out")
        results = fan_out(asset_luck, assets, lake, provider, start, end, players, seed)
    for asset, result in zip(assets, results, strict=True):
        if isinstance(result, str):  # no bars for this asset in the season
            log.warning("no luck table for %s: %s", asset.symbol, result)
            say(f"no luck table for {asset.symbol}: {result}")
            missing.append(asset.symbol)
            continue
        ceilings.append(result[0])
        rules.append(result[1])
    seconds["asset_luck"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    corr = correlations(lake, provider, universe, end)
    seconds["correlations"] = time.perf_counter() - t0
    season = pd.DataFrame([{
        "provider": provider_label(provider, universe),
        "market": "+".join(sorted({market_label(provider_of(provider, a)) for a in universe})),
        "season_start": start,
        "season_end": end, "cycles": len(times), "arena_players": arena_players,
        "asset_players": players, "seed": seed,
        "arena_rejections": rejected, "start_cash": START_CASH,
        "assets_without_luck_tables": ",".join(missing)}])
    tables = {"season": season, "cycle_prices": prices, "arena_luck": luck_returns,
              "arena_luck_band": band, "luck_ceiling": _typed(pd.DataFrame(ceilings), luck_ceiling_schema()),
              "reference_rules": _typed(pd.concat(rules, ignore_index=True) if rules else
                                        pd.DataFrame(), reference_rules_schema()), "correlations": corr}
    return Analytics(tables, seconds)


# the per-asset tables' columns, written even when no asset has one yet (a season's first cycle:
# a zero-skill distribution needs two bars on or after it), so dbt reads typed empty tables
@cache
def luck_ceiling_schema() -> pa.Schema:
    return pa.schema(
        [(c, pa.string()) for c in ("symbol", "asset_class", "grid")]
        + [(c, pa.int64()) for c in ("bars", "decision_steps")]
        + [(c, pa.string()) for c in ("step", "draw")]
        + [(c, pa.int64()) for c in ("players", "seed")]
        + [(c, pa.float64()) for c in ("cost_rate", *(f"q{round(q * 100):02d}" for q in BAND),
                                       "mean", "ceiling")])


@cache
def reference_rules_schema() -> pa.Schema:
    return pa.schema(
        [(c, pa.string()) for c in ("symbol", "rule", "kind")]
        + [(c, pa.float64()) for c in ("return", "turnover", "fees", "percentile", "rank_score")]
        + [("status", pa.string())] + [(c, pa.int64()) for c in ("history_bars", "needed_bars")]
        + [("rank", pa.float64())])


def _typed(frame: pd.DataFrame, schema: pa.Schema) -> pd.DataFrame:
    """``frame`` as it is; an empty one as the typed columns of ``schema``."""
    return frame if len(frame) else schema.empty_table().to_pandas()


def analytics_dir(lake: Lake) -> Path:
    return lake.root / ANALYTICS_DIR


def write_analytics(lake: Lake, analytics: Analytics) -> Path:
    """Publish the tables as ``<lake>/analytics/<table>.parquet``, replacing the previous set as
    a whole (staged, then swapped in with two renames)."""
    final = analytics_dir(lake)
    staging = lake.root / f".{ANALYTICS_DIR}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        for name, frame in analytics.tables.items():
            table = pa.Table.from_pandas(frame, preserve_index=False)
            pq.write_table(table, staging / f"{name}.parquet", compression="zstd")
        swap_dir(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def read_analytics(lake: Lake, name: str) -> pd.DataFrame:
    path = analytics_dir(lake) / f"{name}.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the season's analytics first")
    return pd.read_parquet(path)
