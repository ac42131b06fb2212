"""Market-data providers, one module each behind :class:`~arena.data.providers.base.Provider`."""

from __future__ import annotations

import os
from pathlib import Path

from arena.data.providers.base import Provider

SOURCES = ("synthetic", "yfinance", "ccxt", "files")
DROP_ENV = "ARENA_DROP_DIR"


def make_provider(source: str, *, seed: int | None = None, drop: str | Path | None = None,
                  drop_interval: str = "1h") -> Provider:
    """Build a provider by name (no I/O). ``drop`` (or ``$ARENA_DROP_DIR``) is the files folder,
    ``drop_interval`` the finest interval its publisher pushes."""
    if source == "synthetic":
        from arena.data.providers.synthetic import DEFAULT_SEED, SyntheticProvider

        return SyntheticProvider(DEFAULT_SEED if seed is None else seed)
    if source == "yfinance":
        from arena.data.providers.yahoo import YFinanceProvider

        return YFinanceProvider()
    if source == "ccxt":
        from arena.data.providers.binance import CcxtProvider

        return CcxtProvider()
    if source == "files":
        folder = drop or os.environ.get(DROP_ENV)
        if not folder:
            raise ValueError(f"the files source needs a drop folder: --drop DIR or ${DROP_ENV}")
        from arena.data.providers.files import FilesProvider

        return FilesProvider(folder, drop_interval)
    raise ValueError(f"unknown source {source!r}; expected one of {', '.join(SOURCES)}")


__all__ = ["SOURCES", "Provider", "make_provider"]
