"""Ingest into a season's lake: the season decides the providers and the assets, and the stocks
a contestant holds get the 15-minute bars the invalidation monitor watches.

A season takes each asset class from one provider (``season.json``). An ingest run fetches one
provider's assets (:func:`season_ingest`); while a vendor blocks, a files drop folder stands in
for it (``instead_of``): its bars fill that vendor's partitions, so the cycle reads them where it
always does, and when the vendor is back its re-fetched bars are compared with them like any
restatement (see ``data_lake/README.md``).

The monitor reads 15-minute bars. A provider whose lake series are built from them (Binance,
the synthetic market) has them already; Yahoo's stock series are built from hourly bars, so the
held stocks' 15-minute bars are fetched by a *watch* run of their own (:func:`ingest_watched`,
after every season ingest and before every monitor tick): Yahoo keeps them for about 60 days,
and only the positions open now need them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from arena.core.errors import BadArgument
from arena.core.universe import Universe, UniverseError
from arena.data.ingest import IngestError, run_ingest
from arena.data.lake import Lake
from arena.data.providers import make_provider, series_base
from arena.ledger.store import Ledger
from arena.market.asof import provider_of
from arena.pipeline.season_config import SeasonConfig

WATCH_INTERVAL = "15m"  # what the invalidation monitor reads
WATCH_LOOKBACK = pd.Timedelta(days=1)  # a watch fetch starts here at most (the lake's tail first)


@dataclass(frozen=True)
class SeasonIngest:
    """What one ingest run into a season's lake takes."""

    universe: Universe  # the season's assets that ``provider`` serves
    source: str  # what fetches them: the provider, or ``files`` standing in for it
    provider: str  # whose partitions they fill
    seed: int | None


def season_ingest(season: SeasonConfig, universe: Universe, source: str | None,
                  seed: int | None, *, explicit: bool, instead_of: str | None = None
                  ) -> SeasonIngest:
    """The assets the season takes from ``source`` (its only provider when none is named; with
    ``instead_of``, the files folder standing in for that provider) and the season's synthetic
    seed. ``explicit``: the caller named the symbols, and each must be one of them."""
    sources = sorted(set(season.providers.values()))
    provider = instead_of or source
    if instead_of is not None and source != "files":
        raise BadArgument(f"only a files drop folder stands in for a vendor (--source files), "
                         f"not {source}")
    if provider is None:
        if len(sources) > 1:
            raise BadArgument(f"season {season.id!r} takes bars from {' and '.join(sources)}: "
                             "name one with --source")
        provider = source = sources[0]
    if provider not in sources:
        hint = (" (while a vendor blocks, a files drop folder stands in for it: --source files "
                "--instead-of VENDOR)" if source == "files" else "")
        raise BadArgument(f"season {season.id!r} takes no bars from {provider} (its providers: "
                         f"{', '.join(f'{c} from {p}' for c, p in season.providers.items())})"
                         + hint)
    if seed is not None and season.seed is not None and seed != season.seed:
        raise BadArgument(f"season {season.id!r} uses the synthetic seed {season.seed}, not {seed}")
    mine = [a.symbol for a in universe
            if a.symbol in season.symbols and season.providers.get(a.asset_class) == provider]
    outside = [a.symbol for a in universe if a.symbol not in mine] if explicit else []
    if outside or not mine:
        raise UniverseError(f"season {season.id!r} takes {', '.join(outside) or 'none of them'}"
                            f" from another provider or not at all (--symbols)")
    return SeasonIngest(universe.select(mine), str(source), provider,
                        season.seed if seed is None else seed)


def held_symbols(ledger: Ledger) -> list[str]:
    """The symbols any contestant of the season's ledger holds now."""
    names = sorted({k.contestant for k in ledger.records()})
    return sorted({s for name in names for s in ledger.portfolio(name).positions})


def ingest_watched(lake: Lake, season: SeasonConfig, symbols: Sequence[str], *,
                   end: pd.Timestamp, now: pd.Timestamp, sources: Sequence[str] | None = None,
                   drop: str | None = None) -> dict[str, str]:
    """Ingest the 15-minute bars of ``symbols`` (the held ones) up to ``end`` from each one's
    season provider (``sources``: only those), from :data:`WATCH_LOOKBACK` before ``end`` at
    most (each run also re-reads the stored tail). Returns provider -> what went wrong, for
    the runs that did not publish every asset: the monitor then says which bars are missing.
    ``drop``: the files folder standing in for every provider (a blocked vendor)."""
    universe = season.universe()
    by_source: dict[str, list[str]] = {}
    for symbol in symbols:
        by_source.setdefault(provider_of(season.market, universe[symbol]), []).append(symbol)
    problems = {}
    for source, mine in sorted(by_source.items()):
        if sources is not None and source not in sources:
            continue
        provider = (make_provider("files", drop=drop, drop_interval=WATCH_INTERVAL,
                                  instead_of=source) if drop is not None
                    else make_provider(source, seed=season.seed))
        try:
            run_ingest(provider, universe.select(mine), start=end - WATCH_LOOKBACK, end=end,
                       lake=lake, now=min(now, end), interval=WATCH_INTERVAL)
        except (IngestError, ValueError) as exc:
            problems[source] = str(exc)
    return problems


def watched_by_base(season: SeasonConfig, provider: str, symbols: Sequence[str]) -> list[str]:
    """The held ``symbols`` that ``provider``'s series do not give 15-minute bars (its series
    are built from coarser ones, :func:`~arena.data.providers.series_base`): they need a watch
    run after the provider's ingest."""
    if series_base(provider) in (None, WATCH_INTERVAL):
        return []
    universe = season.universe()
    return [s for s in symbols if provider_of(season.market, universe[s]) == provider]


def watch_after_ingest(lake: Lake, season: SeasonConfig, provider: str, *, end: pd.Timestamp,
                       now: pd.Timestamp, drop: str | None = None
                       ) -> tuple[list[str], dict[str, str]]:
    """After an ingest of ``provider`` into the season's lake up to ``end``: the watch run of
    the held symbols that need one (:func:`watched_by_base`). Returns those symbols and, as
    :func:`ingest_watched`, what went wrong. ``drop``: the files folder standing in for the
    provider (its 15-minute files)."""
    symbols = watched_by_base(season, provider, held_symbols(Ledger(lake)))
    if not symbols:
        return [], {}
    return symbols, ingest_watched(lake, season, symbols, end=end, now=now, sources=[provider],
                                   drop=drop)
