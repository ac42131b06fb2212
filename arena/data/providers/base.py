"""The one interface every market-data provider implements, and the bar frame it returns.

A *bar frame* is a ``pandas.DataFrame`` with exactly the columns of :data:`BAR_COLUMNS`:
``timestamp`` (bar open time, ``datetime64[us, UTC]``), ``open``/``high``/``low``/``close``
(float64, quote currency), ``volume`` (float64, base units), sorted by time, one row per bar.
Symbols in and out are the house form (``BRK.B``, ``ETH``); vendor spellings stay in the adapter.

Constructors do no I/O: a provider object can be built (and pickled into a Prefect task) without
touching the network; every vendor SDK is imported inside the method that needs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from typing import Protocol, runtime_checkable

import pandas as pd

from arena.core.sessions import TS_UNIT, utc
from arena.core.universe import Asset
from arena.data.errors import BlockedError, NoDataError, UnsupportedError

BAR_COLUMNS = ("timestamp", "open", "high", "low", "close", "volume")
PRICE_COLUMNS = ("open", "high", "low", "close")
FUNDING_COLUMNS = ("timestamp", "funding_rate")
TIME_ALIASES = ("datetime", "date", "time", "open_time")  # accepted in place of "timestamp"


@runtime_checkable
class Provider(Protocol):
    """A source of candles. Every method raises a :class:`~arena.data.errors.ProviderError`
    subclass instead of returning an empty or partial frame."""

    name: str
    #: intervals this provider can deliver natively (others are resampled by the caller). The
    #: lake's series are built from the finest of them, unless the provider names its ``base``
    #: (an optional attribute: Yahoo's 15-minute bars reach back 60 days only, so its series
    #: are built from hourly bars and 15-minute ones are fetched on their own)
    intervals: frozenset[str]

    def supports(self, asset: Asset) -> bool:
        """Whether this provider serves ``asset`` at all."""
        ...

    def fetch_bars(self, asset: Asset, interval: str, start: pd.Timestamp,
                   end: pd.Timestamp) -> pd.DataFrame:
        """Bars of ``asset`` whose open time lies in ``[start, end)``, as a bar frame."""
        ...

    def fetch_funding(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        """Perpetual funding rates (fraction per funding period) with ``timestamp`` in ``[start, end)``."""
        ...

    def earnings_dates(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> list[pd.Timestamp]:
        """Scheduled earnings dates (UTC midnight) of a stock within ``[start, end)``."""
        ...

    def fetch_events(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        """Corporate actions of a stock or ETF with ex-date in ``[start, end)``: columns
        ``timestamp`` (the ex-date, UTC midnight), ``kind`` (``dividend``: ``value`` is the cash
        per share; ``split``: ``value`` is new shares per old share, 2.0 for a 2:1 split)."""
        ...


def empty_bars() -> pd.DataFrame:
    """A bar frame with no rows and the right dtypes (for concatenation, never as a fetch result)."""
    return pd.DataFrame({
        "timestamp": pd.Series([], dtype=f"datetime64[{TS_UNIT}, UTC]"),
        **{c: pd.Series([], dtype="float64") for c in (*PRICE_COLUMNS, "volume")},
    })


EVENT_KINDS = ("dividend", "split")


def empty_events() -> pd.DataFrame:
    """An events frame with no rows (see :meth:`Provider.fetch_events`): a copy of one made
    once (a frame with a string column costs a millisecond to build, and the ingest asks for
    one per asset and run)."""
    return _no_events().copy()


@cache
def _no_events() -> pd.DataFrame:
    return pd.DataFrame({"timestamp": pd.Series([], dtype=f"datetime64[{TS_UNIT}, UTC]"),
                         "kind": pd.Series([], dtype=str),
                         "value": pd.Series([], dtype="float64")})


def to_bar_frame(raw: pd.DataFrame | Sequence[Sequence[object]], *, provider: str, symbol: str,
                 start: object | None = None, end: object | None = None) -> pd.DataFrame:
    """Normalise vendor rows into a bar frame, refusing what is not data.

    ``raw`` is either a frame with the bar columns (any case; a ``DatetimeIndex`` is accepted as the
    timestamp) or rows ``[timestamp, open, high, low, close, volume]`` with epoch-millisecond or
    datetime timestamps. Raises :class:`NoDataError` for zero rows (also after clipping to
    ``[start, end)``) and :class:`BlockedError` when prices are missing or non-numeric (what an HTML
    page parsed as a table looks like).
    """
    if isinstance(raw, pd.DataFrame):
        frame = raw.copy()
        frame.columns = [str(c).strip().lower() for c in frame.columns]
        if "timestamp" not in frame.columns:
            for alt in TIME_ALIASES:
                if alt in frame.columns:
                    frame = frame.rename(columns={alt: "timestamp"})
                    break
            else:
                if isinstance(frame.index, pd.DatetimeIndex):
                    frame = frame.rename_axis("timestamp").reset_index()
    else:
        rows = list(raw)
        frame = pd.DataFrame(rows, columns=list(BAR_COLUMNS)) if rows else pd.DataFrame(
            columns=list(BAR_COLUMNS))
    if frame.empty:
        raise NoDataError("the vendor answered with zero rows", provider=provider, symbol=symbol)
    missing = [c for c in BAR_COLUMNS if c not in frame.columns]
    if missing:
        raise BlockedError(f"response has no {', '.join(missing)} column(s): not candle data",
                           provider=provider, symbol=symbol)
    frame = frame[list(BAR_COLUMNS)]
    ts = frame["timestamp"]
    if pd.api.types.is_numeric_dtype(ts):
        ts = pd.to_datetime(ts, unit="ms", utc=True, errors="coerce")
    else:
        ts = pd.to_datetime(ts, utc=True, errors="coerce")
    values = frame[[*PRICE_COLUMNS, "volume"]].apply(pd.to_numeric, errors="coerce")
    if ts.isna().any() or values[list(PRICE_COLUMNS)].isna().any().any():
        bad = int(ts.isna().sum() + values[list(PRICE_COLUMNS)].isna().any(axis=1).sum())
        raise BlockedError(f"{bad} of {len(frame)} rows have no time or no prices: not candle data "
                           "(an HTML or error page served as success?)",
                           provider=provider, symbol=symbol)
    junk_volume = values["volume"].isna() & frame["volume"].notna()
    if junk_volume.any():
        raise BlockedError(f"{int(junk_volume.sum())} of {len(frame)} rows have a non-numeric "
                           f"volume (e.g. {frame['volume'][junk_volume].iloc[0]!r}): not candle data",
                           provider=provider, symbol=symbol)
    out = pd.DataFrame({"timestamp": ts.dt.as_unit(TS_UNIT)})
    for c in (*PRICE_COLUMNS, "volume"):
        out[c] = values[c].astype("float64").to_numpy()
    out["volume"] = out["volume"].fillna(0.0)  # a vendor's missing volume means none traded
    out = out.sort_values("timestamp", kind="stable").reset_index(drop=True)
    if start is not None:
        out = out[out["timestamp"] >= utc(start)]
    if end is not None:
        out = out[out["timestamp"] < utc(end)]
    if out.empty:
        raise NoDataError("no rows inside the requested window", provider=provider, symbol=symbol)
    return out.reset_index(drop=True)


def looks_like_html(body: bytes | str) -> bool:
    """True when a payload that should be data is an HTML/XML page (bot walls, maintenance pages)."""
    head = (body[:512].decode("utf-8", "replace") if isinstance(body, bytes) else body[:512])
    head = head.lstrip().lower()
    return head.startswith(("<!doctype", "<html", "<?xml", "<head", "<body")) or "<html" in head


def require_interval(provider: str, interval: str, allowed: Iterable[str]) -> None:
    """Refuse an interval the provider cannot serve (never substitute another one)."""
    if interval not in set(allowed):
        raise UnsupportedError(f"interval {interval!r} is not served; it serves "
                               f"{', '.join(sorted(allowed))}", provider=provider)


__all__ = ["BAR_COLUMNS", "FUNDING_COLUMNS", "PRICE_COLUMNS", "Provider", "empty_bars",
           "looks_like_html", "require_interval", "to_bar_frame"]
