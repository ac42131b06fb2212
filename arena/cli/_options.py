"""The options several commands share, each with its help written once (cyclopts reads the help
of an ``Annotated`` parameter), and the range of every number a command takes.

Every port, count, seed, day count and duration is range-checked where the command line is read
(a :class:`Within` validator): a value outside its range, or one that is no number, is one line
naming the option and its range, exit 2 (:func:`arena.cli.main`), before any work - never a
traceback from deep inside, never a port that wraps, never an allocation the machine cannot make.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Literal

from cyclopts import Parameter, Token

from arena.data.providers import SOURCES, STAND_INS

MAX_PORT = 65_535  # TCP's
MAX_SEED = 2**32 - 1  # a seed NumPy takes as one 32-bit word
MAX_DAYS = 3_660  # about ten years of daily cycles (a season is a month or a year)
# A luck table holds each asset's players' returns in memory, 8 bytes a player: a million is
# 8 MB an asset, under 0.5 GB for the 60-asset universe (and about 100 s of simulation for an
# asset of 2,000 bars); 10**12 players would ask for 8 TB.
MAX_PLAYERS = 1_000_000
MAX_DAILY_CALLS = 1_000_000  # model calls a day: far beyond any provider's quota
DAY_SECONDS = 86_400  # a cycle's deadline (and a model call) ends before the next day's cycle
DIGITS = re.compile(r"[+-]?[0-9]+")


def _shown(number: float) -> str:
    """A bound as the refusal and the help write it: ``65,535``, ``86,400``, ``0.5``."""
    return f"{int(number):,}" if float(number).is_integer() else f"{number:,}"


@dataclass(frozen=True)
class Within:
    """A cyclopts validator: a number from ``low`` to ``high`` (above ``low`` when ``above``).
    :meth:`describe` is the range as a refusal says it, for a number out of range and for a
    value that is no number alike (:func:`arena.cli.refusal`)."""

    low: float
    high: float
    above: bool = False  # low itself is outside (a duration must be positive)
    whole: bool = True

    @property
    def kind(self) -> str:
        return "a whole number" if self.whole else "a number"

    def describe(self) -> str:
        """``at least 1 and at most 65,535``, ``above 0 and at most 86,400``."""
        lowest = f"above {_shown(self.low)}" if self.above else f"at least {_shown(self.low)}"
        return f"{lowest} and at most {_shown(self.high)}"

    def __call__(self, type_: object, value: float | None) -> None:
        if value is None:  # an optional number not given
            return
        inside = (self.low < value if self.above else self.low <= value) and value <= self.high
        if not inside:  # NaN is outside too
            given = str(value)
            given = given if len(given) <= 40 else f"{given[:18]}...{given[-18:]}"
            raise ValueError(f"must be {self.describe()}, not {given}")


def whole_number(type_: object, tokens: Sequence[Token]) -> int:
    """A whole number as the user wrote it, in decimal digits. cyclopts' own reading of an
    ``int`` rounds ``1.5`` to 2 and reads ``0x10`` as 16: quietly another number than the one
    typed, so anything but digits is refused (as no number, with the option's range)."""
    [token] = tokens
    if not DIGITS.fullmatch(token.value.strip()):
        raise ValueError(f"{token.value!r} is not a whole number")
    return int(token.value)


def whole(low: int, high: int, help: str | None = None) -> Parameter:
    """A whole-number option from ``low`` to ``high``: read by :func:`whole_number`, held to
    its range by :class:`Within`."""
    return Parameter(help=help, converter=whole_number, validator=Within(low, high))


SeasonLake = Annotated[str | None, Parameter(
    help="lake root of the season (default: $ARENA_LAKE or ./data_lake)")]
Lake = Annotated[str | None, Parameter(help="lake root (default: $ARENA_LAKE or ./data_lake)")]
Json = Annotated[bool, Parameter(help="machine-readable result")]
NoPublish = Annotated[bool, Parameter(
    help="do not rebuild the season's tables, marts and report after the cycle")]
Day = Annotated[str, Parameter(help="the cycle's day, ISO date")]
Days = Annotated[int, whole(1, MAX_DAYS, f"season length in days (1 to {_shown(MAX_DAYS)})")]
Roster = Annotated[str | None, Parameter(help="roster YAML (default: the shipped one)")]
Symbols = Annotated[str | None, Parameter(
    help="comma-separated house symbols (default: the default season's assets; GLD and USO "
         "only when named)")]
Seed = Annotated[int | None, whole(0, MAX_SEED,
                                   f"seed of the synthetic market (0 to {_shown(MAX_SEED)})")]
RandomSeed = Annotated[int, whole(0, MAX_SEED, f"random seed (0 to {_shown(MAX_SEED)})")]
PLAYERS_RANGE = (f"1 to {_shown(MAX_PLAYERS)}: each asset's players' returns are held in memory, "
                 "8 bytes a player, under 0.5 GB for the whole universe at the cap")
Players = Annotated[int, whole(
    1, MAX_PLAYERS, f"zero-skill players per asset for the luck tables ({PLAYERS_RANGE})")]
Port = Annotated[int, whole(1, MAX_PORT, f"port to listen on (1 to {_shown(MAX_PORT)})")]
SECONDS = Within(0, DAY_SECONDS, above=True, whole=False)  # a duration: above 0, at most a day
Ingest = Annotated[Literal["season", "daily"], Parameter(
    help="season: the season's market in one validated run before the first day; daily: a "
         "run before each day, a live season's cadence (slower, the same books)")]
Prices = Annotated[str, Parameter(help="price CSV/Parquet: timestamp,open,high,low,close,volume")]
CostRate = Annotated[float | None, Parameter(
    help="cost per unit of |Δw| (default: 0.0006 crypto, 0.0002 stocks; a file without "
         "weekends counts as stocks)")]
Candles = Annotated[Literal["ohlcv", "close"], Parameter(
    help="how the prompts show the candles, recorded with the season: ohlcv, a row per bar "
         "(open, high, low, close, volume); close, one line of closes per series with its high "
         "and low (about 40% of the tokens)")]
Blind = Annotated[bool, Parameter(
    negative=(), help="play blind, recorded with the season: the prompts show neutral asset "
    "names, a relabelled calendar and rescaled price levels (returns and ratios exact); the "
    "names are revealed when the season ends")]
BlindSectors = Annotated[bool, Parameter(
    negative=(), help="with --blind: show each asset's sector (hidden by default: a sector can "
    "name an asset alone)")]
Drop = Annotated[str | None, Parameter(
    help="replay recorded bars from this files drop folder (DROP/<interval>/<SYMBOL>.csv or "
         ".parquet, DROP/funding/, DROP/earnings.csv) instead of the synthetic market")]
DropInterval = Annotated[Literal["15m", "1h", "4h", "1d"], Parameter(
    help="with --drop: the finest interval the folder holds; the coarser ones are built from it")]
Interval = Literal["15m", "1h", "4h", "1d", "1w"]
Source = Literal[SOURCES]  # type: ignore[valid-type]  # the providers' registry names them
CryptoSource = Annotated[Source, Parameter(  # a season's (or a contest's) providers
    help="provider of the crypto assets (ccxt for real prices)")]
StockSource = Annotated[Source, Parameter(
    help="provider of the stocks and ETFs (yfinance for real prices)")]
StandIn = Literal[STAND_INS]  # type: ignore[valid-type]  # what the files folder can stand in for
