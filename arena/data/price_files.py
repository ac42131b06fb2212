"""Reading a price file (CSV or Parquet) into a bar frame, refusing what is not price data.

CSV: header ``timestamp,open,high,low,close,volume``, ISO-8601 UTC times (or dates for daily
bars, read as midnight UTC), one row per bar labelled by its open time. Parquet: the same columns;
extra columns (``symbol``, ``interval``, ...) are tolerated.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from arena.core.errors import UnusableInput
from arena.data.errors import BlockedError, NoDataError
from arena.data.providers.base import (
    BAR_COLUMNS,
    TIME_ALIASES,
    empty_bars,
    looks_like_html,
    to_bar_frame,
)

_PARQUET_MAGIC = b"PAR1"


class UnusableInputError(UnusableInput, ValueError):
    """The file is not price data: unreadable, an HTML page, missing columns, non-numeric prices."""


def load_price_file(path: str | os.PathLike[str], *, symbol: str | None = None) -> pd.DataFrame:
    """The bar frame of a price file. A file with zero data rows (or zero bytes: an empty response
    saved as a file) gives an empty bar frame, which validation fails as "zero bars"; anything
    that is not price data raises :class:`UnusableInputError`. ``symbol`` picks one symbol from a
    file with a ``symbol`` column."""
    return read_price_file(path, symbol=symbol)[0]


def read_price_file(path: str | os.PathLike[str], *, symbol: str | None = None
                    ) -> tuple[pd.DataFrame, str]:
    """(bar frame, symbol label): the label is ``symbol``, else the file's single ``symbol``
    value, else the file name without its suffix."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            head = fh.read(512)
    except OSError as exc:
        raise UnusableInputError(f"{path}: cannot read the file ({exc.strerror or exc})") from exc
    label = symbol or path.stem
    if not head.strip():
        return empty_bars(), label
    if looks_like_html(head):
        raise UnusableInputError(f"{path}: an HTML page, not price data (a bot wall or an error "
                                 "page saved as a file?)")
    frame = _read_table(path, head)
    frame.columns = [str(c).strip().lower() for c in frame.columns]
    frame, label = _one_symbol(frame, symbol, label, path)
    has_time = "timestamp" in frame.columns or any(a in frame.columns for a in TIME_ALIASES)
    missing = [c for c in BAR_COLUMNS[1:] if c not in frame.columns] + ([] if has_time else
                                                                        ["timestamp"])
    if missing:
        raise UnusableInputError(f"{path}: no {', '.join(missing)} column(s); expected a header "
                                 f"{','.join(BAR_COLUMNS)}")
    if frame.empty:
        return empty_bars(), label
    volume = frame["volume"]
    bad_volume = volume.notna() & pd.to_numeric(volume, errors="coerce").isna()
    if bad_volume.any():
        raise UnusableInputError(f"{path}: {int(bad_volume.sum())} rows have a non-numeric volume "
                                 f"(first {volume[bad_volume].iloc[0]!r})")
    try:
        return to_bar_frame(frame, provider="files", symbol=label), label
    except BlockedError as exc:
        raise UnusableInputError(f"{path}: {exc.args[0]}") from exc
    except NoDataError:
        return empty_bars(), label


def _read_table(path: Path, head: bytes) -> pd.DataFrame:
    try:
        if head.startswith(_PARQUET_MAGIC) or path.suffix.lower() in (".parquet", ".pq"):
            return pd.read_parquet(path, partitioning=None)
        return pd.read_csv(path, skipinitialspace=True)
    except Exception as exc:  # pandas/pyarrow raise many types for a corrupt file
        raise UnusableInputError(f"{path}: not a readable CSV or Parquet file "
                                 f"({type(exc).__name__}: {exc})") from exc


def _one_symbol(frame: pd.DataFrame, symbol: str | None, label: str, path: Path
                ) -> tuple[pd.DataFrame, str]:
    if "symbol" not in frame.columns:
        return frame, label
    present = sorted(frame["symbol"].dropna().astype(str).unique())
    if symbol is not None:
        if present and symbol not in present:
            raise UnusableInputError(f"{path}: no rows for symbol {symbol!r} (it holds "
                                     f"{', '.join(present[:10])})")
        return frame[frame["symbol"].astype(str) == symbol], symbol
    if len(present) > 1:
        raise UnusableInputError(f"{path}: holds {len(present)} symbols ({', '.join(present[:10])}); "
                                 "name one")
    return frame, present[0] if present else label
