"""The replay job: a season played on the synthetic market, on recorded bars from a files
drop folder or on the vendors' history, with a simulated clock, then its tables, marts and
report - what ``arena replay``, ``arena demo`` and the season flow run.

The replay is a season of its own lake, written there like a live one (``season.json`` in
``replay`` mode and a copy of the roster: :func:`arena.pipeline.season_config.init_season`), so
its schedule is the season's (:attr:`~arena.pipeline.season_config.SeasonConfig.times`) and a
replay run again on the same lake resumes: every recorded cycle is kept, nothing is traded twice.
Then the season's market (one validated ingest run, or one before each day), one season day after
another (:func:`arena.pipeline.season.replay_season`), and the end of the season
(:func:`arena.pipeline.season.finish_season`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pandas as pd

from arena.agents.factory import contestants_from_roster
from arena.agents.roster import Skipped
from arena.app.effects import INLINE, Effects
from arena.app.handle import SeasonHandle
from arena.app.publish import build_errors
from arena.core.errors import BadArgument
from arena.core.universe import load_universe
from arena.data.ingest import docs_beside
from arena.data.lake import Lake
from arena.data.providers import FILES, SYNTHETIC, make_provider
from arena.data.providers.base import Provider
from arena.market.sections import CANDLE_LAYOUTS, DEFAULT_LAYOUT
from arena.pipeline.day import DayReport
from arena.pipeline.season import SeasonOutputs, SeasonReport, finish_season, replay_season
from arena.pipeline.season_config import (
    REPLAY,
    default_providers,
    init_season,
    make_season,
    season_blinding,
)
from arena.pipeline.season_tables import ARENA_PLAYERS
from arena.pipeline.warehouse import parse_ahead
from arena.reporting.leaderboard import sorted_board
from arena.scoring.asset_luck import DEFAULT_PLAYERS


@dataclass
class ReplayResult:
    """A replayed season: its handle, the days played, what its end built, the leaderboard
    (sorted by place), the roster entries skipped (no key) and the replicated models read
    across their instances (the replicates mart; None: not built)."""

    season: SeasonHandle
    played: SeasonReport
    outputs: SeasonOutputs
    board: pd.DataFrame
    skipped: list[Skipped] = field(default_factory=list)
    replicates: pd.DataFrame | None = None


@dataclass(frozen=True)
class ReplayPlan:
    """What a replay plays: ``days`` daily cycles from ``start``, the ``roster`` (None: the
    shipped one) over ``symbols`` (None: the universe) of the synthetic market of ``seed`` - or
    of the recorded bars in the files ``drop`` folder, whose finest interval is
    ``drop_interval`` (:mod:`arena.data.providers.files`), or of each class's vendor history
    (``crypto``, ``stocks``) -, the market ingested once for the season or before each day
    (``ingest``), the prompts' candles in the layout ``candles`` (recorded with the season),
    the zero-skill players of the luck tables: ``players`` per asset, ``arena_players`` for the
    arena's rules; and, in a league, the season it ``follows``; ``blind``: played blind
    (:mod:`arena.market.blind`), its prompts showing sectors when ``blind_sectors``."""

    start: dt.date
    days: int
    roster: str | None = None
    symbols: Sequence[str] | None = None
    seed: int | None = None
    players: int = DEFAULT_PLAYERS
    arena_players: int = ARENA_PLAYERS
    ingest: Literal["season", "daily"] = "season"
    candles: str = DEFAULT_LAYOUT
    follows: str | None = None  # the league season this one continues (arena league replay)
    blind: bool = False
    blind_sectors: bool = False
    blind_seed: int | None = None  # a reproducible blinding, for a test (None: a secret one)
    drop: str | None = None  # a files drop folder of recorded bars (None: the synthetic market)
    drop_interval: str = "1h"
    crypto: str = SYNTHETIC  # the crypto's and the stocks' provider: a vendor's history
    stocks: str = SYNTHETIC

    @property
    def providers(self) -> dict[str, str]:
        """Each asset class's provider: the files drop for every class, or each class's own
        (the synthetic market, a vendor's history)."""
        return (default_providers(FILES, FILES) if self.drop else
                default_providers(self.crypto, self.stocks))

    def sources(self) -> list[Provider]:
        """The providers the replay reads, one per source."""
        if self.drop:
            return [make_provider(FILES, drop=self.drop, drop_interval=self.drop_interval)]
        return [make_provider(name, seed=self.seed)
                for name in sorted(set(self.providers.values()))]

    def check(self) -> None:
        """:class:`~arena.core.errors.BadArgument` naming the first setting that cannot be
        played."""
        if self.days < 1:
            raise BadArgument(f"--days must be at least 1, not {self.days}")
        if self.ingest not in ("season", "daily"):
            raise BadArgument(f"--ingest must be 'season' or 'daily', not {self.ingest!r}")
        if self.candles not in CANDLE_LAYOUTS:
            raise BadArgument(f"--candles must be one of {', '.join(CANDLE_LAYOUTS)}, not "
                              f"{self.candles!r}")
        if self.blind_sectors and not self.blind:
            raise BadArgument("--blind-sectors shows sectors in a blind season: give --blind too")
        if self.drop is None and self.drop_interval != "1h":
            raise BadArgument("--drop-interval is the --drop folder's finest interval: give "
                              "--drop DIR too")
        vendors = sorted({self.crypto, self.stocks} - {SYNTHETIC})
        if vendors and (self.drop is not None or FILES in vendors):
            raise BadArgument("give --drop DIR for recorded bars, or --crypto/--stocks for a "
                              "vendor's history, not both")
        if self.seed is not None and (self.drop is not None or set(vendors) ==
                                      {self.crypto, self.stocks}):
            raise BadArgument("--seed is the synthetic market's: a replay of recorded bars "
                              "(--drop) or of vendors' history has none")
        if self.drop is not None and not Path(self.drop).is_dir():
            raise BadArgument(f"--drop {self.drop}: no such folder (the files drop of "
                              "recorded bars: DROP/<interval>/<SYMBOL>.csv)")


def replay(lake: Lake, plan: ReplayPlan, *, env: Mapping[str, str], effects: Effects = INLINE,
           on_start: Callable[[SeasonHandle, int], None] | None = None,
           on_day: Callable[[DayReport, int, int], None] | None = None) -> ReplayResult:
    """Replay the ``plan`` into ``lake`` (see the module docstring), the contestants' keys read
    from ``env``; ``on_start`` hears of the season and its contestant count before the first
    day, ``on_day`` of every day played, the effects' ``progress`` of the ingest and the end of
    the season."""
    plan.check()
    say = effects.progress
    contestants, skipped = contestants_from_roster(plan.roster, env)
    universe = load_universe().select(list(plan.symbols) if plan.symbols else None)
    providers = plan.sources()
    config = init_season(lake, make_season(plan.start, plan.days, universe.symbols, mode=REPLAY,
                                           providers=plan.providers, seed=plan.seed,
                                           candles=plan.candles, follows=plan.follows,
                                           blind=plan.blind),
                         roster=plan.roster, sectors=plan.blind_sectors,
                         blind_seed=plan.blind_seed)
    handle = SeasonHandle(lake, config, env)
    if effects.invoke is None:  # dbt's own runner: its parse runs beside the season's days
        parse_ahead(lake)
    if on_start:
        on_start(handle, len(contestants))
    with docs_beside():  # the ingests' Data Docs are built beside the season's days
        played = replay_season(providers, handle.universe, contestants, config.times, lake=lake,
                               runner=effects.runner, ingest=plan.ingest, progress=on_day,
                               say=say, candles=config.candles,
                               blinding=season_blinding(lake, config), market=config.market)
    if say:
        say(f"season played: {len(played.days)} cycles, {played.fills} fills; building the "
            "luck tables, marts and report")
    with build_errors():
        outputs = finish_season(lake, config.market, handle.universe, config.times,
                                players=plan.players, arena_players=plan.arena_players,
                                invoke=effects.invoke, quiet=True, runner=effects.runner,
                                progress=say)
    board = sorted_board(pd.read_parquet(outputs.marts.marts / "leaderboard.parquet"))
    replicated = outputs.marts.marts / "replicates.parquet"
    replicates = pd.read_parquet(replicated) if replicated.is_file() else None
    return ReplayResult(handle, played, outputs, board, skipped, replicates)
