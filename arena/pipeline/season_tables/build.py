"""The build of every table of the season (:func:`build_analytics`), one named step after
another, each timed: the tables that grow with the season (the cycle prices and the arena's
zero-skill players, continued from the stored state), the matched players, the per-asset luck
and reference rules, the entrants' single-asset tracks, the correlations, and the season's row;
for a contest, its assets' rules (``contest_assets``) beside them."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import pyarrow as pa

from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.data.providers import market_label
from arena.engine.portfolio import START_CASH
from arena.engine.rules import ARENA_RULES
from arena.market.asof import NoPrices, Providers, provider_label, provider_of
from arena.pipeline.contest import Contest
from arena.pipeline.matched_tables import matched_tables
from arena.pipeline.season_state import SeasonReads, SeasonState, load_state, season_inputs
from arena.pipeline.season_tables.arena_luck import ARENA_PLAYERS, ArenaTables, arena_luck_tables
from arena.pipeline.season_tables.assets import asset_luck, correlations
from arena.pipeline.season_tables.prices import SeasonPrices, season_prices, tradable_prices
from arena.pipeline.season_tables.store import (
    Analytics,
    AnalyticsError,
    analytics_dir,
    contest_assets_schema,
    luck_ceiling_schema,
    reference_rules_schema,
)
from arena.pipeline.season_tables.tracks import (
    TRACK_ELIGIBLE,
    TRACK_PLAYERS,
    read_tracks,
    tracks_table,
)
from arena.scoring.arena_luck import RandomProfile
from arena.scoring.asset_luck import DEFAULT_PLAYERS, shared_players

log = logging.getLogger(__name__)


@dataclass
class _StepTimes:
    """How long each step of a build took: wall and CPU seconds (this process), by step."""

    seconds: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Time the block as the step ``name`` (a block that raises is not recorded)."""
        t0, c0 = time.perf_counter(), time.process_time()
        yield
        self.seconds[name] = time.perf_counter() - t0
        self.cpu[name] = time.process_time() - c0


@dataclass
class _Grown:
    """The tables that grow with the season, the tradable assets' prices wide (what the
    zero-skill and matched players play on) and the state the next build starts from."""

    prices: SeasonPrices
    wide: pd.DataFrame
    arena: ArenaTables
    state: SeasonState


def build_analytics(lake: Lake, provider: Providers, universe: Universe,
                    cycles: Sequence[pd.Timestamp], *,
                    players: int = DEFAULT_PLAYERS, arena_players: int = ARENA_PLAYERS,
                    seed: int = 0, progress: Callable[[str], None] | None = None,
                    fan_out: Callable[..., list[Any]] | None = None,
                    resume: bool = True, contest: Contest | None = None) -> Analytics:
    """Compute every table of :mod:`arena.pipeline.season_tables` for the season of ``cycles``
    (``provider``: one, or one per asset class). ``fan_out``: a runner's ``map``, to compute
    the assets' luck and rules tables elsewhere
    (:func:`~arena.pipeline.season_tables.assets.asset_luck` on a Dask cluster); else one after
    another.

    The tables that grow with the season (``cycle_prices``, ``arena_luck``,
    ``arena_luck_band``) continue from the state the previous build left beside its tables
    when what it consumed is unchanged (:mod:`arena.pipeline.season_state`; the same numbers as
    from scratch), else they are computed from the season's first cycle and ``progress`` says
    why; ``resume=False`` computes them from scratch regardless. Either way the build leaves
    its own state for the next one (:attr:`Analytics.state`).

    ``contest``: the season's contest (:class:`~arena.pipeline.contest.Contest`), whose rules
    the tables follow: its assets charge its fees (the universe's own rates when the season's
    config made it, :meth:`~arena.core.universe.Universe.with_cost_rates`), a track is eligible
    from its share of the season, and its assets' rules are the ``contest_assets`` table
    (:func:`contest_assets`; no rows without a contest, so the marts always have the table)."""
    if not cycles:
        raise AnalyticsError("a season needs at least one cycle")
    if contest is not None:
        universe = universe.with_cost_rates(contest.fees)
    times = sorted(cycles)
    start, end = times[0], times[-1]
    say = progress or (lambda _msg: None)
    # a warning goes to the progress when there is one, else to the log: said once, not twice
    warn = progress or (lambda msg: log.warning("%s", msg))
    timer = _StepTimes()
    grown = _grown_tables(lake, provider, universe, times, arena_players=arena_players,
                          seed=seed, resume=resume, say=say, timer=timer)
    with timer.timed("matched_players"):
        matched, matched_books = matched_tables(lake, grown.wide, universe,
                                                players=arena_players, seed=seed, say=say)
    with timer.timed("asset_luck"):
        ceilings, rules, missing = _asset_tables(lake, provider, universe, start, end,
                                                 players=players, seed=seed, fan_out=fan_out,
                                                 say=say, warn=warn)
    with timer.timed("asset_tracks"):
        track_rows = _entrant_tracks(lake, provider, universe, start, end, say,
                                     eligibility=TRACK_ELIGIBLE if contest is None
                                     else contest.eligibility)
    with timer.timed("correlations"):
        corr = correlations(lake, provider, universe, end)
    season = _season_row(provider, universe, times, arena_players=arena_players,
                         players=players, seed=seed, rejections=grown.arena.rejections,
                         missing=missing)
    tables = {"season": season, "cycle_prices": grown.prices.table,
              "arena_luck": grown.arena.returns, "arena_luck_band": grown.arena.band,
              "luck_ceiling": ceilings, "reference_rules": rules, "correlations": corr,
              "asset_tracks": track_rows, "contest_assets": contest_assets(contest, universe),
              "matched_players": matched, "matched_books": matched_books}
    priced, arena = grown.prices, grown.arena
    return Analytics(tables, timer.seconds, timer.cpu,
                     {"cycle_prices": priced.kept, "arena_luck": arena.kept},
                     {k: w for k, w in (("cycle_prices", priced.why), ("arena_luck", arena.why))
                      if w}, grown.state)


def _grown_tables(lake: Lake, provider: Providers, universe: Universe,
                  times: list[pd.Timestamp], *, arena_players: int, seed: int, resume: bool,
                  say: Callable[[str], None], timer: _StepTimes) -> _Grown:
    """The steps ``cycle_prices`` and ``arena_luck``: the tables that grow with the season,
    continued from the stored state when what it consumed is unchanged (else from the
    season's first cycle, said), and the state this build leaves. The season's bars they read
    are not held past them."""
    inputs = season_inputs(provider, universe, players=arena_players, seed=seed,
                           rules=ARENA_RULES, profile=RandomProfile())
    stored, why = (load_state(analytics_dir(lake), inputs) if resume
                   else (None, "asked to compute from scratch"))
    reads = SeasonReads(lake, provider, universe, times)
    with timer.timed("cycle_prices"):
        try:
            priced = season_prices(lake, provider, universe, times, reads, stored, why)
        except NoPrices as exc:
            raise AnalyticsError(str(exc)) from exc
        if priced.kept < len(times):
            say(f"cycle prices: {len(times) - priced.kept} cycle(s) read, {priced.kept} kept"
                + (f" ({priced.why})" if priced.why else ""))
    with timer.timed("arena_luck"):
        wide = tradable_prices(priced.table, universe)
        arena = arena_luck_tables(reads, priced.table, wide, universe, stored, why,
                                  players=arena_players, seed=seed, say=say)
        if arena.why and stored is not None:
            log.info("arena luck from the season's first cycle: %s", arena.why)
        if arena.rejections:
            log.warning("arena zero-skill players got %d rejections (expected none)",
                        arena.rejections)
    state = SeasonState(inputs, times, reads.price_intervals(), priced.since,
                        priced.checkpoints, arena.cycles, arena.checkpoints)
    return _Grown(priced, wide, arena, state)


def _asset_tables(lake: Lake, provider: Providers, universe: Universe, start: pd.Timestamp,
                  end: pd.Timestamp, *, players: int, seed: int,
                  fan_out: Callable[..., list[Any]] | None, say: Callable[[str], None],
                  warn: Callable[[str], None]) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """The step ``asset_luck``: the ``luck_ceiling`` and ``reference_rules`` tables of the
    tradable assets (:func:`~arena.pipeline.season_tables.assets.asset_luck`, fanned out when
    ``fan_out`` is given) and the symbols left out (no bars in the season), each ``warn``-ed
    once; ``say``: the step's progress."""
    ceilings, rules, missing = [], [], []
    assets = list(universe.tradable)
    if fan_out is None:
        results = []
        with shared_players():  # the assets' players are drawn once (the same on every asset)
            for i, asset in enumerate(assets, start=1):
                results.append(asset_luck(asset, lake, provider, start, end, players, seed))
                if i % 10 == 0 or i == len(assets):
                    say(f"luck ceiling and reference rules: {i}/{len(assets)} assets")
    else:
        say(f"luck ceiling and reference rules: {len(assets)} assets fanned out")
        results = fan_out(asset_luck, assets, lake, provider, start, end, players, seed)
    for asset, result in zip(assets, results, strict=True):
        if isinstance(result, str):  # no bars for this asset in the season
            warn(f"no luck table for {asset.symbol}: {result}")
            missing.append(asset.symbol)
            continue
        ceilings.append(result[0])
        rules.append(result[1])
    return (_typed(pd.DataFrame(ceilings), luck_ceiling_schema()),
            _typed(pd.concat(rules, ignore_index=True) if rules else pd.DataFrame(),
                   reference_rules_schema()),
            missing)


def _entrant_tracks(lake: Lake, provider: Providers, universe: Universe, start: pd.Timestamp,
                    end: pd.Timestamp, say: Callable[[str], None], *,
                    eligibility: float) -> pd.DataFrame:
    """The step ``asset_tracks``: the outside entrants' single-asset tracks of the season, a
    track eligible from ``eligibility`` of the window covered."""
    tracks = read_tracks(lake)
    if tracks:
        say(f"single-asset tracks: {len(tracks)} entrant(s) against {TRACK_PLAYERS:,} zero-skill "
            "players per asset")
    with shared_players():  # assets with the same decision steps share their players
        return tracks_table(lake, provider, universe, start, end, tracks,
                            eligibility=eligibility)


def contest_assets(contest: Contest | None, universe: Universe) -> pd.DataFrame:
    """The ``contest_assets`` table: a row per asset of ``contest`` in its order (the asset's
    name from ``universe``), with the columns of
    :func:`~arena.pipeline.season_tables.store.contest_assets_schema` (its prizes a list per
    row, written with that schema); no rows for a season that is not a contest."""
    rows = [] if contest is None else [
        {"contest": contest.name, "symbol": symbol, "name": universe[symbol].name,
         "ordinal": i, "fee_rate": rate, "eligibility": contest.eligibility,
         "prizes": list(contest.prizes.get(symbol, ())),
         "prize_pool": float(sum(contest.prizes.get(symbol, ()))),
         "currency": contest.currency, "max_correlation": contest.max_correlation}
        for i, (symbol, rate) in enumerate(contest.fees.items(), start=1)]
    return pa.Table.from_pylist(rows, schema=contest_assets_schema()).to_pandas()


def _season_row(provider: Providers, universe: Universe, times: Sequence[pd.Timestamp], *,
                arena_players: int, players: int, seed: int, rejections: int,
                missing: Sequence[str]) -> pd.DataFrame:
    """The ``season`` table: its one row."""
    return pd.DataFrame([{
        "provider": provider_label(provider, universe),
        "market": "+".join(sorted({market_label(provider_of(provider, a)) for a in universe})),
        "season_start": times[0],
        "season_end": times[-1], "cycles": len(times), "arena_players": arena_players,
        "asset_players": players, "seed": seed,
        "arena_rejections": rejections, "start_cash": START_CASH,
        "assets_without_luck_tables": ",".join(missing)}])


def _typed(frame: pd.DataFrame, schema: pa.Schema) -> pd.DataFrame:
    """``frame`` as it is; an empty one as the typed columns of ``schema``."""
    return frame if len(frame) else schema.empty_table().to_pandas()
