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
* ``matched_players``, ``matched_books``  each contestant's (and replicated model's) matched
                       players: its book with the assets relabelled at random, the null of the
                       skill percentile (:mod:`arena.pipeline.matched_tables`)
* ``luck_ceiling``     per asset: its zero-skill distribution over the season (quantiles, ceiling,
                       the grid, bars and decision steps it was simulated on, cost rate)
* ``reference_rules``  per asset and rule: return, turnover, fees, percentile, rank score, rank;
                       ``status`` ``insufficient_history`` (and those empty) when the asset's
                       bars before the first cycle are fewer than the rule's window
                       (``history_bars`` < ``needed_bars``: a new listing)
* ``correlations``     pairwise correlation of daily returns over :data:`CORRELATION_DAYS`
* ``asset_tracks``     per outside entrant and asset it submitted single-asset positions for:
                       the track's return, turnover and fees over the season's window (its
                       first cycle to the last one built), its luck percentile and rank score
                       among :data:`TRACK_PLAYERS` zero-skill players of the asset on that path
                       (seed :data:`TRACK_SEED`), the share of the window a valid position
                       covered, ``eligible`` (at least :data:`TRACK_ELIGIBLE`) and the place
                       among the eligible; ``status`` ``no_position``, ``too_short`` or
                       ``no_bars`` (and the numbers null) when there is nothing to score
                       (:func:`asset_tracks`, the one definition the MCP ``score`` calls too)

Layout: ``<lake>/analytics/<table>.parquet``, one set for the lake's season. A build writes the
whole set into a staging directory and swaps it in with two renames, so readers see the old set
or the new one, never a mix; a failed build leaves the old set as it was.

A live season builds them after every cycle. What grows with the season does not cost the
season again: beside the tables, in ``_state/`` (:mod:`arena.pipeline.season_state`), a build
leaves the arena's zero-skill players' books at its last two cycles and the digests of the bars
and prices they and the cycle prices consumed; the next build keeps the rows of
``cycle_prices`` and ``arena_luck_band`` up to the latest checkpoint whose inputs are unchanged
and computes the cycles after it (the players advance from their books with the same draws),
which equals a build from scratch, bit for bit. The per-asset tables and the correlations are
computed whole each time: the correlations read a bounded window, and a zero-skill player of
an asset draws its positions as one block over the season's decision steps, so a longer season
redraws them all (their cost grows with the bars, not with the players' books).

A module per concern, each importing only those below it (an import contract checks it):
:mod:`~arena.pipeline.season_tables.build` (:func:`build_analytics`: the steps in order) above
:mod:`~arena.pipeline.season_tables.prices` (``cycle_prices``),
:mod:`~arena.pipeline.season_tables.arena_luck` (``arena_luck``, ``arena_luck_band``),
:mod:`~arena.pipeline.season_tables.assets` (``luck_ceiling``, ``reference_rules``,
``correlations``) and :mod:`~arena.pipeline.season_tables.tracks` (``asset_tracks``), above
:mod:`~arena.pipeline.season_tables.checkpoints` (the checkpoints a build continues from) and
:mod:`~arena.pipeline.season_tables.store` (the analytics folder: the tables' schemas, writing
and reading them; :class:`Analytics`, :class:`AnalyticsError`). The names below are the
package's public ones, wherever they are defined.
"""

from __future__ import annotations

from arena.pipeline.season_tables.arena_luck import ARENA_PLAYERS, ArenaTables, arena_luck_tables
from arena.pipeline.season_tables.assets import (
    CORRELATION_DAYS,
    asset_luck,
    asset_tables,
    correlations,
)
from arena.pipeline.season_tables.build import build_analytics
from arena.pipeline.season_tables.prices import SeasonPrices, season_prices, tradable_prices
from arena.pipeline.season_tables.store import (
    ANALYTICS_DIR,
    BAND,
    BAND_COLUMNS,
    Analytics,
    AnalyticsError,
    analytics_dir,
    asset_tracks_schema,
    luck_ceiling_schema,
    read_analytics,
    reference_rules_schema,
    write_analytics,
)
from arena.pipeline.season_tables.tracks import (
    TRACK_DIR,
    TRACK_ELIGIBLE,
    TRACK_NO_BARS,
    TRACK_NO_POSITION,
    TRACK_PLAYERS,
    TRACK_SCORED,
    TRACK_SEED,
    TRACK_STATUSES,
    TRACK_TOO_SHORT,
    asset_tracks,
    entrant_track,
    read_tracks,
    track_coverage,
    track_path,
    track_series,
    tracks_table,
)

__all__ = [
    "ANALYTICS_DIR", "ARENA_PLAYERS", "BAND", "BAND_COLUMNS", "CORRELATION_DAYS", "TRACK_DIR",
    "TRACK_ELIGIBLE", "TRACK_NO_BARS", "TRACK_NO_POSITION", "TRACK_PLAYERS", "TRACK_SCORED",
    "TRACK_SEED", "TRACK_STATUSES", "TRACK_TOO_SHORT", "Analytics", "AnalyticsError", "ArenaTables",
    "SeasonPrices", "analytics_dir", "arena_luck_tables", "asset_luck", "asset_tables",
    "asset_tracks", "asset_tracks_schema", "build_analytics", "correlations", "entrant_track",
    "luck_ceiling_schema", "read_analytics", "read_tracks", "reference_rules_schema",
    "season_prices", "track_coverage", "track_path", "track_series", "tracks_table",
    "tradable_prices", "write_analytics",
]
