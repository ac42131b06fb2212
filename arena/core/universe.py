"""The asset universe: one data file (the dbt seed ``dbt_project/seeds/universe.csv``).

Symbols are normalised to one house form everywhere outside the provider adapters (``ETH``,
``BRK.B``). A vendor's own spelling is the adapters' business
(:mod:`arena.data.providers.symbols`): an :class:`Asset` names no vendor, and the file's columns
beyond an asset's own (the seed's provider columns, which dbt keeps in the warehouse's
``universe`` table) are not read here.

The file lists every asset the arena knows, and :func:`load_universe` gives them all: a lookup
(``universe["GLD"]``) and an explicit selection (``universe.select(["GLD", "NVDA"])``) reach any
row. A season that names no symbols plays the default season's assets only, the rows whose
``default_season`` is true (:meth:`Universe.default_season`, which ``select(None)`` gives): the
assets added for a contest of their own (gold and crude oil through the ETFs GLD and USO) are
false there, so the default season, the demo and an ingest or a season without ``--symbols``
keep the assets they had. A file without the column (a universe of one's own) plays every row.
"""

from __future__ import annotations

import csv
import dataclasses
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from arena.core.environment import setting
from arena.core.errors import UnusableInput
from arena.core.resources import DBT_PROJECT

DEFAULT_UNIVERSE = DBT_PROJECT / "seeds" / "universe.csv"

ASSET_CLASSES = frozenset({"crypto", "stock", "etf"})
CALENDARS = frozenset({"24/7", "XNYS"})
_COLUMNS = ("symbol", "name", "asset_class", "sector", "tradable", "benchmark", "calendar")
DEFAULT_SEASON = "default_season"  # optional column: true where absent


class UniverseError(UnusableInput, ValueError):
    """The universe file is malformed, or a symbol is not in it."""


@dataclass(frozen=True, slots=True)
class Asset:
    """One row of the universe. ``calendar`` is ``"24/7"`` (crypto) or ``"XNYS"`` (US equities).
    ``cost_rate``: what a single-asset track and the asset's zero-skill players pay per unit of
    position change, when a contest sets it (:meth:`Universe.with_cost_rates`); ``None``: the
    default of the asset's calendar (:func:`arena.scoring.scorer.asset_cost_rate`).
    ``default_season``: whether a season that names no symbols plays the asset."""

    symbol: str
    name: str
    asset_class: str
    sector: str
    tradable: bool
    benchmark: bool
    calendar: str
    cost_rate: float | None = None
    default_season: bool = True

    @property
    def is_crypto(self) -> bool:
        return self.asset_class == "crypto"


@dataclass(frozen=True)
class Universe:
    """An ordered, immutable collection of assets addressed by house symbol."""

    assets: tuple[Asset, ...]
    _index: dict[str, Asset] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        index: dict[str, Asset] = {}
        for a in self.assets:
            if a.symbol in index:
                raise UniverseError(f"duplicate symbol {a.symbol!r} in universe")
            index[a.symbol] = a
        object.__setattr__(self, "_index", index)

    def __iter__(self) -> Iterator[Asset]:
        return iter(self.assets)

    def __len__(self) -> int:
        return len(self.assets)

    def __contains__(self, symbol: object) -> bool:
        return symbol in self._index

    def __getitem__(self, symbol: str) -> Asset:
        try:
            return self._index[symbol]
        except KeyError:
            raise UniverseError(f"unknown symbol {symbol!r}: not in the universe") from None

    @property
    def symbols(self) -> list[str]:
        return [a.symbol for a in self.assets]

    @property
    def tradable(self) -> list[Asset]:
        return [a for a in self.assets if a.tradable]

    @property
    def benchmarks(self) -> list[Asset]:
        return [a for a in self.assets if a.benchmark]

    def with_cost_rates(self, rates: Mapping[str, float]) -> Universe:
        """The same assets, those of ``rates`` charging their rate (a contest's fees)."""
        unknown = sorted(set(rates) - set(self._index))
        if unknown:
            raise UniverseError(f"cost rates for symbol(s) not in the universe: "
                                f"{', '.join(unknown)}")
        return Universe(tuple(dataclasses.replace(a, cost_rate=float(rates[a.symbol]))
                              if a.symbol in rates else a for a in self.assets))

    def default_season(self) -> Universe:
        """The assets a season that names no symbols plays: those of the default season (the
        universe itself when every asset is)."""
        if all(a.default_season for a in self.assets):
            return self
        return Universe(tuple(a for a in self.assets if a.default_season))

    def select(self, symbols: Iterable[str] | None) -> Universe:
        """The sub-universe of ``symbols`` (house form), in the universe's own order; ``None``:
        the default season's assets (:meth:`default_season`)."""
        if symbols is None:
            return self.default_season()
        wanted = [normalise_symbol(s) for s in symbols]
        missing = [s for s in wanted if s not in self]
        if missing:
            raise UniverseError(f"unknown symbol(s) {', '.join(missing)}: not in the universe")
        return Universe(tuple(a for a in self.assets if a.symbol in set(wanted)))


def normalise_symbol(raw: str) -> str:
    """House form of a user- or vendor-typed symbol: ``brk-b`` -> ``BRK.B``, ``eth/usdt`` -> ``ETH``."""
    s = raw.strip().upper()
    stripped = True
    while stripped:  # "ETH/USDT:USDT" carries the quote twice
        stripped = False
        for quote in (":USDT", "/USDT", "-USD", "USDT"):
            if s.endswith(quote) and len(s) > len(quote):
                s, stripped = s[: -len(quote)], True
                break
    return s.replace("-", ".").replace("/", ".")


def _parse_bool(value: str, *, row: int, column: str) -> bool:
    v = value.strip().lower()
    if v in {"true", "1", "yes"}:
        return True
    if v in {"false", "0", "no"}:
        return False
    raise UniverseError(f"universe row {row}: {column}={value!r} is not a boolean")


def _asset(r: dict[str, str], row: int) -> Asset:
    """The asset of the file's ``row`` (its line number) ``r``, checked."""
    if r["asset_class"] not in ASSET_CLASSES:
        raise UniverseError(f"universe row {row}: asset_class {r['asset_class']!r}")
    if r["calendar"] not in CALENDARS:
        raise UniverseError(f"universe row {row}: calendar {r['calendar']!r}")
    if normalise_symbol(r["symbol"]) != r["symbol"]:
        raise UniverseError(f"universe row {row}: {r['symbol']!r} is not in house form")
    default = r.get(DEFAULT_SEASON)
    return Asset(
        symbol=r["symbol"], name=r["name"], asset_class=r["asset_class"], sector=r["sector"],
        tradable=_parse_bool(r["tradable"], row=row, column="tradable"),
        benchmark=_parse_bool(r["benchmark"], row=row, column="benchmark"),
        calendar=r["calendar"],
        default_season=default is None or _parse_bool(default, row=row, column=DEFAULT_SEASON),
    )


def _parse(path: Path) -> Universe:
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in _COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise UniverseError(f"{path}: missing column(s) {', '.join(missing)}")
            assets = [_asset(r, i) for i, r in enumerate(reader, start=2)]
    except OSError as exc:
        raise UniverseError(f"cannot read universe file {path}: {exc}") from exc
    return Universe(tuple(assets))


@lru_cache(maxsize=8)
def _load_cached(path: str) -> Universe:
    return _parse(Path(path))


def load_universe(path: str | os.PathLike[str] | None = None) -> Universe:
    """Load the universe file (default: the dbt seed; ``$ARENA_UNIVERSE`` overrides)."""
    chosen = path or setting("universe") or DEFAULT_UNIVERSE
    return _load_cached(str(Path(chosen).resolve()))
