"""Synthetic lakes shared by the screener, briefing and prompt tests (built once per test run).

* ``cut_fri``: ingested up to Friday 2025-11-21 16:00 UTC (an NYSE session, before its close);
* ``cut_sat``: the same, then ingested on up to Saturday 2025-11-22 16:00 UTC;
* ``full``: the same, then ingested on up to 2025-12-02 (holds Thanksgiving and later bars).

Each starts 220 days before Friday, so 26 weekly candles (and then some) exist.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from arena.core.universe import Universe
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.engine.portfolio import LONG, SHORT, Portfolio, Position
from arena.engine.rules import CycleState
from arena.market.briefing import build_briefing, portfolio_snapshot
from tests.conftest import ts

FRI = ts("2025-11-21 16:00")
SAT = ts("2025-11-22 16:00")
THANKSGIVING = ts("2025-11-27 16:00")
START = (FRI - pd.Timedelta(days=220)).normalize()
FULL_END = ts("2025-12-02")
NOW = ts("2026-01-01")  # the injected clock of every ingest (all windows are in its past)
PROVIDER = "synthetic"


@dataclass(frozen=True)
class Lakes:
    cut_fri: Lake
    cut_sat: Lake
    full: Lake


_built: dict[str, Lakes] = {}


def market_lakes(tmp_path_factory, universe: Universe) -> Lakes:
    """The three lakes, ingested once per test run (about 20 s): the first pytest-xdist worker
    to need them builds them in the run's shared base folder, the others wait for it and read
    the same lakes (every test reads them, or copies them before it writes)."""
    if "lakes" not in _built:
        from filelock import FileLock

        base = tmp_path_factory.getbasetemp()
        shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
        key = hashlib.sha256(",".join(sorted(universe.symbols)).encode()).hexdigest()[:12]
        root, done = shared / f"market_lakes-{key}", shared / f"market_lakes-{key}.done"
        fri, sat, full = (Lake(root / name) for name in ("cut_fri", "cut_sat", "full"))
        with FileLock(str(shared / f"market_lakes-{key}.lock")):
            if not done.is_file():
                shutil.rmtree(root, ignore_errors=True)
                provider = SyntheticProvider()
                run_ingest(provider, universe, start=START, end=FRI, lake=fri, now=NOW)
                shutil.copytree(fri.root, sat.root)
                run_ingest(provider, universe, start=FRI.normalize(), end=SAT, lake=sat, now=NOW)
                shutil.copytree(sat.root, full.root)
                run_ingest(provider, universe, start=SAT.normalize(), end=FULL_END, lake=full,
                           now=NOW)
                done.write_text("built\n", encoding="utf-8")
        _built["lakes"] = Lakes(fri, sat, full)
    return _built["lakes"]


THESIS = ("The weekly trend has made higher highs and higher lows for three months and the last "
          "pullback held above the rising 30-day range, so the move should run for several weeks.")
INVALIDATION = "A daily close below the last swing low would break the higher-low sequence."


def full_lake_copy(tmp_path_factory, universe: Universe, dest) -> Lake:
    """A copy at ``dest`` of the ``full`` market lake, for a test to damage."""
    lake = Lake(dest)
    shutil.copytree(market_lakes(tmp_path_factory, universe).full.root, lake.root)
    return lake


def flat_prompt(market) -> str:
    """The prompt a flat book (no position) reads of ``market``."""
    snapshot = portfolio_snapshot(book_state(market.prices, (), market.at), market.prices)
    return build_briefing(market, "tester", snapshot).prompt_text


def book_state(prices: dict[str, float], held: tuple[str, ...], at: pd.Timestamp) -> CycleState:
    """A contestant holding ``held`` (alternating long/short), with carried theses and levels."""
    positions = {}
    for i, sym in enumerate(held):
        price = prices[sym]
        side = LONG if i % 2 == 0 else SHORT
        entry = price * (0.95 if side == LONG else 1.04)
        level = price * (0.9 if side == LONG else 1.1)
        positions[sym] = Position(sym, side, round(1500.0 / entry, 6), entry,
                                  at - pd.Timedelta(days=5 + i), level, THESIS, INVALIDATION)
    cost = sum(p.cost for p in positions.values())
    return CycleState(Portfolio(10_000.0 - cost - 4.5, MappingProxyType(positions), 4.5, 0.0), at)


def season_lake(tmp_path_factory, universe: Universe, dest, roster: str, *,
                start: str = "2025-11-26", days: int = 1, cycle_deadline_s: float = 600.0,
                candles: str | None = None, blind: bool = False) -> Lake:
    """A copy of the ``full`` lake at ``dest`` holding a synthetic season over the universe with
    ``roster`` (YAML text): by default the one day 2025-11-26, whose cycle is then the current
    one for any wall clock after it. ``cycle_deadline_s``: how long a cycle retries a failed
    contestant (a test of a model that stays down sets a few seconds); ``candles``: the
    season's candle layout (default: a new season's); ``blind``: played blind."""
    from arena.pipeline.season_config import init_season, make_season

    lake = Lake(dest)
    shutil.copytree(market_lakes(tmp_path_factory, universe).full.root, lake.root)
    path = lake.root.parent / f"{lake.root.name}-roster.yaml"
    path.write_text(roster, encoding="utf-8")
    init_season(lake, make_season(start, days, universe.symbols,
                                  call_timeout_s=min(60.0, cycle_deadline_s),
                                  cycle_deadline_s=cycle_deadline_s, blind=blind,
                                  **({} if candles is None else {"candles": candles})),
                roster=path, blind_seed=3 if blind else None)
    return lake
