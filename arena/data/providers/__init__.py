"""Market-data providers, one module each behind :class:`~arena.data.providers.base.Provider`."""

from __future__ import annotations

from pathlib import Path

from arena.core.errors import BadArgument
from arena.data.providers.base import Provider

SYNTHETIC = "synthetic"  # the embedded default: seeded, invented prices
SOURCES = (SYNTHETIC, "yfinance", "ccxt", "files")

# How every output names a season's market (reports, Prefect artifacts, the leaderboard mart's
# ``market`` column): SYNTHETIC_MARKET for the embedded default, else the real provider's name.
SYNTHETIC_MARKET = "SYNTHETIC"
SYNTHETIC_NOTE = "SYNTHETIC market data: not real prices"


def is_synthetic(provider: str) -> bool:
    """Whether the bars of ``provider`` (a provider's name) are invented, not real prices: the
    one rule behind every synthetic label of the product."""
    return provider == SYNTHETIC


def market_label(provider: str) -> str:
    """The market of ``provider``'s data as outputs name it: ``SYNTHETIC`` for the embedded
    default, otherwise the real provider's name (``yfinance``, ``ccxt``, ``files``)."""
    return SYNTHETIC_MARKET if is_synthetic(provider) else provider


def market_note(label: str) -> str:
    """The line a report or artifact opens with, for a :func:`market_label`."""
    return SYNTHETIC_NOTE if label == SYNTHETIC_MARKET else f"Market data: {label}"


def series_base(provider: str) -> str | None:
    """The interval ``provider``'s lake series are built from when it is not the finest it
    stores (Yahoo: ``1h``; its ``15m`` partitions are watch series for the monitor, see
    :func:`arena.data.ingest.plan_ingest`); None: the finest stored interval is the base."""
    if provider == "yfinance":
        from arena.data.providers.yahoo import BASE

        return BASE
    return None


def provider_note(provider: str) -> str:
    """:func:`market_note` of ``provider``'s :func:`market_label`."""
    return market_note(market_label(provider))


def make_provider(source: str, *, seed: int | None = None, drop: str | Path | None = None,
                  drop_interval: str = "1h", instead_of: str | None = None) -> Provider:
    """Build a provider by name (no I/O). ``drop`` (or ``$ARENA_DROP_DIR``) is the files folder,
    ``drop_interval`` the finest interval its publisher pushes; ``instead_of``: the vendor the
    files folder stands in for while it blocks (its bars then fill that vendor's partitions)."""
    if instead_of is not None and source != "files":
        raise ValueError(f"only the files source stands in for a vendor, not {source}")
    if source == SYNTHETIC:
        from arena.data.providers.synthetic import DEFAULT_SEED, SyntheticProvider

        return SyntheticProvider(DEFAULT_SEED if seed is None else seed)
    if source == "yfinance":
        from arena.data.providers.yahoo import YFinanceProvider

        return YFinanceProvider()
    if source == "ccxt":
        from arena.data.providers.binance import CcxtProvider

        return CcxtProvider()
    if source == "files":
        from arena.core.environment import setting  # pydantic-settings, loaded when read

        folder = drop or setting("drop_dir")
        if not folder:
            raise BadArgument("the files source needs a drop folder: --drop DIR or $ARENA_DROP_DIR")
        from arena.data.providers.files import FilesProvider

        return FilesProvider(folder, drop_interval, instead_of=None if instead_of is None else
                             make_provider(instead_of, seed=seed))
    raise BadArgument(f"unknown source {source!r}; expected one of {', '.join(SOURCES)}")


__all__ = ["SOURCES", "SYNTHETIC", "SYNTHETIC_MARKET", "SYNTHETIC_NOTE", "Provider",
           "is_synthetic", "make_provider", "market_label", "market_note", "provider_note",
           "series_base"]
