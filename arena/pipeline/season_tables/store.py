"""The season's analytics folder, ``<lake>/analytics/<table>.parquet``: what a build hands over
(:class:`Analytics`), the error of a build that cannot be made, the columns of the tables
written even when empty, and the folder written whole (staged, then swapped in with two
renames, the build's state beside the tables) and read a table at a time."""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from arena.core.errors import Failed
from arena.core.sessions import TS_UNIT
from arena.data.lake import Lake, swap_dir
from arena.pipeline.season_state import SeasonState

ANALYTICS_DIR = "analytics"
BAND = (0.05, 0.25, 0.5, 0.75, 0.95)
BAND_COLUMNS = tuple(f"q{round(q * 100):02d}" for q in BAND)


class AnalyticsError(Failed, RuntimeError):
    """The season's numbers cannot be built (no cycles...); nothing was replaced."""


@dataclass
class Analytics:
    """The tables of one build; how long each step took (wall and CPU seconds); how many
    cycles of each table that grows with the season were kept from the previous build
    (``cycle_prices``, ``arena_luck``; 0: computed from scratch) and, if none, why; the state
    the next build starts from (written with the tables)."""

    tables: dict[str, pd.DataFrame]
    seconds: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)  # the steps' CPU seconds (this process)
    kept: dict[str, int] = field(default_factory=dict)
    why: dict[str, str] = field(default_factory=dict)
    state: SeasonState | None = None


# the per-asset tables' columns, written even when no asset has one yet (a season's first cycle:
# a zero-skill distribution needs two bars on or after it), so dbt reads typed empty tables
@cache
def luck_ceiling_schema() -> pa.Schema:
    return pa.schema(
        [(c, pa.string()) for c in ("symbol", "asset_class", "grid")]
        + [(c, pa.int64()) for c in ("bars", "decision_steps")]
        + [(c, pa.string()) for c in ("step", "draw")]
        + [(c, pa.int64()) for c in ("players", "seed")]
        + [(c, pa.float64()) for c in ("cost_rate", *(f"q{round(q * 100):02d}" for q in BAND),
                                       "mean", "ceiling")])


@cache
def reference_rules_schema() -> pa.Schema:
    return pa.schema(
        [(c, pa.string()) for c in ("symbol", "rule", "kind")]
        + [(c, pa.float64()) for c in ("return", "turnover", "fees", "percentile", "rank_score")]
        + [("status", pa.string())] + [(c, pa.int64()) for c in ("history_bars", "needed_bars")]
        + [("rank", pa.float64())])


@cache
def asset_tracks_schema() -> pa.Schema:
    stamp = pa.timestamp(TS_UNIT, tz="UTC")
    return pa.schema(
        [(c, pa.string()) for c in ("entrant", "symbol", "status")]
        + [("season_start", stamp), ("season_end", stamp), ("first_submitted_at", stamp),
           ("grid", pa.string()), ("bars", pa.int64())]
        + [(c, pa.float64()) for c in ("return", "turnover", "fees", "coverage", "eligibility")]
        + [("eligible", pa.bool_())]
        + [(c, pa.float64()) for c in ("percentile", "rank_score")]
        + [(c, pa.int64()) for c in ("rank", "players", "seed")]
        + [(c, pa.float64()) for c in ("cost_rate", "ceiling")])


@cache
def contest_assets_schema() -> pa.Schema:
    """The ``contest_assets`` table: one row per asset of the season's contest (none when the
    season is not one): its place in the contest's list, the fee its tracks and zero-skill
    players pay per unit of position change, the share of the season a track must cover to be
    ranked, the prizes by place and their sum, in the contest's currency, and the correlation
    bound the assets passed when the contest was made."""
    return pa.schema(
        [(c, pa.string()) for c in ("contest", "symbol", "name")]
        + [("ordinal", pa.int64())]
        + [(c, pa.float64()) for c in ("fee_rate", "eligibility")]
        + [("prizes", pa.list_(pa.float64())), ("prize_pool", pa.float64()),
           ("currency", pa.string()), ("max_correlation", pa.float64())])


def knowledge_schema() -> pa.Schema:
    """The ``knowledge`` table's (:mod:`arena.pipeline.knowledge`): typed when it has no rows."""
    return pa.schema([("contestant", pa.string()), ("model", pa.string()),
                      ("knowledge_cutoff", pa.string()), ("contaminated", pa.bool_()),
                      ("contamination", pa.string())])


def blinding_schema() -> pa.Schema:
    """The ``blinding`` table's (:mod:`arena.pipeline.blind_reveal`): a blind season's secret,
    one row per asset once the season has ended; typed when it has no rows (before the end, or
    a season that is not blind)."""
    return pa.schema([("symbol", pa.string()), ("neutral_name", pa.string()),
                      ("price_factor", pa.float64()), ("shift_weeks", pa.int64()),
                      ("sectors_shown", pa.bool_())])


def analytics_dir(lake: Lake) -> Path:
    return lake.root / ANALYTICS_DIR


# the tables written with their schema, whatever their frame's dtypes: a list column (the
# prizes) is an object column in pandas, of no type when it is empty
WRITTEN_AS = {"contest_assets": contest_assets_schema, "knowledge": knowledge_schema,
              "blinding": blinding_schema}


def write_analytics(lake: Lake, analytics: Analytics) -> Path:
    """Publish the tables as ``<lake>/analytics/<table>.parquet`` (those of
    :data:`WRITTEN_AS` with their schema) and the build's state in ``<lake>/analytics/_state/``,
    replacing the previous set as a whole (staged, then swapped in with two renames)."""
    final = analytics_dir(lake)
    staging = lake.root / f".{ANALYTICS_DIR}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        for name, frame in analytics.tables.items():
            schema = WRITTEN_AS[name]() if name in WRITTEN_AS else None
            table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
            pq.write_table(table, staging / f"{name}.parquet", compression="zstd")
        if analytics.state is not None:  # after the tables, whose files it vouches for
            analytics.state.write(staging)
        swap_dir(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def read_analytics(lake: Lake, name: str) -> pd.DataFrame:
    path = analytics_dir(lake) / f"{name}.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the season's analytics first")
    return pd.read_parquet(path)
