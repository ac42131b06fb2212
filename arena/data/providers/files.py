"""A drop folder of candles pushed by a publisher on a network that can reach the vendors.

Servers in data centres are often blocked by market-data vendors; a publisher elsewhere pushes
files here instead. Layout (house symbols, one folder per interval)::

    DROP/1h/ETH.csv                 one file per symbol and interval, CSV or Parquet,
    DROP/1h/ETH__2025-11-28.parquet optionally more chunks (``SYMBOL__anything``), later names win
    DROP/funding/ETH.csv            timestamp,funding_rate
    DROP/earnings.csv               symbol,date

Candle files have the columns ``timestamp,open,high,low,close,volume`` (ISO-8601 UTC, bar open
time). A file that holds an HTML page or no candle columns, or gives one bar time twice with
different values, is refused (``BlockedError``); a missing file is ``NoDataError``: the publisher
has not pushed it.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from arena.core.environment import setting
from arena.core.errors import BadArgument
from arena.core.sessions import INTERVAL_ORDER, TS_UNIT, canonical_labels, coarser_or_equal, utc
from arena.core.universe import Asset
from arena.data.errors import BlockedError, NoDataError, UnsupportedError
from arena.data.providers import ProviderOptions
from arena.data.providers.base import Provider, looks_like_html, require_interval, to_bar_frame

_SUFFIXES = (".csv", ".parquet")


def read_table(path: Path, *, provider: str = "files", symbol: str = "") -> pd.DataFrame:
    """Read one CSV or Parquet file; refuse HTML bodies and unreadable files with BlockedError."""
    try:
        if path.suffix == ".parquet":
            return pd.read_parquet(path, partitioning=None)
        with path.open("rb") as fh:
            head = fh.read(512)
        if looks_like_html(head):
            raise BlockedError(f"{path.name} holds an HTML page, not candles",
                               provider=provider, symbol=symbol)
        return pd.read_csv(path)
    except BlockedError:
        raise
    except Exception as exc:  # pyarrow/pandas raise many types for a corrupt file
        raise BlockedError(f"{path.name} is not a readable {path.suffix[1:]} table: {exc}",
                           provider=provider, symbol=symbol) from exc


class FilesProvider:
    """Candles from a drop folder (no network; constructor does no I/O).

    ``base_interval`` is the finest interval the publisher pushes (default ``1h``); ingest fetches
    it and derives the coarser ones, so only that folder needs to be complete.
    """

    name = "files"

    def __init__(self, root: str | Path, base_interval: str = "1h", *,
                 instead_of: Provider | None = None) -> None:
        """``instead_of``: the provider (an object, no I/O) whose place the folder takes while
        its vendor blocks: the bars fill that provider's partitions, built from its base
        interval (finer files are served on their own, as the vendor would serve them)."""
        require_interval(self.name, base_interval, INTERVAL_ORDER)
        self.root = Path(root)
        self.intervals = frozenset(coarser_or_equal(base_interval))
        self.stands_in_for: str | None = None
        if instead_of is not None:
            self.stands_in_for = self.name = instead_of.name
            base = getattr(instead_of, "base", None)
            if base is not None and base in self.intervals:
                self.base = base

    def __repr__(self) -> str:
        extra = f", instead_of={self.stands_in_for!r}" if self.stands_in_for else ""
        return f"FilesProvider(root={str(self.root)!r}{extra})"

    @classmethod
    def configured(cls, options: ProviderOptions) -> FilesProvider:
        """The provider ``arena.data.providers.make_provider`` builds: the drop folder (the
        option, else ``$ARENA_DROP_DIR``; neither is refused), its finest interval and the
        provider it stands in for."""
        folder = options.drop or setting("drop_dir")
        if not folder:
            raise BadArgument("the files source needs a drop folder: --drop DIR or $ARENA_DROP_DIR")
        return cls(folder, options.drop_interval, instead_of=options.instead_of)

    def supports(self, asset: Asset) -> bool:
        return True

    def _files(self, folder: str, symbol: str) -> list[Path]:
        base = self.root / folder
        found = [base / f"{symbol}{s}" for s in _SUFFIXES if (base / f"{symbol}{s}").is_file()]
        found += sorted(p for s in _SUFFIXES for p in base.glob(f"{symbol}__*{s}"))
        return found

    def fetch_bars(self, asset: Asset, interval: str, start: pd.Timestamp,
                   end: pd.Timestamp) -> pd.DataFrame:
        require_interval(self.name, interval, self.intervals)
        files = self._files(interval, asset.symbol)
        if not files:
            raise NoDataError(f"no file for {asset.symbol} {interval} in {self.root / interval}",
                              provider=self.name, symbol=asset.symbol)
        frames = [self._bars_of(f, asset, interval) for f in files]
        # a later chunk restates an earlier one's bars: the later file wins
        bars = (pd.concat(frames, ignore_index=True)
                .drop_duplicates("timestamp", keep="last").sort_values("timestamp"))
        return to_bar_frame(bars, provider=self.name, symbol=asset.symbol, start=start, end=end)

    def _bars_of(self, path: Path, asset: Asset, interval: str) -> pd.DataFrame:
        """One file's bars, labelled as the calendar labels them (date-labelled daily and weekly
        stock files, midnight UTC or New York, -> session opens). A time the file gives twice
        with other values is refused (:class:`BlockedError` naming the times): no row of the
        two is the bar more than the other; a row repeated as it is counts once."""
        bars = to_bar_frame(read_table(path, symbol=asset.symbol), provider=self.name,
                            symbol=asset.symbol)
        bars["timestamp"] = canonical_labels(pd.DatetimeIndex(bars["timestamp"]), asset.calendar,
                                             interval)
        bars = bars.drop_duplicates()  # the same row twice: one bar
        twice = bars["timestamp"][bars["timestamp"].duplicated(keep=False)].drop_duplicates()
        if len(twice):
            shown = ", ".join(f"{t:%Y-%m-%d %H:%M}" for t in twice.sort_values().iloc[:5])
            more = f" and {len(twice) - 5} more" if len(twice) > 5 else ""
            raise BlockedError(f"{path.name} gives {len(twice)} bar times twice with different "
                               f"values ({shown} UTC{more}): remove the wrong rows (a row repeated "
                               "exactly is read once)", provider=self.name, symbol=asset.symbol)
        return bars

    def fetch_events(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        raise UnsupportedError("the files source carries no corporate actions", provider=self.name,
                               symbol=asset.symbol)

    def fetch_funding(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
        files = self._files("funding", asset.symbol)
        if not files:
            raise NoDataError("no funding file pushed", provider=self.name, symbol=asset.symbol)
        table = pd.concat([read_table(f, symbol=asset.symbol) for f in files], ignore_index=True)
        if not {"timestamp", "funding_rate"} <= set(table.columns):
            raise BlockedError("funding file needs columns timestamp,funding_rate",
                               provider=self.name, symbol=asset.symbol)
        ts = pd.to_datetime(table["timestamp"], utc=True).dt.as_unit(TS_UNIT)
        out = pd.DataFrame({"timestamp": ts, "funding_rate": pd.to_numeric(table["funding_rate"])})
        out = out[(out["timestamp"] >= utc(start)) & (out["timestamp"] < utc(end))]
        return out.drop_duplicates("timestamp", keep="last").sort_values("timestamp").reset_index(drop=True)

    def earnings_dates(self, asset: Asset, start: pd.Timestamp, end: pd.Timestamp) -> list[pd.Timestamp]:
        path = self.root / "earnings.csv"
        if not path.is_file():
            return []
        table = read_table(path, symbol=asset.symbol)
        days = pd.to_datetime(table.loc[table["symbol"] == asset.symbol, "date"], utc=True)
        return sorted(d for d in days if utc(start) <= d < utc(end))
