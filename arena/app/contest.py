"""``arena contest init``: a contest's season, made once its assets pass the correlation check.

The check reads each asset's daily bars of the ``correlation_days`` before the contest's first
day straight from its provider (the season's vendors, or the synthetic market), before anything
is written: a contest whose assets are not weakly correlated, or one an asset of which has too
little history to tell, is refused with the matrix, and the lake stays as it was. A contest that
passes is a season (:func:`arena.pipeline.season_config.init_season`) carrying its rules and the
matrix it passed with.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from arena.core.universe import Universe, load_universe
from arena.data.lake import Lake
from arena.data.providers import make_provider
from arena.pipeline.contest import Contest, ContestError, CorrelationCheck, check_correlations
from arena.pipeline.season_config import LIVE, SeasonConfig, init_season, make_season


@dataclass(frozen=True)
class ContestStarted:
    config: SeasonConfig
    check: CorrelationCheck


def history_closes(universe: Universe, providers: Mapping[str, str], start: dt.date, days: int,
                   seed: int | None) -> dict[str, pd.Series]:
    """Each asset's daily closes of the ``days`` before ``start``, by UTC date, from the
    provider of its asset class (an asset the provider returns nothing for is left out)."""
    end = pd.Timestamp(start, tz="UTC")
    begin = end - pd.Timedelta(days=days)
    made = {}
    closes = {}
    for asset in universe:
        source = providers[asset.asset_class]
        provider = made.get(source) or made.setdefault(source, make_provider(source, seed=seed))
        bars = provider.fetch_bars(asset, "1d", begin, end)
        if len(bars):
            closes[asset.symbol] = pd.Series(
                bars["close"].to_numpy(dtype="float64"),
                index=pd.DatetimeIndex(bars["timestamp"]).tz_convert("UTC").normalize())
    return closes


def start_contest(lake: Lake, contest: Contest, start: dt.date, days: int, *,
                  providers: Mapping[str, str], seed: int | None = None,
                  roster: str | None = None, season_id: str | None = None) -> ContestStarted:
    """Check the contest's assets' correlations and write its season into ``lake``;
    :class:`ContestError` with the matrix when the check refuses them (nothing written)."""
    universe = load_universe().select(contest.assets)
    closes = history_closes(universe, providers, start, contest.correlation_days, seed)
    check = check_correlations(closes, contest.assets, contest.max_correlation)
    if not check.passed:
        raise ContestError(f"the contest's assets do not pass the correlation check: "
                           f"{check.refusal()}; daily returns over the "
                           f"{contest.correlation_days} days before {start}:\n{check.table()}")
    contest = contest.model_copy(update={"correlations": check.pairs()})
    config = init_season(lake, make_season(start, days, contest.assets, mode=LIVE,
                                           providers=providers, seed=seed,
                                           season_id=season_id, contest=contest),
                         roster=roster)
    return ContestStarted(config, check)
