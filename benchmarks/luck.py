"""The luck simulation at scale.

1. ``arena luck`` as a subprocess (start-up included): 100,000 zero-skill players on a year of
   hourly synthetic BTC bars (8,760 bars, daily decisions: 365 steps), against a plain per-player
   NumPy loop on the same draws (one vectorised pass over the bars per player) measured in the same
   run on a sample of players and scaled linearly to all players (the loop's time is linear in
   the players); the ratio, and the subprocess's peak memory (max RSS of the child). Both are the
   best of ``--repeat`` runs, interleaved, so a busy machine disturbs the ratio less.
2. In process, as before: 20,000 players on a 122-day hourly crypto path (2,928 bars) and on a
   122-day daily path; player-bars per second, wall time, peak memory, and the speed-up over a
   per-player loop through the plain scorer (extrapolated from a sample).

    python benchmarks/luck.py [--players 20000] [--loop-sample 2000] [--cli-players 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from arena.core.universe import load_universe
from arena.data.providers.synthetic import SyntheticProvider
from arena.scoring.asset_luck import BLOCK, _block_draws, decision_steps, zero_skill_returns
from arena.scoring.scorer import COST_RATES, score_arrays
from arena.scoring.self_check import ensure_self_checked


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def plain_loop(c: np.ndarray, steps: np.ndarray, rate: float, sample: int) -> tuple[float, list]:
    """Seconds per player of the plain loop: each player's draws (block by block, as the
    simulation draws them), its per-bar positions, its return in vectorised NumPy over the bars."""
    n_steps = int(steps.max()) + 1
    r_next = c[1:] / c[:-1] - 1.0
    out = []
    t0 = time.perf_counter()
    for b in range(-(-sample // BLOCK)):
        draws = _block_draws(0, b, n_steps, "uniform")
        for row in range(min(BLOCK, sample - b * BLOCK)):
            w = draws[row, steps]
            growth = np.prod(1.0 + w[:-1] * r_next) * np.prod(1.0 - rate * np.abs(np.diff(w, prepend=0.0)))
            out.append(growth - 1.0)
    return (time.perf_counter() - t0) / sample, out


def run_cli(players: int, sample: int, repeat: int) -> None:
    btc = load_universe()["BTC"]
    end = pd.Timestamp("2026-11-01", tz="UTC")
    bars = SyntheticProvider().fetch_bars(btc, "1h", end - pd.Timedelta(days=365), end)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "btc_1h.csv"
        bars.to_csv(path, index=False)
        cmd = [str(Path(sys.executable).with_name("arena")), "luck", "--prices", str(path),
               "--players", str(players), "--json"]
        closes = bars.set_index("timestamp")["close"]
        c = closes.to_numpy()
        steps = decision_steps(closes.index, "1d")
        walls, loops = [], []
        for _ in range(repeat):
            t0 = time.perf_counter()
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
            walls.append(time.perf_counter() - t0)
            per_player, loop_returns = plain_loop(c, steps, COST_RATES["crypto"], sample)
            loops.append(per_player)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    wall, per_player = min(walls), min(loops)
    check = zero_skill_returns(c, steps, players=sample, seed=0, cost_rate=COST_RATES["crypto"])
    worst = float(np.max(np.abs(np.asarray(loop_returns) - check) / (1.0 + np.asarray(loop_returns))))
    loop = per_player * players
    print(f"arena luck (subprocess): {players:,} players x {len(c):,} hourly bars "
          f"({steps.max() + 1} daily decisions)")
    print(f"  plain per-player NumPy loop  {loop:.2f} s (measured on {sample:,} players, "
          f"{per_player * 1e6:.0f} us each, x {players:,}; best of {repeat})")
    print(f"  arena luck, start-up incl.   {wall:.2f} s (best of {repeat}: "
          + ", ".join(f"{x:.2f}" for x in walls) + ")")
    print(f"  ratio                        {wall / loop:.3f} x the loop")
    print(f"  peak memory (child max RSS)  {peak:,.0f} MB")
    print(f"  largest relative difference from the loop on the sample: {worst:.1e}")
    print("  " + done.stdout.strip().replace("\n", " ")[:200])


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
    print(f"  scorer loop     {loop:.2f} s (extrapolated from {sample} players): "
          f"{loop / wall:.1f}x slower")
    print(f"  peak memory     {peak:,.0f} MB RSS (was {before:,.0f} MB before the run)")
    print(f"  luck ceiling    {np.quantile(returns, 0.95):+.2%} (median {np.median(returns):+.2%})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--loop-sample", type=int, default=2000)
    parser.add_argument("--cli-players", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run_cli(args.cli_players, args.loop_sample, args.repeat)  # first: the only child, so its RSS is the child's
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
