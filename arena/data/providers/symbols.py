"""Each vendor's spelling of the house symbols, read only by the adapters.

The arena names an asset one way everywhere (``BRK.B``, ``ETH``: :mod:`arena.core.universe`);
a vendor may spell it otherwise (Yahoo's ``BRK-B``, Binance's spot pair ``ETH/USDT`` and its
USD-M perpetual ``ETH/USDT:USDT``). The spellings are one data file beside this module,
``symbols.csv`` (house symbol, vendor, vendor symbol), read once. An asset without a row for a
vendor is not served by that vendor.

A universe file of one's own (``$ARENA_UNIVERSE``) may still carry the vendors' columns of the
universe files of old (``yfinance_symbol``, ``binance_symbol``, ``binance_perp_symbol``): each
column it has gives the spelling of its assets for that vendor (empty: not served), ahead of
``symbols.csv``, so its own assets keep the spellings it gives them.
"""

from __future__ import annotations

import csv
from functools import cache, lru_cache
from pathlib import Path

from arena.core.environment import setting
from arena.core.universe import Asset, UniverseError

SYMBOLS = Path(__file__).with_name("symbols.csv")
YFINANCE = "yfinance"  # Yahoo Finance (stocks and ETFs)
BINANCE = "binance"  # Binance spot pairs (crypto bars)
BINANCE_PERP = "binance_perp"  # Binance USD-M perpetuals (funding rates)
VENDORS = (YFINANCE, BINANCE, BINANCE_PERP)


def vendor_symbol(vendor: str, asset: Asset) -> str | None:
    """``asset``'s symbol on ``vendor`` (one of :data:`VENDORS`), or None when the vendor does
    not serve it."""
    if vendor not in VENDORS:
        raise ValueError(f"unknown vendor {vendor!r}; expected one of {', '.join(VENDORS)}")
    key = (vendor, asset.symbol)
    universe = setting("universe")
    if universe is not None:
        own = _universe_columns(str(Path(universe).resolve()))
        if key in own:
            return own[key]
    return _shipped().get(key)


@cache
def _shipped() -> dict[tuple[str, str], str]:
    """``symbols.csv``: (vendor, house symbol) -> the vendor's symbol."""
    with SYMBOLS.open(newline="", encoding="utf-8") as fh:
        return {(r["vendor"], r["symbol"]): r["vendor_symbol"] for r in csv.DictReader(fh)}


@lru_cache(maxsize=8)
def _universe_columns(path: str) -> dict[tuple[str, str], str | None]:
    """The vendors' columns a universe file carries (``<vendor>_symbol``), for its assets:
    (vendor, house symbol) -> the vendor's symbol, None where the column is empty."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            columns = [v for v in VENDORS if f"{v}_symbol" in (reader.fieldnames or [])]
            return {(v, r["symbol"]): r[f"{v}_symbol"] or None
                    for r in reader for v in columns}
    except OSError as exc:
        raise UniverseError(f"cannot read universe file {path}: {exc}") from exc
