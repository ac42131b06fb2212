"""Correlations of daily returns: the season's ``asset_correlations`` table and the check a
contest's assets pass (:mod:`arena.pipeline.contest`) read them the same way."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd


def return_correlations(closes: Mapping[str, pd.Series], min_periods: int = 10) -> pd.DataFrame:
    """Long table ``symbol_a, symbol_b, correlation, observations`` of ``closes`` (by date):
    Pearson correlation of each asset's returns between its consecutive trading days (a
    stock's Monday against its Friday), on the dates both have one; NaN below ``min_periods``
    such dates."""
    if not closes:  # no asset with daily bars (a season of benchmarks only)
        return pd.DataFrame({"symbol_a": pd.Series(dtype=str), "symbol_b": pd.Series(dtype=str),
                             "correlation": pd.Series(dtype=float),
                             "observations": pd.Series(dtype="int64")})
    frame = pd.DataFrame(dict(closes))
    returns = frame.apply(lambda s: s.dropna().pct_change()).reindex(frame.index)
    corr = returns.corr(min_periods=min_periods)
    count = returns.notna().astype(float).T @ returns.notna().astype(float)
    out = corr.stack(future_stack=True).rename("correlation").reset_index()
    out.columns = ["symbol_a", "symbol_b", "correlation"]
    out["observations"] = [int(count.loc[a, b]) for a, b in zip(out["symbol_a"], out["symbol_b"],
                                                                 strict=True)]
    return out
