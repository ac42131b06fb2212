"""Market-data providers, one module each behind :class:`~arena.data.providers.base.Provider`,
named once in :data:`PROVIDERS`: the choices of the command line and the season config, how a
provider is built (its class's ``configured``) and whether its series come from coarser bars
(its module's ``BASE``) all follow from that list. A new vendor is one module and one line there.

Importing this package loads nothing but the standard library (the command line reads the
names at start-up); a provider's module is imported when one is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from arena.core.errors import BadArgument

if TYPE_CHECKING:
    from arena.data.providers.base import Provider


@dataclass(frozen=True)
class ProviderKind:
    """One provider: its name (the ``--source`` and the lake's partitions), its module and
    class, and whether it is a market-data vendor (real prices the files folder can stand in
    for while it blocks)."""

    name: str
    module: str
    cls: str
    vendor: bool = False

    def load(self) -> type:
        return getattr(import_module(self.module), self.cls)


SYNTHETIC = "synthetic"  # the embedded default: seeded, invented prices
FILES = "files"  # a folder a publisher drops bar files into
PROVIDERS: tuple[ProviderKind, ...] = (
    ProviderKind(SYNTHETIC, "arena.data.providers.synthetic", "SyntheticProvider"),
    ProviderKind("yfinance", "arena.data.providers.yahoo", "YFinanceProvider", vendor=True),
    ProviderKind("ccxt", "arena.data.providers.binance", "CcxtProvider", vendor=True),
    ProviderKind(FILES, "arena.data.providers.files", "FilesProvider"),
)
SOURCES = tuple(p.name for p in PROVIDERS)
# what the files folder may stand in for: every provider but itself
STAND_INS = tuple(p.name for p in PROVIDERS if p.name != FILES)
_BY_NAME = {p.name: p for p in PROVIDERS}

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
    stores - its module's ``BASE`` (Yahoo: ``1h``; its ``15m`` partitions are watch series for
    the monitor, see :func:`arena.data.ingest.plan_ingest`); None: the finest stored interval is
    the base (and for a name that is no provider's)."""
    kind = _BY_NAME.get(provider)
    return None if kind is None else getattr(import_module(kind.module), "BASE", None)


def provider_note(provider: str) -> str:
    """:func:`market_note` of ``provider``'s :func:`market_label`."""
    return market_note(market_label(provider))


def make_provider(source: str, *, seed: int | None = None, drop: str | Path | None = None,
                  drop_interval: str = "1h", instead_of: str | None = None) -> Provider:
    """Build a provider by name (no I/O). ``drop`` (or ``$ARENA_DROP_DIR``) is the files folder,
    ``drop_interval`` the finest interval its publisher pushes; ``instead_of``: the vendor the
    files folder stands in for while it blocks (its bars then fill that vendor's partitions)."""
    if instead_of is not None and source != FILES:
        raise ValueError(f"only the files source stands in for a vendor, not {source}")
    kind = _BY_NAME.get(source)
    if kind is None:
        raise BadArgument(f"unknown source {source!r}; expected one of {', '.join(SOURCES)}")
    if instead_of is not None and instead_of not in STAND_INS:
        raise BadArgument(f"the files folder cannot stand in for {instead_of!r}; expected one "
                          f"of {', '.join(STAND_INS)}")
    stands_for = None if instead_of is None else make_provider(instead_of, seed=seed)
    return kind.load().configured(ProviderOptions(seed, drop, drop_interval, stands_for))


@dataclass(frozen=True)
class ProviderOptions:
    """What a provider may be built with (each class's ``configured`` takes what it uses): the
    synthetic market's seed, the files folder and its finest interval, and the provider that
    folder stands in for."""

    seed: int | None = None
    drop: str | Path | None = None
    drop_interval: str = "1h"
    instead_of: Provider | None = None


__all__ = ["FILES", "PROVIDERS", "SOURCES", "STAND_INS", "SYNTHETIC", "SYNTHETIC_MARKET",
           "SYNTHETIC_NOTE", "ProviderKind", "ProviderOptions", "is_synthetic", "make_provider",
           "market_label", "market_note", "provider_note", "series_base"]
