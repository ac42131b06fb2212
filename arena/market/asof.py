"""Reading the lake *as of* a cycle time: only what was known when the cycle ran.

A bar is known at ``at`` once it has **closed** (:func:`arena.core.sessions.bar_close_times`: open +
interval, cut at the session close for stocks), so a weekly bar still forming, or a stock's daily
bar before the session close, is never returned. Funding rates count when stamped strictly before
``at`` (the window convention of an ingest that ends at ``at``: ``[start, end)``), so the answer is
the same whether or not the lake already holds later data.

A cycle reads many series at once: :func:`scan_closed_bars` answers a list of
:func:`closed_bars` reads from one scan of the partition files they name (each file read once,
only the columns asked for, close times computed once per calendar and interval), each answer
exactly what :func:`closed_bars` returns. The lake keeps the files it read
(:mod:`arena.data.bar_cache`, by each file's identity), so a cycle's later scans, its monitor
window and its daily report open no file a second time, nor does a replay's next day while no
ingest has replaced it.

A price can be known and still **stale**: an asset whose ingest failed keeps its last good bars
in the lake (ingest publishes all-or-nothing per asset), so its last price is older than the
calendar allows. :func:`is_stale` is that rule, :func:`stale_prices` applies it to a cycle's
prices; the cycle's market carries the answer (:attr:`arena.market.types.MarketData.stale`).
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.core.errors import Failed
from arena.core.sessions import (
    INTERVAL_ORDER,
    NY,
    TS_UNIT,
    bar_close_times,
    ceil_micros,
    expected_bars,
    utc_index,
)
from arena.core.universe import Asset, Universe, UniverseError
from arena.data.bars import drop_unclosed
from arena.data.errors import DamagedFile
from arena.data.lake import Lake, PartitionKey, TableKey
from arena.data.providers import series_base
from arena.data.providers.base import BAR_COLUMNS, empty_bars

Providers = str | Mapping[str, str]
"""One provider's name for every asset, or one per asset class (``{"crypto": "ccxt", "stock":
"yfinance", "etf": "yfinance"}``)."""


def provider_of(providers: Providers, asset: Asset) -> str:
    """The provider whose partitions hold ``asset``'s bars."""
    if isinstance(providers, str):
        return providers
    try:
        return providers[asset.asset_class]
    except KeyError:
        raise UniverseError(f"no provider is given for {asset.asset_class} assets "
                            f"({asset.symbol})") from None


def provider_label(providers: Providers, assets: Iterable[Asset]) -> str:
    """The name a market shows for its sources: the provider's, or ``a+b`` for several."""
    if isinstance(providers, str):
        return providers
    return "+".join(sorted({provider_of(providers, a) for a in assets}))


PRICE_LOOKBACK = dt.timedelta(days=14)  # longer than any market closure: a last print exists
# closed bars of the price interval the calendar expects after the last one, tolerated before a
# price is stale: one (a vendor a bar late); two missing 15-minute bars make it stale
MAX_MISSING_BARS = 1


def closed_bars(lake: Lake, provider: str, asset: Asset, interval: str, at: pd.Timestamp,
                limit: int | None = None, since: pd.Timestamp | None = None) -> pd.DataFrame:
    """The ``interval`` bars of ``asset`` that closed by ``at`` (the last ``limit`` of them),
    oldest first. ``since`` only narrows the read (open time ``>= since``)."""
    bars = lake.read_bars(PartitionKey(provider, interval, asset.symbol), start=since, end=at)
    bars = drop_unclosed(bars, interval, asset.calendar, at)
    if limit is not None:
        bars = bars.iloc[-limit:] if limit > 0 else bars.iloc[0:0]
    return bars.reset_index(drop=True)


def _price_ladder(provider: str) -> tuple[str, ...]:
    """The intervals a price may come from, finest first: from the provider's series base on
    (:func:`arena.data.providers.series_base`). A finer partition is a watch series, fetched
    for the monitor only while a stock is held: a price read from it would depend on when it
    was fetched, and the season's tables, computed later, would not see what the cycle saw."""
    base = series_base(provider)
    return INTERVAL_ORDER[INTERVAL_ORDER.index(base):] if base else tuple(INTERVAL_ORDER)


def price_interval(lake: Lake, provider: str, symbol: str) -> str | None:
    """The finest interval of the provider's series the lake holds for ``symbol`` (where the
    cycle price comes from, see :func:`_price_ladder`); a partition its publication recorded
    counts though its file is gone (its read is then damage, never a coarser price)."""
    for interval in _price_ladder(provider):
        key = PartitionKey(provider, interval, symbol)
        if lake.has(key) or lake.recorded(key):
            return interval
    return None


def last_price(lake: Lake, provider: str, asset: Asset, at: pd.Timestamp
               ) -> tuple[float, pd.Timestamp] | None:
    """The last completed price at ``at`` and when it printed (the close time of its bar).

    Read from the finest interval the lake holds (15 minutes on the synthetic provider), so a
    stock on a Saturday shows Friday's closing print. ``None`` when the lake has no closed bar.
    """
    interval = price_interval(lake, provider, asset.symbol)
    if interval is None:
        return None
    bars = closed_bars(lake, provider, asset, interval, at, limit=1, since=at - PRICE_LOOKBACK)
    if bars.empty:  # a long gap: read the whole partition
        bars = closed_bars(lake, provider, asset, interval, at, limit=1)
    if bars.empty:
        return None
    closed = bar_close_times(asset.calendar, interval, pd.DatetimeIndex(bars["timestamp"]))[0]
    return float(bars["close"].iloc[-1]), closed


def is_stale(calendar: str, interval: str, printed_at: pd.Timestamp, at: pd.Timestamp) -> bool:
    """Whether a price that printed at ``printed_at`` (the close time of its ``interval`` bar) is
    stale at ``at``: more than :data:`MAX_MISSING_BARS` bars of ``interval`` that the calendar
    expects after it (opened at or after ``printed_at``) have closed by ``at``.

    Only bars the calendar expects count, so a stock over a weekend, a holiday or the night is
    never stale on Friday's close, while a crypto asset whose last hourly bar closed five hours
    ago is (five hourly bars missing). Pure: the calendar is the only input besides the times.
    """
    opens = expected_bars(calendar, interval, printed_at, at)
    if len(opens) <= MAX_MISSING_BARS:
        return False
    return int((bar_close_times(calendar, interval, opens) <= at).sum()) > MAX_MISSING_BARS


def stale_prices(prices: Iterable[tuple[Asset, str, pd.Timestamp]], at: pd.Timestamp
                 ) -> dict[str, pd.Timestamp]:
    """The assets of ``(asset, price interval, printed_at)`` whose price is stale at ``at``
    (:func:`is_stale`), each with when its last price printed (stale since then)."""
    return {a.symbol: printed for a, interval, printed in prices
            if is_stale(a.calendar, interval, printed, at)}


def price_intervals(lake: Lake, provider: str) -> dict[str, str]:
    """:func:`price_interval` of every symbol ``provider`` has bars of (one listing of the lake
    and one of its publications' records)."""
    rank = {iv: i for i, iv in enumerate(_price_ladder(provider))}
    out: dict[str, str] = {}
    for key in {*lake.partitions(provider), *lake.recorded_partitions(provider)}:
        if key.interval in rank and (key.symbol not in out
                                     or rank[key.interval] < rank[out[key.symbol]]):
            out[key.symbol] = key.interval
    return out


def prices_of(series: Sequence[tuple[Asset, str, pd.DataFrame]]
              ) -> list[tuple[float, pd.Timestamp] | None]:
    """The last bar of each ``(asset, interval, closed bars)`` as :func:`last_price` returns it
    (its close and its close time), close times computed once per calendar and interval."""
    out: list[tuple[float, pd.Timestamp] | None] = [None] * len(series)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, (asset, interval, bars) in enumerate(series):
        if not bars.empty:
            groups[(asset.calendar, interval)].append(i)
    for (calendar, interval), idx in groups.items():
        opens = pd.DatetimeIndex([series[i][2]["timestamp"].iloc[-1] for i in idx])
        for i, closed in zip(idx, bar_close_times(calendar, interval, opens), strict=True):
            out[i] = float(series[i][2]["close"].iloc[-1]), closed
    return out


class BarRead(NamedTuple):
    """One series a cycle reads: ``closed_bars(lake, provider, asset, interval, at, limit)``.

    ``window`` only narrows the first read (bars opened in ``[at - window, at)``); a series with
    fewer than ``limit`` closed bars in it is read again whole, so the answer never depends on it.
    ``columns`` narrows the frame to those columns of :func:`closed_bars`' (``timestamp`` always
    included): a file is decoded only for the columns its reads ask for, which on a 15-minute
    partition read for its last price (:data:`LAST_PRINT`) is most of the scan's work.
    """

    asset: Asset
    provider: str
    interval: str
    limit: int | None  # None: every closed bar
    window: pd.Timedelta | None = None
    columns: tuple[str, ...] | None = None  # None: every bar column; else these, in bar order


LAST_PRINT = ("timestamp", "close")
"""The columns a price read needs (:func:`prices_of`): a scan reads no others from their files."""


def scan_closed_bars(lake: Lake, reads: Sequence[BarRead], at: pd.Timestamp, *,
                     damage: dict[str, str] | None = None) -> list[pd.DataFrame]:
    """:func:`closed_bars` of every read (its ``limit``, no ``since``), from one scan of the
    partitions they name (plus one more of the few series a ``window`` left short); each frame
    is exactly what :func:`closed_bars` returns.

    Every file read is checked: its bytes against the digest its publication recorded, its
    pages' checksums, its rows (:func:`arena.data.sanity.bar_problem`). A file that is not
    the one published, cannot be read or holds bars no validated series has raises
    :class:`~arena.data.errors.DamagedFile` - or, given ``damage``, is recorded there (symbol ->
    what is wrong, naming the partition) and read as no bars, as is a partition a read needs
    that the lake does not hold (one its publication recorded raises without ``damage``). A
    cycle's market passes ``damage`` and treats those assets as stale, by name
    (:func:`arena.market.briefing.build_market`)."""
    out: list[pd.DataFrame | None] = [None] * len(reads)
    first = _scan(lake, [(r, None if r.window is None else at - r.window) for r in reads], at,
                  damage)
    short = []
    for i, (r, bars) in enumerate(zip(reads, first, strict=True)):
        if r.window is not None and (r.limit is None or len(bars) < r.limit):
            short.append(i)
        else:
            out[i] = bars
    if short:
        again = _scan(lake, [(reads[i], None) for i in short], at, damage)
        for i, bars in zip(short, again, strict=True):
            out[i] = bars
    return [b for b in out if b is not None]


def _scan(lake: Lake, reads: Sequence[tuple[BarRead, pd.Timestamp | None]],
          at: pd.Timestamp, damage: dict[str, str] | None = None) -> list[pd.DataFrame]:
    """The closed bars of each read opened in ``[since, at)`` (``since`` None: all of them), the
    last ``limit``: each file read once per set of columns asked for, close times computed once
    per calendar and interval."""
    by_columns: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for j, (r, _) in enumerate(reads):
        wanted = set(r.columns or BAR_COLUMNS) | {"timestamp"}
        by_columns[tuple(c for c in BAR_COLUMNS if c in wanted)].append(j)
    out: dict[int, pd.DataFrame] = {}
    for columns, idx in by_columns.items():
        out.update(zip(idx, _scan_files(lake, [reads[j] for j in idx], at, columns, damage),
                       strict=True))
    return [out[j] for j in range(len(reads))]


def _no_bars(columns: Sequence[str]) -> pa.Table:
    """An empty table of the lake's bar schema, ``columns`` only (a damaged file's rows)."""
    return pa.schema([pa.field(c, pa.timestamp(TS_UNIT, tz="UTC") if c == "timestamp"
                               else pa.float64(), nullable=False) for c in columns]).empty_table()


def _scan_files(lake: Lake, reads: Sequence[tuple[BarRead, pd.Timestamp | None]],
                at: pd.Timestamp, columns: tuple[str, ...],
                damage: dict[str, str] | None = None) -> list[pd.DataFrame]:
    """:func:`_scan` of reads that all want ``columns``.

    Each partition file is read whole (:meth:`Lake.checked_bar_table`, a fraction of a filtered
    dataset scan; a file the lake read before and nothing has replaced since is served from
    the lake's cache, with its check: :mod:`arena.data.bar_cache`), after one look-up of every
    file's identity, and the window is then applied in NumPy. Close times are computed on the timestamps
    alone, and only the rows some read returns (each file's last ``limit`` closed bars, the
    largest limit of its reads) become pandas rows: a price read keeps one bar of the thousands
    its window holds.
    """
    files = _files_of(lake, reads, damage)
    frames: dict[int, pd.DataFrame] = {}
    if files.parts:
        tables, problems, kept = _read_files(lake, files, at, columns, damage)
        _keep_closed(tables, kept, files, at)
        _drop_damaged(lake, list(files.parts), problems, kept, damage)
        frames = _frames_of(tables, kept)
    return [_answer(r, since, files, frames, columns) for r, since in reads]


@dataclass(frozen=True)
class _Files:
    """The partition files a scan reads, numbered in the order the reads first name them
    (``parts``), with each file's identity, calendar, the start of the widest window its reads
    ask for (None: the whole file) and the most rows any of its reads keeps from its end
    (None: all of them)."""

    parts: dict[PartitionKey, int]
    signatures: dict[PartitionKey, object | None]
    calendars: dict[int, str]
    since_of: dict[int, pd.Timestamp | None]
    tail: dict[int, int | None]


def _files_of(lake: Lake, reads: Sequence[tuple[BarRead, pd.Timestamp | None]],
              damage: dict[str, str] | None) -> _Files:
    """The files ``reads`` name; a partition the lake does not hold is recorded in ``damage``
    (given) and read as no bars (:func:`_absent`)."""
    parts: dict[PartitionKey, int] = {}
    calendars: dict[int, str] = {}
    since_of: dict[int, pd.Timestamp | None] = {}
    # every file's identity in one look-up: the lake's cache serves a file read before
    signatures = lake.signatures(list(dict.fromkeys(
        PartitionKey(r.provider, r.interval, r.asset.symbol) for r, _ in reads)))
    for r, since in reads:
        key = PartitionKey(r.provider, r.interval, r.asset.symbol)
        if signatures[key] is None:
            _absent(lake, key, damage)
            continue
        i = parts.setdefault(key, len(parts))
        calendars[i] = r.asset.calendar
        if i not in since_of:
            since_of[i] = since
        else:  # one file read for two series: the wider window
            was = since_of[i]
            since_of[i] = None if was is None or since is None else min(was, since)
    # the most rows any read of a file keeps from its end (None: all of them); a read of a
    # narrower window than the file's is filtered again afterwards, so it needs every row
    tail: dict[int, int | None] = {}
    for r, since in reads:
        i = parts.get(PartitionKey(r.provider, r.interval, r.asset.symbol))
        if i is None:
            continue
        if r.limit is None or since_of[i] != since or tail.get(i, 0) is None:
            tail[i] = None
        else:
            tail[i] = max(tail.get(i) or 0, r.limit)
    return _Files(parts, signatures, calendars, since_of, tail)


def _absent(lake: Lake, key: PartitionKey, damage: dict[str, str] | None) -> None:
    """A partition a read names that has no file: recorded in ``damage`` (given; named as
    missing when its publication recorded it, else as never held); without ``damage``, one
    its publication recorded raises :class:`~arena.data.errors.DamagedFile`, and one the lake
    never held reads as no bars."""
    missing = lake.missing_problem(key)
    if damage is not None:
        damage.setdefault(key.symbol, f"the lake holds no {key} bars" if missing is None
                          else f"{key} is damaged: {missing}")
    elif missing is not None:
        raise DamagedFile(lake.root / key.relative, missing)


def _read_files(lake: Lake, files: _Files, at: pd.Timestamp, columns: tuple[str, ...],
                damage: dict[str, str] | None
                ) -> tuple[list[pa.Table], list[str | None], list[np.ndarray]]:
    """Each file's table (``columns``), its problem (:func:`arena.data.sanity.bar_problem`) and
    its rows opened in its window (``[since, at)``), in file order. A file that cannot be read
    raises :class:`~arena.data.errors.DamagedFile`, or, given ``damage``, is recorded there and
    read as no bars."""
    end = ceil_micros(at)
    tables: list[pa.Table] = []
    problems: list[str | None] = []
    kept: list[np.ndarray] = []  # each file's rows opened in [since, at), in file order
    for i, key in enumerate(files.parts):
        try:
            table, problem = lake.checked_bar_table(key, columns,
                                                    signature=files.signatures[key])
        except DamagedFile as exc:
            if damage is None:
                raise
            # named by its partition, never by this machine's path: the reason reaches the
            # prompt and the reports
            damage.setdefault(key.symbol, f"{key} cannot be read ({exc.problem})")
            table, problem = _no_bars(columns), None
        micros = table.column("timestamp").to_numpy().view(np.int64)
        inside = micros < end
        if files.since_of[i] is not None:
            inside &= micros >= ceil_micros(files.since_of[i])
        tables.append(table)
        problems.append(problem)
        kept.append(np.flatnonzero(inside))
    return tables, problems, kept


def _keep_closed(tables: Sequence[pa.Table], kept: list[np.ndarray], files: _Files,
                 at: pd.Timestamp) -> None:
    """Narrow each file's ``kept`` rows to its bars closed by ``at``, the last ``tail`` of them;
    close times computed once per calendar and interval, on the timestamps alone."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, i in files.parts.items():
        groups[(files.calendars[i], k.interval)].append(i)
    for (calendar, interval), idx in groups.items():
        opens = np.concatenate([tables[i].column("timestamp").to_numpy().view(np.int64)[kept[i]]
                                for i in idx])
        closes = bar_close_times(calendar, interval, utc_index(opens))
        closed = np.asarray(closes <= at)
        offset = 0
        for i in idx:
            rows = kept[i]
            rows = rows[closed[offset:offset + len(rows)]]
            offset += len(kept[i])
            tail = files.tail[i]
            if tail is not None:
                rows = rows[len(rows) - min(tail, len(rows)):]
            kept[i] = rows


def _drop_damaged(lake: Lake, keys: Sequence[PartitionKey], problems: Sequence[str | None],
                  kept: list[np.ndarray], damage: dict[str, str] | None) -> None:
    """Every row read is a bar a validated series could hold: a file with a ``problem`` raises
    :class:`~arena.data.errors.DamagedFile`, or, given ``damage``, is recorded there and keeps
    no row."""
    for i, key in enumerate(keys):
        problem = problems[i]
        if problem is not None:
            if damage is None:
                raise DamagedFile(lake.root / key.relative, problem)
            damage.setdefault(key.symbol, f"{key} is damaged: {problem}")
            kept[i] = kept[i][:0]


def _frames_of(tables: Sequence[pa.Table], kept: Sequence[np.ndarray]) -> dict[int, pd.DataFrame]:
    """Each file's kept rows as a frame (one conversion to pandas for every file; each frame
    is indexed anew by the read that returns it)."""
    bars = pa.concat_tables([t.take(rows) for t, rows in zip(tables, kept, strict=True)]
                            ).to_pandas()
    frames: dict[int, pd.DataFrame] = {}
    offset = 0
    for i, rows in enumerate(kept):
        frames[i] = bars.iloc[offset:offset + len(rows)]
        offset += len(rows)
    return frames


def _answer(read: BarRead, since: pd.Timestamp | None, files: _Files,
            frames: Mapping[int, pd.DataFrame], columns: tuple[str, ...]) -> pd.DataFrame:
    """One read's bars: its file's (none without a file) opened from ``since`` on, the last
    ``limit`` of them."""
    i = files.parts.get(PartitionKey(read.provider, read.interval, read.asset.symbol))
    if i is None:
        bars = empty_bars()[list(columns)]
    else:
        bars = frames[i]
        if since is not None and files.since_of[i] != since:
            bars = bars[bars["timestamp"] >= since]
    if read.limit is not None:
        bars = bars.iloc[-read.limit:] if read.limit > 0 else bars.iloc[0:0]
    return bars.reset_index(drop=True)


def latest_funding(lake: Lake, provider: str, symbol: str, at: pd.Timestamp
                   ) -> tuple[float, pd.Timestamp] | None:
    """The latest funding rate (fraction per funding period) stamped before ``at``, and its stamp."""
    table = lake.read_table(TableKey("funding", provider, symbol))
    if table.empty:
        return None
    known = table[table["timestamp"] < at]
    if known.empty:
        return None
    row = known.sort_values("timestamp").iloc[-1]
    return float(row["funding_rate"]), pd.Timestamp(row["timestamp"])


def next_earnings_days(lake: Lake, provider: str, at: pd.Timestamp) -> dict[str, int]:
    """Calendar days from the New York date of ``at`` to each stock's next earnings date on or
    after it (0 = today), for every symbol in the lake's earnings table."""
    table = lake.read_table(TableKey("earnings", provider))
    if table.empty:
        return {}
    today = at.tz_convert(NY).date()
    days: dict[str, int] = {}
    for symbol, date in zip(table["symbol"], table["date"], strict=True):
        d = _date_of(date)
        if d >= today:
            gap = (d - today).days
            days[symbol] = min(gap, days.get(symbol, gap))
    return days


def _date_of(value: object) -> dt.date:
    """A stored earnings date (UTC midnight of the session) as a calendar date."""
    ts = pd.Timestamp(value)  # type: ignore[arg-type]
    if ts.tzinfo is not None:
        ts = ts.tz_convert("UTC")
    return ts.date()


class NoPrices(Failed, RuntimeError):
    """The lake holds no price at any of the asked cycles."""


def cycle_prices(lake: Lake, provider: Providers, universe: Universe,
                 cycles: Sequence[pd.Timestamp], *,
                 damage: dict[str, str] | None = None) -> pd.DataFrame:
    """Long table ``cycle_at, symbol, price, printed_at``: each symbol's last completed price at
    each cycle, read from the finest interval the lake holds (of the asset's provider: one, or
    one per asset class), exactly as :func:`arena.market.asof.last_price` reads it for the
    cycle (one scan of the partitions, from the lookback before the first cycle). A damaged
    price partition raises :class:`~arena.data.errors.DamagedFile`, or, given ``damage``, is
    recorded there and leaves its symbol unpriced (:func:`scan_closed_bars`)."""
    cycles = sorted(cycles)
    rows: list[pd.DataFrame] = []
    by_provider: dict[str, list[Asset]] = defaultdict(list)
    for asset in universe:
        by_provider[provider_of(provider, asset)].append(asset)
    for source, assets in sorted(by_provider.items()):
        rows += _cycle_prices(lake, source, assets, cycles, damage)
    if not rows:
        raise NoPrices(f"the lake has no {provider_label(provider, universe)} prices at the "
                       "season's cycles")
    out = pd.concat(rows, ignore_index=True)
    for col in ("cycle_at", "printed_at"):
        out[col] = pd.DatetimeIndex(out[col]).as_unit(TS_UNIT)
    return out.sort_values(["cycle_at", "symbol"]).reset_index(drop=True)


def _cycle_prices(lake: Lake, provider: str, assets: Sequence[Asset],
                  cycles: Sequence[pd.Timestamp], damage: dict[str, str] | None = None
                  ) -> list[pd.DataFrame]:
    """:func:`cycle_prices` of ``provider``'s assets: one frame (none when nothing is priced)."""
    finest = price_intervals(lake, provider)
    priced = [(asset, finest[asset.symbol]) for asset in assets if asset.symbol in finest]
    read = _scan(lake, [(BarRead(asset, provider, interval, None, columns=LAST_PRINT),
                         cycles[0] - PRICE_LOOKBACK) for asset, interval in priced], cycles[-1],
                 damage)
    # close times once per calendar and interval, over every asset's bars of it
    closes: list[pd.DatetimeIndex | None] = [None] * len(priced)
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j, (asset, interval) in enumerate(priced):
        groups[(asset.calendar, interval)].append(j)
    for (calendar, interval), idx in groups.items():
        opens = np.concatenate([read[j]["timestamp"].array.as_unit(TS_UNIT).asi8
                                for j in idx])
        every = bar_close_times(calendar, interval, utc_index(opens))
        offset = 0
        for j in idx:
            closes[j] = every[offset:offset + len(read[j])]
            offset += len(read[j])
    at_micros = pd.DatetimeIndex(cycles).as_unit(TS_UNIT).asi8
    rows: dict[str, list[Any]] = {"cycle_at": [], "symbol": [], "price": [], "printed_at": []}

    def add(at: pd.Timestamp, symbol: str, price: float, printed: pd.Timestamp) -> None:
        for col, value in zip(rows, (at, symbol, price, printed), strict=True):
            rows[col].append(value)

    for (asset, _), bars, closed in zip(priced, read, closes, strict=True):
        assert closed is not None
        found = np.searchsorted(closed.asi8, at_micros, side="right") - 1
        price = bars["close"].to_numpy()
        for at, i in zip(cycles, found, strict=True):
            if i >= 0:
                add(at, asset.symbol, float(price[i]), closed[i])
            elif damage is None or asset.symbol not in damage:  # a gap longer than the
                hit = last_price(lake, provider, asset, at)  # lookback: the whole partition
                if hit is not None:
                    add(at, asset.symbol, hit[0], hit[1])
    if not rows["symbol"]:
        return []
    return [pd.DataFrame({"cycle_at": pd.DatetimeIndex(rows["cycle_at"]),
                          "symbol": rows["symbol"], "price": rows["price"],
                          "printed_at": pd.DatetimeIndex(rows["printed_at"])})]
