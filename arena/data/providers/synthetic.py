"""The embedded default market: a deterministic, seeded generator of realistic multi-asset bars.

It makes the whole product runnable and testable offline, and it is labelled ``synthetic`` in every
output (provider partition, manifests, summaries). Properties:

* **Same past whatever you ask.** The bar at a given time depends only on the seed and the asset,
  never on the requested window: every random stream is keyed by (seed, purpose, asset, year or
  day), so fetching day by day equals fetching the whole range, and adding an asset to the
  universe changes no other asset's path.
* **Market structure.** Daily latent log returns follow a factor model (equity market, eleven
  sectors, a crypto factor loosely tied to equities) with Student-t(4) shocks (fat tails), a
  three-state volatility regime per asset class (calm / normal / stressed, persistent Markov chain),
  occasional jumps, and for stocks quarterly earnings days with large opening gaps.
* **Commodities.** The commodity ETFs (sector ``Commodities``: gold's GLD, crude oil's USO) load
  weakly on the equity market and share a commodity factor of their own (a stream of its own, so
  the other assets' paths are the same with or without them): their daily returns correlate
  below 0.3 with stocks, crypto and each other, as gold's and oil's do.
* **Clocks.** Crypto trades 24/7 (96 bars of 15 minutes a UTC day). Stocks and the ETFs print
  only in NYSE regular hours (26 bars, 14 on 13:00 early closes); weekend and holiday news
  accumulates into the next session's opening gap, as do the overnight moves.
* **Intraday path.** Each day's move is spread over its bars by a Brownian bridge with a
  U-shaped (stocks) or gently seasonal (crypto) volatility profile; volume follows the same
  profile, rises with the size of the move, the regime, jumps and earnings.
* **Levels.** Each asset is anchored at a realistic reference price on 2025-01-01; the market
  exists from 2018-01-01 on.

Base resolution is 15 minutes; ``1h``, ``4h``, ``1d`` and ``1w`` are resampled from it with the
calendar rules of :mod:`arena.data.bars`. Funding rates (8-hourly) exist for crypto, an earnings
calendar for stocks.
"""

from __future__ import annotations

import itertools
import threading
import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from arena.core.sessions import (
    DAY_US,
    INTERVAL_ORDER,
    TS_UNIT,
    bar_close_times,
    ceil_micros,
    expected_bars,
    interval_delta,
    sessions,
    utc,
    utc_index,
)
from arena.core.universe import Asset
from arena.data.bars import bar_frame_from_columns, drop_unclosed, resample
from arena.data.errors import NoDataError, UnsupportedError
from arena.data.providers import ProviderOptions
from arena.data.providers.base import BAR_COLUMNS, empty_events, require_interval

EPOCH = pd.Timestamp("2018-01-01", tz="UTC")
_EPOCH_DAY = np.datetime64("2018-01-01", "D")
_EPOCH_US = _EPOCH_DAY.astype("datetime64[us]").astype(np.int64)
ANCHOR = pd.Timestamp("2025-01-01", tz="UTC")
DEFAULT_SEED = 20_240_601
INTERVALS = frozenset(INTERVAL_ORDER)

_SECTORS = ("Information Technology", "Communication Services", "Consumer Discretionary",
            "Consumer Staples", "Energy", "Financials", "Health Care", "Industrials", "Materials",
            "Broad Market", "crypto")
_T_DF = 4.0
_T_SCALE = np.sqrt((_T_DF - 2.0) / _T_DF)  # makes a Student-t(4) draw unit-variance
# calm, normal, stressed; scaled so the long-run average variance matches the asset's volatility
_REGIME_MULT = np.array([0.7, 1.0, 1.6]) / np.sqrt((0.49 + 1.0 + 2.56) / 3)
_REGIME_STAY = 0.97
_STOCK_BARS = 26
_CRYPTO_BARS = 96
_CHUNK_SYMBOLS = 16  # symbols whose days' bars are kept (about 1.5 MB a year of crypto each)
_EARNINGS_EVERY = 63  # sessions between two earnings days (about a quarter)

# Reference prices at the anchor date; stocks without an entry get a deterministic one.
_REF_PRICE = {"BTC": 94_000.0, "ETH": 3_350.0, "BNB": 700.0, "SOL": 190.0, "XRP": 2.1,
              "DOGE": 0.32, "ADA": 0.85, "TRX": 0.25, "AVAX": 36.0, "LINK": 20.0, "DOT": 6.8,
              "SPY": 585.0, "GLD": 242.0, "USO": 76.0}
_ANNUAL_VOL = {"BTC": 0.50, "ETH": 0.65, "SOL": 0.85, "DOGE": 0.95, "SPY": 0.15, "TSLA": 0.60,
               "NVDA": 0.50, "AMD": 0.50, "GLD": 0.15, "USO": 0.35}
_ADV_USD = {"BTC": 25e9, "ETH": 12e9, "SOL": 3e9, "XRP": 2.5e9, "BNB": 1.5e9, "DOGE": 1.5e9,
            "SPY": 35e9, "GLD": 2.5e9, "USO": 4e8}
COMMODITIES = "Commodities"  # the sector of the commodity ETFs
# (equity market, commodity factor) loadings of a commodity ETF; others: _COMMODITY_LOADS_ELSE
_COMMODITY_LOADS = {"GLD": (0.05, 0.35), "USO": (0.20, 0.35)}
_COMMODITY_LOADS_ELSE = (0.10, 0.35)


@dataclass(frozen=True, slots=True)
class _Params:
    """Per-asset constants, derived deterministically from the symbol."""

    key: int
    crypto: bool
    ref_price: float
    daily_vol: float  # per trading day (crypto: per calendar day)
    drift: float  # log drift per trading day
    load_market: float
    load_sector: float
    load_crypto: float
    sector: int
    adv_usd: float
    jump_prob: float  # per trading day
    earnings_phase: int
    load_commodity: float = 0.0  # a commodity ETF's only


def _symbol_key(symbol: str) -> int:
    return zlib.crc32(symbol.encode("utf-8"))


def _params(asset: Asset) -> _Params:
    key = _symbol_key(asset.symbol)
    u = np.random.default_rng([key, 7]).random(6)  # asset constants only: not seed dependent
    crypto = asset.is_crypto
    if crypto:
        vol = _ANNUAL_VOL.get(asset.symbol, 0.70 + 0.25 * u[0]) / np.sqrt(365)
        loads = (0.20, 0.0, 0.92 if asset.symbol == "BTC" else 0.60 + 0.2 * u[1])
        adv = _ADV_USD.get(asset.symbol, 3e8 + 1.2e9 * u[2])
        price = _REF_PRICE.get(asset.symbol, 1.0)
        drift, jump = 0.25 / 365, 1 / 45
    else:
        vol = _ANNUAL_VOL.get(asset.symbol, 0.20 + 0.20 * u[0]) / np.sqrt(252)
        loads = (0.97, 0.0, 0.0) if asset.asset_class == "etf" else (0.62 + 0.15 * u[1], 0.30, 0.0)
        adv = _ADV_USD.get(asset.symbol, 4e8 + 6e9 * u[2] ** 2)
        price = _REF_PRICE.get(asset.symbol, float(np.exp(np.log(25) + u[3] * np.log(30))))
        drift, jump = 0.08 / 252, 1 / 300
    sector = _SECTORS.index(asset.sector) if asset.sector in _SECTORS else len(_SECTORS) - 1
    commodity = 0.0
    if asset.asset_class == "etf" and asset.sector == COMMODITIES:
        market, commodity = _COMMODITY_LOADS.get(asset.symbol, _COMMODITY_LOADS_ELSE)
        loads = (market, 0.0, 0.0)
    return _Params(key, crypto, price, float(vol), drift, *loads, sector, float(adv), jump,
                   int(u[4] * _EARNINGS_EVERY), commodity)


@dataclass(frozen=True)
class _DayGrid:
    """The days from EPOCH a daily model is built over: days of the year (0-based), each
    calendar year with its days' mask, and whether each day is an NYSE session."""

    doy: np.ndarray
    years: list[tuple[int, np.ndarray]]
    trading: np.ndarray
    factors: np.ndarray  # each day's factor shocks and regime uniforms (see _factor_year)


class SyntheticProvider:
    """Deterministic synthetic bars for every asset of the universe (no I/O, no network)."""

    name = "synthetic"
    intervals = INTERVALS

    def __init__(self, seed: int = DEFAULT_SEED) -> None:
        self.seed = int(seed)
        self._lock = threading.Lock()
        self._factors: dict[int, np.ndarray] = {}
        self._commodity: dict[int, np.ndarray] = {}  # year -> the commodity factor's shocks
        self._levels: dict[str, tuple[np.ndarray, ...]] = {}
        # shared by every asset of a class (the regime uniforms are the market's): one walk each
        self._regimes: dict[tuple[int, int], np.ndarray] = {}
        self._grids: dict[int, _DayGrid] = {}  # n_days -> the calendar of those days
        # symbol -> its earnings sessions (UTC midnights), and their days since EPOCH
        self._earnings: dict[str, tuple[list[pd.Timestamp], np.ndarray]] = {}
        self._session_days: pd.DatetimeIndex | None = None
        # symbol -> (the daily levels, day -> that day's bars): see _chunks
        self._day_chunks: dict[str, tuple[tuple[np.ndarray, ...], dict[int, np.ndarray]]] = {}

    def __repr__(self) -> str:
        return f"SyntheticProvider(seed={self.seed})"

    @classmethod
    def configured(cls, options: ProviderOptions) -> SyntheticProvider:
        """The provider ``arena.data.providers.make_provider`` builds: the options' seed."""
        return cls(DEFAULT_SEED if options.seed is None else options.seed)

    def __getstate__(self) -> dict[str, object]:
        """Pickle the seed only (for process or Dask workers); caches are rebuilt on demand."""
        return {"seed": self.seed}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(int(state["seed"]))  # type: ignore[misc]

    def supports(self, asset: Asset) -> bool:
        return True

    # ------------------------------------------------------------------ public interface
    def fetch_bars(self, asset: Asset, interval: str, start: pd.Timestamp,
                   end: pd.Timestamp) -> pd.DataFrame:
        """Bars with open time in ``[start, end)`` that have also closed by ``end``."""
        require_interval(self.name, interval, self.intervals)
        start, end = utc(start), utc(end)
        if start < EPOCH:
            raise UnsupportedError(f"the synthetic market starts {EPOCH.date()}; asked {start}",
                                   provider=self.name, symbol=asset.symbol)
        step = interval_delta(interval)
        # Generate whole days around the window so every coarser bar is built from all its parts.
        first_day = (start - (step if interval in ("1d", "1w") else pd.Timedelta(0))).normalize()
        if interval == "1w":
            first_day -= pd.Timedelta(days=first_day.weekday())
        first_day = max(first_day, EPOCH)
        last_day = (end - pd.Timedelta(microseconds=1)).normalize()
        calendar = asset.calendar
        if interval == "15m":  # the window and the closed bars kept in NumPy, one frame made
            return self._closed_15m(asset, first_day, last_day, start, end)
        bars = resample(self._bars_15m(asset, first_day, last_day), "15m", interval, calendar)
        if bars.empty:
            raise NoDataError(f"no {interval} bars between {start} and {end} (market closed)",
                              provider=self.name, symbol=asset.symbol)
        bars = drop_unclosed(bars, interval, calendar, end)
        bars = bars[(bars["timestamp"] >= start) & (bars["timestamp"] < end)]
        if bars.empty:
            raise NoDataError(f"no closed {interval} bars between {start} and {end}",
                              provider=self.name, symbol=asset.symbol)
        return bars.reset_index(drop=True)

    def _closed_15m(self, asset: Asset, first_day: pd.Timestamp, last_day: pd.Timestamp,
                    start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        """:meth:`fetch_bars` of 15-minute bars (the bars of the days around the window)."""
        micros, values = self._bars_15m_arrays(asset, first_day, last_day)
        if not len(micros):
            raise NoDataError(f"no 15m bars between {start} and {end} (market closed)",
                              provider=self.name, symbol=asset.symbol)
        closes = bar_close_times(asset.calendar, "15m", utc_index(micros)).asi8
        keep = ((micros >= ceil_micros(start)) & (micros < ceil_micros(end))
                & (closes <= end.value // 1000))
        if not keep.any():
            raise NoDataError(f"no closed 15m bars between {start} and {end}",
                              provider=self.name, symbol=asset.symbol)
        return bar_frame_from_columns(micros[keep], np.ascontiguousarray(values[:, keep]))

    def fetch_funding(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        """8-hourly perpetual funding rates (fraction per period): positive when the three days
        before the funding day went up (longs pay), with noise around a 0.01% base rate."""
        if not asset.is_crypto:
            raise UnsupportedError("funding rates exist only for crypto perpetuals",
                                   provider=self.name, symbol=asset.symbol)
        start, end = utc(start), utc(end)
        times = pd.date_range(start.ceil("8h"), end, freq="8h", inclusive="left")
        if times.empty:
            raise NoDataError("no funding times in the window", provider=self.name,
                              symbol=asset.symbol)
        log_level = self._daily_levels(asset, times[-1].normalize())[0]
        day = ((times.normalize() - EPOCH) // pd.Timedelta(days=1)).to_numpy()
        # the three UTC days that closed before the funding day: nothing after time t is used
        trailing = log_level[np.maximum(day - 1, 0)] - log_level[np.maximum(day - 4, 0)]
        noise = np.array([self._rng(9, _symbol_key(asset.symbol), int(t.value // 10**9)).normal()
                          for t in times])
        rate = 1e-4 + 4e-4 * np.tanh(trailing / 0.08) + 5e-5 * noise
        return pd.DataFrame({"timestamp": times.as_unit(TS_UNIT), "funding_rate": rate})

    def fetch_events(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        """The synthetic market pays no dividends and never splits: no events."""
        return empty_events()

    def earnings_dates(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> list[pd.Timestamp]:
        """Earnings sessions (UTC midnight) of a stock: every 63rd session, phase set per symbol."""
        if asset.asset_class != "stock":
            return []
        start, end = utc(start), utc(end)
        return [d for d in self._earnings_days(asset)[0] if start <= d < end]

    # ------------------------------------------------------------------ daily model
    def _rng(self, purpose: int, *key: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, purpose, *key])

    def _factor_year(self, year: int) -> np.ndarray:
        """Daily factor shocks of one calendar year: (366, 1 + sectors + 2 regime uniforms)."""
        if year not in self._factors:
            rng = self._rng(1, year)
            shocks = rng.standard_t(_T_DF, size=(366, len(_SECTORS) + 1)) * _T_SCALE
            uniforms = rng.random((366, 2))
            self._factors[year] = np.hstack([shocks, uniforms])
        return self._factors[year]

    def _commodity_year(self, year: int) -> np.ndarray:
        """Daily shocks of the commodity factor in one calendar year (366): a stream of its own,
        drawn only for the commodity ETFs, so no other asset's draws depend on it."""
        if year not in self._commodity:
            self._commodity[year] = self._rng(5, year).standard_t(_T_DF, size=366) * _T_SCALE
        return self._commodity[year]

    def _commodity_factor(self, grid: _DayGrid) -> np.ndarray:
        """The commodity factor's shock on each day of ``grid``."""
        return np.concatenate([self._commodity_year(y)[grid.doy[sel]] for y, sel in grid.years])

    def _daily_levels(self, asset: Asset, last_day: pd.Timestamp) -> tuple[np.ndarray, ...]:
        """Per UTC day since EPOCH: log close, log open (NaN on non-session days), volume multiplier."""
        n_days = int((last_day - EPOCH) / pd.Timedelta(days=1)) + 1
        n_needed = max(n_days, int((ANCHOR - EPOCH) / pd.Timedelta(days=1)) + 1)
        with self._lock:
            cached = self._levels.get(asset.symbol)
            if cached is None or len(cached[0]) < n_needed:
                # extend to whole years so the cache grows rarely
                years_end = pd.Timestamp(year=(EPOCH + pd.Timedelta(days=n_needed)).year + 1,
                                         month=1, day=1, tz="UTC")
                cached = self._build_levels(asset, int((years_end - EPOCH).days))
                self._levels[asset.symbol] = cached
        return cached

    def _grid(self, n_days: int) -> _DayGrid:
        """The calendar of the ``n_days`` days from EPOCH, shared by every asset."""
        grid = self._grids.get(n_days)
        if grid is None:
            days = _EPOCH_DAY + np.arange(n_days)
            year_start = days.astype("datetime64[Y]")
            years = year_start.astype(np.int64) + 1970
            session_days = sessions(EPOCH, EPOCH + pd.Timedelta(days=n_days - 1)).index
            doy = (days - year_start.astype("datetime64[D]")).astype(np.int64)
            in_year = [(int(y), years == y) for y in np.unique(years)]
            grid = self._grids[n_days] = _DayGrid(
                doy, in_year, np.isin(days, session_days.to_numpy().astype("datetime64[D]")),
                np.vstack([self._factor_year(y)[doy[sel]] for y, sel in in_year]))
        return grid

    def _build_levels(self, asset: Asset, n_days: int) -> tuple[np.ndarray, ...]:
        p = _params(asset)
        grid = self._grid(n_days)
        doy, factors = grid.doy, grid.factors
        market, sector_f, crypto_f = factors[:, 0], factors[:, 1 + p.sector], factors[:, len(_SECTORS)]
        column = -1 if p.crypto else -2
        regime = self._regimes.get((column, n_days))
        if regime is None:
            regime = self._regimes[(column, n_days)] = _regime_path(factors[:, column])

        idio = np.empty(n_days)
        jumps = np.zeros(n_days)
        for y, sel in grid.years:
            rng = self._rng(2, p.key, y)
            draws = rng.standard_t(_T_DF, size=366) * _T_SCALE
            jump_u, jump_z = rng.random(366), rng.standard_normal(366)
            idio[sel] = draws[doy[sel]]
            hit = jump_u[doy[sel]] < p.jump_prob
            jumps[sel] = np.where(hit, jump_z[doy[sel]] * 3.5 * p.daily_vol, 0.0)
        idio_w = np.sqrt(max(0.0, 1 - p.load_market**2 - p.load_sector**2 - p.load_crypto**2
                             - p.load_commodity**2))
        shock = (p.load_market * market + p.load_sector * sector_f + p.load_crypto * crypto_f
                 + idio_w * idio)
        if p.load_commodity:  # a commodity ETF's: the other assets' shocks are left as they were
            shock = shock + p.load_commodity * self._commodity_factor(grid)
        vol_mult = _REGIME_MULT[regime]
        ret = p.drift + p.daily_vol * vol_mult * shock + jumps
        volume_mult = vol_mult * (1.0 + 2.0 * np.abs(ret) / p.daily_vol / 3.0)
        log_level = np.cumsum(ret)
        anchor = int((ANCHOR - EPOCH) / pd.Timedelta(days=1))
        log_level = log_level - log_level[anchor] + np.log(p.ref_price)
        log_open = np.concatenate([[log_level[0] - ret[0]], log_level[:-1]])
        if p.crypto:  # a jump lands inside one 15-minute bar of its day
            return log_level, log_open, volume_mult, jumps
        trading = grid.trading
        earn = np.zeros(n_days)
        if asset.asset_class == "stock":
            earn_days = self._earnings_days(asset)[1]
            is_earn = np.zeros(n_days, dtype=bool)
            is_earn[earn_days[earn_days < n_days]] = True
            earn = np.where(is_earn, self._rng(3, p.key).standard_normal(n_days) * 3.0 * p.daily_vol, 0.0)
            volume_mult = volume_mult * np.where(is_earn, 3.5, 1.0)
        # Non-session days carry little news (no drift, 30% of the volatility); it surfaces in
        # the next session's opening gap together with the overnight share of that session's move,
        # an earnings surprise and any jump.
        ret = np.where(trading, ret + earn, 0.3 * (ret - p.drift))
        event = earn + jumps
        log_level = np.cumsum(ret)
        log_level = log_level - log_level[anchor] + np.log(p.ref_price)
        # a session opens from the previous session's close (the reference price before the
        # first), moved by the non-session news, a quarter of its own move and its events
        session = np.flatnonzero(trading)
        last_close = np.concatenate([[np.log(p.ref_price)], log_level[session[:-1]]])
        prior = log_level[session] - ret[session]  # level after the non-session news
        overnight = ((prior - last_close) + 0.25 * (ret[session] - event[session])
                     + event[session])
        log_open = np.full(n_days, np.nan)
        log_open[session] = last_close + overnight
        overnight_gap = np.zeros(n_days)
        overnight_gap[session] = overnight
        # before the first session of the series there is no printed close: start from the level
        first = np.flatnonzero(trading)[:1]
        if first.size:
            log_open[first[0]] = log_level[first[0]] - 0.75 * (ret[first[0]] - event[first[0]])
            overnight_gap[first[0]] = 0.0
        return log_level, log_open, volume_mult, overnight_gap

    def _earnings_days(self, asset: Asset) -> tuple[list[pd.Timestamp], np.ndarray]:
        """A stock's earnings sessions (UTC midnights) and their days since EPOCH."""
        days = self._earnings.get(asset.symbol)
        if days is None:
            p = _params(asset)
            every = self._sessions()
            picks = every[(np.arange(len(every)) + p.earnings_phase) % _EARNINGS_EVERY == 0]
            since_epoch = picks.to_numpy().astype("datetime64[D]") - _EPOCH_DAY
            days = self._earnings[asset.symbol] = (list(picks.tz_localize("UTC")),
                                                   since_epoch.astype(np.int64))
        return days

    def _sessions(self) -> pd.DatetimeIndex:
        """The NYSE sessions the earnings calendars are picked from (dates, naive)."""
        if self._session_days is None:
            self._session_days = sessions(EPOCH, pd.Timestamp("2035-12-31")).index
        return self._session_days

    # ------------------------------------------------------------------ intraday model
    def _bars_15m(self, asset: Asset, first_day: pd.Timestamp, last_day: pd.Timestamp) -> pd.DataFrame:
        micros, values = self._bars_15m_arrays(asset, first_day, last_day)
        if not len(micros):
            return pd.DataFrame(columns=list(BAR_COLUMNS))
        return bar_frame_from_columns(micros, values)

    def _bars_15m_arrays(self, asset: Asset, first_day: pd.Timestamp, last_day: pd.Timestamp
                         ) -> tuple[np.ndarray, np.ndarray]:
        """The 15-minute bars of the UTC days ``first_day`` to ``last_day``: their open times
        (UTC microseconds) and a (5, n) array of their open, high, low, close and volume."""
        levels = self._daily_levels(asset, last_day)
        log_level, log_open, volume_mult, event = levels
        p = _params(asset)
        opens = expected_bars(asset.calendar, "15m", first_day, last_day + pd.Timedelta(days=1))
        micros = opens.as_unit(TS_UNIT).asi8
        if not len(micros):
            return micros, np.empty((len(BAR_COLUMNS) - 1, 0))
        since_epoch = micros - _EPOCH_US
        day_index = since_epoch // DAY_US
        # the bars are in time order: each day is one run of them
        cuts = np.concatenate([[0], np.flatnonzero(day_index[1:] != day_index[:-1]) + 1,
                               [len(day_index)]])
        # a crypto bar's open hour of day, its minutes as a fraction
        minutes = since_epoch % DAY_US // 60_000_000
        hours = (minutes // 60 + minutes % 60 / 60) if p.crypto else None
        chunks = self._chunks(asset.symbol, levels)
        out = []
        for lo, hi in itertools.pairwise(cuts.tolist()):
            d = int(day_index[lo])
            chunk = chunks.get(d)
            if chunk is None or len(chunk) != hi - lo:
                chunk = chunks[d] = self._day_bars(
                    p, d, hi - lo, None if hours is None else hours[lo:hi], float(log_open[d]),
                    float(log_level[d]), float(volume_mult[d]), float(event[d]))
            out.append(chunk)
        return micros, np.ascontiguousarray(np.vstack(out).T)

    def _chunks(self, symbol: str, levels: tuple[np.ndarray, ...]) -> dict[int, np.ndarray]:
        """The day's bars of ``symbol`` made so far from ``levels`` (day -> rows): an ingest asks
        for the same days once per interval. Kept for the last :data:`_CHUNK_SYMBOLS` symbols
        asked for, and dropped when the daily levels they came from were rebuilt."""
        with self._lock:
            kept = self._day_chunks.pop(symbol, None)
            if kept is None or kept[0] is not levels:
                kept = (levels, {})
            self._day_chunks[symbol] = kept  # the most recent last
            while len(self._day_chunks) > _CHUNK_SYMBOLS:
                del self._day_chunks[next(iter(self._day_chunks))]
        return kept[1]

    def _day_bars(self, p: _Params, day: int, n: int, hours: np.ndarray | None, log_open: float,
                  log_close: float, volume_mult: float, event: float) -> np.ndarray:
        """OHLCV rows of one day's ``n`` 15-minute bars moving from the day's open to its close
        (``hours``: a crypto bar's open hour of day, with its minutes as a fraction).

        ``event`` is a crypto jump (log return placed inside one random bar) or a stock's
        overnight gap (log return already in ``log_open``; it only lifts the opening volume).
        """
        rng = self._rng(4, p.key, day)
        z, hl, noise = rng.standard_normal(n), np.abs(rng.standard_normal((2, n))), rng.standard_normal(n)
        if hours is not None:
            profile = 1.0 + 0.35 * np.cos((hours - 15.0) / 24 * 2 * np.pi)
            bars_per_day = _CRYPTO_BARS
        else:
            x = np.linspace(0, 1, _STOCK_BARS)[:n]
            profile = 0.7 + 6.4 * (x - 0.5) ** 2  # U-shape: busy open and close
            bars_per_day = _STOCK_BARS
        bar_sigma = p.daily_vol * np.sqrt(profile / profile.sum()) * min(volume_mult, 3.0) ** 0.5
        walk = np.cumsum(z * bar_sigma)
        share = np.cumsum(bar_sigma**2) / np.sum(bar_sigma**2)
        jump = np.zeros(n)
        if p.crypto and event != 0.0:
            jump[int(rng.integers(n)):] = event
        diffusion = log_close - log_open - jump[-1]
        path = walk - share * walk[-1] + share * diffusion + jump  # bridge to the close
        close = np.exp(log_open + path)
        open_ = np.concatenate([[np.exp(log_open)], close[:-1]])
        high = np.maximum(open_, close) * np.exp(0.6 * bar_sigma * hl[0])
        low = np.minimum(open_, close) * np.exp(-0.6 * bar_sigma * hl[1])
        move = np.abs(np.log(close / open_)) / bar_sigma  # volume rises with the bar's move
        if not p.crypto:
            move[0] += abs(event) / bar_sigma[0]  # the opening auction trades the gap
        shares_per_bar = p.adv_usd / np.exp(log_close) / bars_per_day
        # convex in the move: a jump trades many times the usual volume, as real ones do
        volume = (shares_per_bar * profile / profile.mean() * volume_mult
                  * np.exp(0.35 * noise - 0.06) * (0.6 + 0.3 * move + 0.15 * move**2))
        return np.column_stack([open_, high, low, close, volume])


def _regime_path(uniforms: np.ndarray) -> np.ndarray:
    """A persistent three-state Markov chain (0 calm, 1 normal, 2 stressed) from uniforms."""
    out = np.empty(len(uniforms), dtype=np.int64)
    state = 1
    leave = (1.0 - _REGIME_STAY) / 2.0
    for i, u in enumerate(uniforms):
        if u < leave:
            state = max(state - 1, 0)
        elif u < 2 * leave:
            state = min(state + 1, 2)
        out[i] = state
    return out
