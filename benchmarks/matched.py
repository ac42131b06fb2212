"""The matched players at scale: what a contestant's skill percentile costs a publication.

A busy contestant's book over a season (the zero-skill policy opening most cycles and closing a
third of its positions a cycle: hundreds of positions) is copied by 1,000 matched players in one
vectorised pass (:func:`arena.scoring.matched.matched_players`, as every build of a season's
tables does), against the same players replayed one by one through the engine's own broker and
portfolio (opens and adds sized by ``execute_answer``, closes as fills) on a sample of players,
scaled to all of them (the tests' reference, tests/scoring/reference_matched.py); both give the
same returns (checked on the sample, to 1e-9). Printed for a 28-day and a 365-day season, each
the best of ``--repeat`` runs.

    python benchmarks/matched.py [--players 1000] [--sample 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the reference in tests/

from arena.core.universe import Universe, load_universe
from arena.scoring.arena_luck import RandomProfile, play_player
from arena.scoring.matched import MatchedMarket, book_from_fills, matched_players
from tests.scoring.reference_matched import engine_replay

BUSY = RandomProfile(open_prob=0.9, close_prob=0.3, partial_prob=0.25, add_prob=0.2)


def season(universe: Universe, days: int) -> pd.DataFrame:
    symbols = [a.symbol for a in universe.tradable]
    rng = np.random.default_rng(1)
    index = pd.date_range("2025-01-06 16:00", periods=days, freq="D", tz="UTC")
    paths = 100 * np.exp(np.cumsum(rng.normal(0, 0.02, (days, len(symbols))), axis=0))
    return pd.DataFrame(paths, index=index, columns=symbols)


def measure(universe: Universe, days: int, players: int, sample: int, repeat: int) -> None:
    prices = season(universe, days)
    market = MatchedMarket.from_prices(prices, universe)
    book = book_from_fills("busy", play_player(prices, universe, 3, seed=0, profile=BUSY).fills,
                           market)
    vectorised, loop = math.inf, math.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        got = matched_players([book], market, players=players)
        vectorised = min(vectorised, time.perf_counter() - t0)
        t0 = time.perf_counter()
        replayed = [engine_replay(book, market, got.assets[0][d], universe) for d in range(sample)]
        loop = min(loop, (time.perf_counter() - t0) / sample * players)
    assert np.allclose(replayed, got.returns[:sample, 0], rtol=0, atol=1e-9)
    print(f"{days:>4} days, {book.lots:>4} positions, {len(book.events):>4} fills: "
          f"{players:,} matched players in {vectorised:.3f} s; one by one through the engine "
          f"{loop:.1f} s (from {sample}); x{loop / vectorised:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    universe = load_universe().select(None)  # the default season's assets
    for days in (28, 365):
        measure(universe, days, args.players, args.sample, args.repeat)


if __name__ == "__main__":
    main()
