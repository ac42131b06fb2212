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

How far back a season's market reaches (:func:`history_start`) is derived, not a constant: far
enough that every asset has, before the first cycle, the bars of the reference rules' longest
window (:func:`arena.scoring.reference_rules.longest_warmup`: the 12-month momentum, 365 days of
crypto, 252 NYSE sessions) on each grid its season tables may use, counted on its own calendar
(so the holidays of a year of NYSE sessions are in it), and never less than what the briefing's
indicators read (:data:`BRIEFING_HISTORY_DAYS`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from arena.core.errors import BadArgument
from arena.core.sessions import CRYPTO, NYSE, expected_bars, utc
from arena.core.universe import Universe, UniverseError
from arena.data.ingest import IngestError, run_ingest
from arena.data.lake import Lake, PartitionKey, write_text
from arena.data.providers import make_provider, series_base
from arena.ledger.store import Ledger
from arena.market.asof import provider_of
from arena.market.clocks import PERIODS_PER_YEAR
from arena.pipeline.season_config import SeasonConfig
from arena.scoring.reference_rules import longest_warmup

WATCH_INTERVAL = "15m"  # what the invalidation monitor reads
WATCH_LOOKBACK = dt.timedelta(days=1)  # a watch fetch starts here at most (the lake's tail first)
# what the briefing's indicators read before the first cycle: 26 weekly candles, the screen's
# and the RSIs' 100 daily bars (100 NYSE sessions span about 146 days)
BRIEFING_HISTORY_DAYS = 220
SEASON_CALENDARS = (CRYPTO, NYSE)  # the calendars a season's assets trade on


def history_bars(calendar: str, grid: str) -> int:
    """Bars of ``grid`` (``1h`` or ``1d``) on ``calendar`` that the longest reference rule needs
    before the first bar it is scored on (8760 crypto hours, 252 NYSE sessions, 1764 of their
    hourly bars)."""
    return longest_warmup(PERIODS_PER_YEAR[(calendar, grid)])


def history_start(first_cycle: pd.Timestamp,
                  calendars: Iterable[str] = SEASON_CALENDARS) -> pd.Timestamp:
    """Where a season's market starts (a UTC midnight): the latest day from which every grid of
    every calendar in ``calendars`` has :func:`history_bars` bars opening before
    ``first_cycle`` (as its calendar expects them: NYSE sessions, early closes and holidays
    counted), and at least :data:`BRIEFING_HISTORY_DAYS` before the first cycle's day."""
    first = utc(first_cycle)
    start = first.normalize() - pd.Timedelta(days=BRIEFING_HISTORY_DAYS)
    for calendar in calendars:
        for grid in ("1h", "1d"):
            if (calendar, grid) not in PERIODS_PER_YEAR:
                continue
            needed = history_bars(calendar, grid)
            per_day = PERIODS_PER_YEAR[(calendar, grid)] / 365.0
            # a window generous for any calendar (a NYSE year has about 252 sessions in 365 days)
            reach = pd.Timedelta(days=math.ceil(1.6 * needed / per_day) + 10)
            opens = expected_bars(calendar, grid, first - reach, first)
            start = min(start, opens[-needed].normalize())
    return start


HISTORY_SLACK = dt.timedelta(days=5)  # a stored series may open after a weekend or holidays


def season_window_start(config: SeasonConfig, lake: Lake, provider: str, interval: str,
                        universe: Universe, default: pd.Timestamp) -> pd.Timestamp:
    """Where an ingest into the season's lake starts when none is asked for: ``default`` (the
    ingest's usual window) once every asset's ``interval`` series reaches back to the season's
    :func:`history_start`, else that start, so a live season's first ingest (and one after an
    asset was added or lost its history) fetches what the reference rules need. The stored
    bars before ``default`` stay as they are either way."""
    needed = history_start(config.first, {a.calendar for a in universe} or SEASON_CALENDARS)
    if needed >= default:
        return default
    tried = set(_reached_back(lake).get(provider, {}).get(needed.isoformat(), ()))
    for asset in universe:
        if asset.symbol in tried:  # fetched from there once: what the vendor had is stored
            continue
        key = PartitionKey(provider, interval, asset.symbol)
        if not lake.has(key):
            return needed
        stamps = lake.read_bar_table(key, ("timestamp",)).column(0)
        if len(stamps) == 0 or stamps[0].as_py() > needed + HISTORY_SLACK:
            return needed
    return default


REACHED_BACK = Path("season") / "history.json"  # provider -> history start -> symbols fetched


def _reached_back(lake: Lake) -> dict[str, dict[str, list[str]]]:
    try:
        return json.loads((lake.root / REACHED_BACK).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return {}


def note_reached_back(lake: Lake, provider: str, start: pd.Timestamp,
                      symbols: Iterable[str]) -> None:
    """Record that ``symbols`` were fetched from the season's history ``start``: a listing
    younger than that has all the history there is, and the next runs take the usual window
    (:func:`season_window_start`)."""
    known = _reached_back(lake)
    at = known.setdefault(provider, {}).setdefault(utc(start).isoformat(), [])
    at[:] = sorted(set(at) | set(symbols))
    write_text(lake.root / REACHED_BACK, json.dumps(known, indent=1, sort_keys=True) + "\n")


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
    sources = season.sources
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
