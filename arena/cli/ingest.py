"""``arena ingest``: the ingest job (:func:`arena.app.ingest.ingest`) from the command line."""

from __future__ import annotations

import sys
from typing import Annotated

from cyclopts import Parameter

from arena.cli._options import Interval, Json, Lake, Seed, Source, StandIn
from arena.cli._render import print_json, progress, say

NAME = "arena ingest"


def ingest(*, source: Source | None = None, start: str | None = None, end: str | None = None,
           symbols: str | None = None, seed: Seed = None, drop: str | None = None,
           drop_interval: Interval = "1h",
           instead_of: Annotated[StandIn | None, Parameter(name="--instead-of")] = None,
           full: bool = False, data_docs: bool = False, lake: Lake = None,
           json: Json = False) -> int:
    """Fetch (or generate) bars into the lake: validated, published all-or-nothing per asset.

    Exit 0 published, 1 an asset did not publish (the others did), 2 unusable arguments.

    Parameters
    ----------
    source
        market-data provider (default: the season's, when the lake holds one; else synthetic,
        the embedded default)
    start
        window start, ISO-8601 UTC (default: 200 days before --end)
    end
        window end, exclusive, ISO-8601 UTC (default: now, whole hour)
    symbols
        comma-separated house symbols (default: the season's, or the default season's assets: GLD and USO only when named)
    drop
        drop folder of the files source (or $ARENA_DROP_DIR)
    drop_interval
        finest interval the drop folder holds
    instead_of
        while a season's vendor blocks: the drop folder (--source files) stands in for it,
        filling its partitions
    full
        re-fetch every stored bar to look for restatements (default: the last two days)
    data_docs
        build Great Expectations' Data Docs for this run (default: the first run of each UTC
        day and every run that fails validation build them)
    json
        print the run manifest as JSON
    """
    from arena.app.handle import SeasonHandle
    from arena.app.ingest import IngestRequest
    from arena.app.ingest import ingest as run
    from arena.app.params import optional_time, symbol_list
    from arena.data.lake import Lake

    where = Lake(lake)
    with progress(enabled=not json and sys.stderr.isatty()) as notify:
        asked = IngestRequest(source, symbol_list(symbols), optional_time(start, "--start"),
                              optional_time(end, "--end"), seed, drop, drop_interval,
                              instead_of, full, data_docs)
        out = run(where, asked, season=SeasonHandle.find(where), progress=notify)
    for provider, why in out.watch_problems.items():
        say(NAME, f"the 15-minute bars of the held {', '.join(out.watched)} for the monitor "
                  f"({provider}): {why}")
    if json:
        print_json(out.manifest)
    elif out.error is None:
        print(render_summary(out.summary))
    if out.error is not None:
        say(NAME, str(out.error))
        for asset in out.summary.assets if out.summary else ():
            why = f": {asset.reason}" if asset.reason else ""
            print(f"  {asset.symbol:<8} {asset.status}{why}", file=sys.stderr)
    return 0 if out.ok else 1


def render_summary(summary) -> str:
    """A short human summary of a published ingest run."""
    label = ("SYNTHETIC market data (embedded default, not real prices)" if summary.synthetic
             else f"market data from {summary.provider}")
    checks = summary.validation
    return "\n".join([
        f"arena ingest {summary.run_id}: {label}",
        f"  window      {summary.start} .. {summary.end}  ({len(summary.assets)} assets, base "
        f"{summary.base_interval})",
        "  bars        " + ", ".join(f"{iv} {n:,}" for iv, n in summary.bars_by_interval.items()),
        f"  new bars    {summary.new_bars:,} base bars added, {summary.revised_bars} revised",
        f"  validation  {checks.summary if checks else 'not run'}",
        "  timings     " + ", ".join(f"{k} {v:.2f}s" for k, v in summary.timings.items()),
        f"  validation  {checks.page if checks else '-'} (every run: "
        f"{checks.index if checks else '-'}; Data Docs, online: "
        f"{(checks.data_docs if checks else None) or '-'})",
        f"  published   {summary.market.rstrip('/')}/bars (manifest {summary.run_id}.json)",
    ])
