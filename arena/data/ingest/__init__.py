"""Ingest: fetch bars from a provider, derive coarser intervals, validate, publish atomically.

The steps are plain functions so the CLI (in-process, with a progress bar) and the Prefect flow
(one task per asset) run the same code:

1. :func:`fetch_asset` - one provider call per asset at the provider's finest interval (the
   *base*), only bars closed by ``end``; funding rates for crypto;
2. :func:`build_partitions` - merge with what the lake holds, derive ``1h/4h/1d/1w`` from the
   merged base series (stock 4h candles stay inside one session; only complete bars);
3. :func:`validate_partitions` - one Great Expectations run over the concatenated batch;
4. :func:`finish_ingest` - publication, all-or-nothing *per asset*, and the run's manifest.

One bad asset blocks no one: an asset whose fetch, build, expectations or publication failed
keeps its last good partitions byte-for-byte (its new files go to
``quarantine/<run>/<symbol>/`` with the reason), the others publish, and the manifest gives every
asset's outcome. Fetch and validation run without any lock; only the read-merge-swap of the
publication holds the lake's writer lock, and an asset whose stored partitions another run
replaced since they were read is merged again (and validated again) under it: overlapping runs
never lose each other's bars.

A module per step, each importing only the steps before it (an import contract checks it):
:mod:`~arena.data.ingest.plan` (the run's window, base interval and assets, before any fetch),
:mod:`~arena.data.ingest.fetch`, :mod:`~arena.data.ingest.build`,
:mod:`~arena.data.ingest.validate` (with the Data Docs), :mod:`~arena.data.ingest.publish` (with
the quarantine and the manifest) and :mod:`~arena.data.ingest.run` (:func:`run_ingest`: the
steps in order); their errors and an asset's outcomes are in :mod:`~arena.data.ingest.errors`,
below them all. The names below are the ingest's public ones, wherever they are defined (the
package's attribute ``fetch`` is the fetch step, not its module).
"""

from __future__ import annotations

from arena.data.ingest.build import (
    DERIVE_CONTEXT,
    AssetPartitions,
    build_partitions,
    derive_complete,
    merge_earnings,
)
from arena.data.ingest.errors import (
    FAILED,
    FETCH_FAILED,
    HELD,
    PUBLISHED,
    QUARANTINED,
    IngestError,
    IngestRequestError,
    LakeWriteError,
)
from arena.data.ingest.fetch import (
    EARNINGS_HORIZON,
    FETCH_RETRY,
    FETCH_WIDTH,
    RESTATEMENT_OVERLAP,
    AssetFetch,
    fetch,
    fetch_asset,
    restated_bars,
)
from arena.data.ingest.plan import (
    IngestPlan,
    base_interval,
    default_window,
    new_run_id,
    plan_ingest,
)
from arena.data.ingest.publish import IngestResult, ProgressFn, finish_ingest
from arena.data.ingest.run import run_ingest
from arena.data.ingest.validate import DOCS_BUILT, docs_beside, validate_partitions

__all__ = [
    "DERIVE_CONTEXT", "DOCS_BUILT", "EARNINGS_HORIZON", "FAILED", "FETCH_FAILED", "FETCH_RETRY",
    "FETCH_WIDTH", "HELD", "PUBLISHED", "QUARANTINED", "RESTATEMENT_OVERLAP", "AssetFetch",
    "AssetPartitions", "IngestError", "IngestPlan", "IngestRequestError", "IngestResult",
    "LakeWriteError", "ProgressFn", "base_interval", "build_partitions", "default_window",
    "derive_complete", "docs_beside", "fetch", "fetch_asset", "finish_ingest", "merge_earnings",
    "new_run_id", "plan_ingest", "restated_bars", "run_ingest", "validate_partitions",
]
