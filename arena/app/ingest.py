"""The ingest job: one provider's bars into a lake, validated, published per asset.

Into a season's lake the season decides (:func:`arena.pipeline.season_ingest.season_ingest`):
the provider (its only one when none is named), the assets that provider serves, the synthetic
seed, and a files drop folder standing in for a blocked vendor; after the run, the held stocks'
15-minute bars follow when the provider's series are built from coarser bars (the monitor's
watch run). A lake without a season takes the universe, or the symbols asked for.

A run some assets of which did not publish is a result, not an exception: the published assets
stay published, and :attr:`IngestOutcome.ok` is False. A lake its disk refuses to write
(:class:`~arena.data.ingest.LakeWriteError`) stops the run and propagates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from arena.app.effects import INLINE, Effects
from arena.app.handle import SeasonHandle
from arena.core.errors import BadArgument
from arena.core.universe import load_universe
from arena.data.ingest import (
    IngestError,
    LakeWriteError,
    ProgressFn,
    base_interval,
    default_window,
    run_ingest,
)
from arena.data.lake import Lake
from arena.data.manifest import IngestSummary
from arena.data.providers import make_provider
from arena.pipeline.season_ingest import (
    note_reached_back,
    season_ingest,
    season_window_start,
    watch_after_ingest,
)


@dataclass
class IngestOutcome:
    """What an ingest run published (its manifest, typed and as written), whether every asset
    published (``error``: the run's failure naming the others), and the held stocks' 15-minute
    bars fetched after it for the monitor (``watched``; ``watch_problems``: provider -> why)."""

    manifest: dict[str, object]
    summary: IngestSummary | None
    season: str | None = None
    error: IngestError | None = None
    watched: list[str] = field(default_factory=list)
    watch_problems: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.watch_problems


@dataclass(frozen=True)
class IngestRequest:
    """What an ingest fetches: ``source``'s bars (None: the season's only provider, or the
    synthetic market) of ``symbols`` (None: the season's or the universe's assets) over
    ``[start, end)`` (None: the default window, see :func:`ingest`); the provider built with the
    synthetic ``seed``, the files ``drop`` folder and its finest ``drop_interval``, standing
    ``instead_of`` a season's vendor; ``full``: re-fetch every stored bar to look for
    restatements; ``data_docs``: build Great Expectations' Data Docs for this run (else the
    first run of the day and a failed validation build them)."""

    source: str | None = None
    symbols: Sequence[str] | None = None
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    seed: int | None = None
    drop: str | None = None
    drop_interval: str = "1h"
    instead_of: str | None = None
    full: bool = False
    data_docs: bool = False


def ingest(lake: Lake, request: IngestRequest = IngestRequest(), *,
           season: SeasonHandle | None = None, effects: Effects = INLINE,
           progress: ProgressFn | None = None) -> IngestOutcome:
    """Ingest the ``request``'s bars (default window: the last 200 days up to the current hour;
    into a season's lake, from the season's history start until every asset's series reaches
    back to it: :func:`~arena.pipeline.season_ingest.season_window_start`) into ``lake``, the
    lake's ``season`` deciding what it takes (see the module docstring); ``progress`` hears of
    each asset fetched, validated and published."""
    r = request
    symbols, source, seed = r.symbols, r.source, r.seed
    everything = load_universe()  # a season's own assets come from its plan, GLD and USO too
    universe = (everything.select(list(symbols)) if symbols
                else everything if season is not None else everything.select(None))
    if season is not None:
        plan = season_ingest(season.config, universe, source, seed, explicit=bool(symbols),
                             instead_of=r.instead_of)
        universe, source, seed = plan.universe, plan.source, plan.seed
    elif r.instead_of is not None:
        raise BadArgument("--instead-of is for a season's lake (arena season init): the files "
                          "folder fills the partitions of the season's vendor")
    provider = make_provider(source or "synthetic", seed=seed, drop=r.drop,
                             drop_interval=r.drop_interval, instead_of=r.instead_of)
    now = effects.clock()
    default_start, default_end = default_window(now)
    reach_back = None
    if season is not None and r.start is None:  # the history the season's rules need, once
        usual = default_start
        default_start = season_window_start(season.config, lake, provider.name,
                                            base_interval(provider), universe, default_start)
        reach_back = default_start if default_start < usual else None
    error: IngestError | None = None
    try:
        done = run_ingest(provider, universe, start=r.start or default_start,
                          end=r.end or default_end, lake=lake, now=now, progress=progress,
                          full=r.full, runner=effects.runner, data_docs=r.data_docs)
        manifest, summary = done.manifest, done.summary
    except LakeWriteError:  # a full or read-only disk: nothing more can be written
        raise
    except IngestError as exc:  # one asset or more did not publish; the others did
        error, manifest, summary = exc, exc.manifest, exc.summary
    if reach_back is not None and summary is not None and summary.published:
        note_reached_back(lake, provider.name, reach_back, summary.published)
    out = IngestOutcome(manifest, summary, season.id if season else None, error)
    if season is not None and summary is not None:
        out.watched, out.watch_problems = watch_after_ingest(
            lake, season.config, provider.name, end=summary.end_used, now=now,
            drop=r.drop if r.instead_of else None)
    return out
