"""The luck simulation: 20,000 zero-skill players on a 122-day hourly crypto path (2,928 bars) and
on a 122-day daily path; player-bars per second, wall time, peak memory, and the speed-up over a
plain per-player loop through the same scorer (measured in the same run on a sample of players).

    python benchmarks/luck.py [--players 20000] [--loop-sample 400]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd

from arena.core.universe import load_universe
from arena.data.providers.synthetic import SyntheticProvider
from arena.scoring.asset_luck import BLOCK, _block_draws, decision_steps, zero_skill_returns
from arena.scoring.scorer import COST_RATES, score_arrays
from arena.scoring.self_check import ensure_self_checked


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(name: str, closes: pd.Series, players: int, sample: int) -> None:
    c = closes.to_numpy()
    steps = decision_steps(closes.index, "1d")
    rate = COST_RATES["crypto"]
    before = _rss_mb()
    t0 = time.perf_counter()
    returns = zero_skill_returns(c, steps, players=players, seed=0, cost_rate=rate)
    wall = time.perf_counter() - t0
    peak = _rss_mb()
    # baseline: the same draws, then one scorer call per player (a plain NumPy loop)
    t0 = time.perf_counter()
    blocks = -(-sample // BLOCK)
    draws = np.vstack([_block_draws(0, b, int(steps.max()) + 1, "uniform") for b in range(blocks)])
    loop_returns = [score_arrays(c, draws[i, steps], rate)[0][-1] - 1.0 for i in range(sample)]
    loop = (time.perf_counter() - t0) / sample * players
    assert np.allclose(loop_returns, returns[:sample], rtol=1e-10)
    cells = players * len(c)
    print(f"{name}: {players:,} players x {len(c):,} bars ({steps.max() + 1} decisions)")
    print(f"  vectorised      {wall:.3f} s, {cells / wall / 1e6:,.1f} M player-bars/s")
    print(f"  per-player loop {loop:.2f} s (extrapolated from {sample} players): "
          f"{loop / wall:.1f}x slower")
    print(f"  peak memory     {peak:,.0f} MB RSS (was {before:,.0f} MB before the run)")
    print(f"  luck ceiling    {np.quantile(returns, 0.95):+.2%} (median {np.median(returns):+.2%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--loop-sample", type=int, default=2000)
    args = parser.parse_args()
    ensure_self_checked()
    btc = load_universe()["BTC"]
    provider = SyntheticProvider()
    end = pd.Timestamp("2026-11-01", tz="UTC")
    start = end - pd.Timedelta(days=122)
    hourly = provider.fetch_bars(btc, "1h", start, end).set_index("timestamp")["close"]
    daily = provider.fetch_bars(btc, "1d", start, end).set_index("timestamp")["close"]
    # the smaller run first: the process peak RSS only grows, so each figure is its own run's
    run("synthetic BTC, daily", daily, args.players, args.loop_sample)
    run("synthetic BTC, hourly", hourly, args.players, args.loop_sample)


if __name__ == "__main__":
    main()
