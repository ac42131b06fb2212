"""What playing blind costs a cycle: the market mapped once (``Blinding.market``) against the
market's own build, and one contestant's briefing and turn played blind against the same played
open - on a lake of the whole universe (the synthetic market, a year and a few days before the
cycle).

The turn is the engine's: a scripted answer (an open, a hold with a level, a close) judged and
executed, its repair round included; the blind one answers the same decisions under the
neutral names, and its books come back equal to the open turn's (checked).

    python benchmarks/blind.py [--repeat 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the scripted contestant in tests/

from arena import DEMO_START
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.engine.portfolio import Portfolio
from arena.engine.rules import CycleState
from arena.market.blind import Blinding
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.pipeline.blind_turn import blind_briefing, blind_turn
from arena.pipeline.day import history_start
from arena.pipeline.turn import take_turn
from tests.pipeline.test_turn import Scripted


def _best(repeat: int, fn):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def _answer(market, symbols) -> list[str]:
    """An open of the first screened asset (a level below its price), and an empty repair."""
    price = market.prices[symbols[0]]
    first = {"action": "open_long", "symbol": symbols[0], "percent_of_equity": 20,
             "confidence": 0.9, "invalidation_price": round(price * 0.9, 6), "thesis": "t",
             "invalidation": "i"}
    return [json.dumps({"decisions": [first, {**first, "symbol": "NOPE"}]}),
            json.dumps({"decisions": []})]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    prepare_process()
    universe = load_universe()
    at = pd.Timestamp(DEMO_START, tz="UTC") + pd.Timedelta(hours=16)
    with tempfile.TemporaryDirectory() as tmp:
        lake = Lake(Path(tmp) / "lake")
        t0 = time.perf_counter()
        run_ingest(SyntheticProvider(), universe, start=history_start(at), end=at, lake=lake,
                   now=at)
        print(f"lake: {len(universe)} assets from {history_start(at).date()} to {at:%Y-%m-%d} "
              f"in {time.perf_counter() - t0:.1f} s")
        blinding = Blinding.draw(universe, seed=1)
        build, market = _best(3, lambda: build_market(lake, "synthetic", universe, at))
        mapped, shown = _best(args.repeat, lambda: blinding.market(market))
        print(f"market: built in {build * 1e3:.1f} ms; mapped blind in {mapped * 1e3:.2f} ms "
              f"({mapped / build:.1%} of the build, once per cycle)")

        state = CycleState(Portfolio(), at, stale=market.untradeable)
        snapshot = portfolio_snapshot(state, market.prices, stale=market.stale)
        open_brief, _ = _best(args.repeat, lambda: build_briefing(market, "c", snapshot))
        blind_brief, briefing = _best(args.repeat, lambda: blind_briefing(
            shown, "c", snapshot, blinding))
        print(f"briefing per contestant: open {open_brief * 1e3:.2f} ms, blind "
              f"{blind_brief * 1e3:.2f} ms ({blind_brief / open_brief:.2f}x)")

        symbols = list(market.screen.selected)
        script = _answer(market, symbols)
        blind_script = [json.dumps({"decisions": [blinding.decision(d) for d in
                                                  json.loads(t)["decisions"]]}) for t in script]
        opened = take_turn(Scripted(list(script)), briefing, state, market.prices, universe)
        blinded = blind_turn(Scripted(list(blind_script)), briefing, state, market.prices,
                             universe, blinding)
        assert blinded.state.portfolio == opened.state.portfolio and opened.fills
        open_turn, _ = _best(args.repeat, lambda: take_turn(
            Scripted(list(script)), briefing, state, market.prices, universe))
        blind_t, _ = _best(args.repeat, lambda: blind_turn(
            Scripted(list(blind_script)), briefing, state, market.prices, universe, blinding))
        print(f"turn (engine, repair round included): open {open_turn * 1e3:.2f} ms, blind "
              f"{blind_t * 1e3:.2f} ms ({blind_t / open_turn:.2f}x); books equal")


if __name__ == "__main__":
    main()
