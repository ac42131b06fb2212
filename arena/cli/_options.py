"""The options several commands share, each with its help written once (cyclopts reads the help
of an ``Annotated`` parameter)."""

from __future__ import annotations

from typing import Annotated, Literal

from cyclopts import Parameter

from arena.data.providers import SOURCES, STAND_INS

SeasonLake = Annotated[str | None, Parameter(
    help="lake root of the season (default: $ARENA_LAKE or ./data_lake)")]
Lake = Annotated[str | None, Parameter(help="lake root (default: $ARENA_LAKE or ./data_lake)")]
Json = Annotated[bool, Parameter(help="machine-readable result")]
NoPublish = Annotated[bool, Parameter(
    help="do not rebuild the season's tables, marts and report after the cycle")]
Day = Annotated[str, Parameter(help="the cycle's day, ISO date")]
Days = Annotated[int, Parameter(help="season length in days")]
Roster = Annotated[str | None, Parameter(help="roster YAML (default: the shipped one)")]
Symbols = Annotated[str | None, Parameter(
    help="comma-separated house symbols (default: the whole universe)")]
Seed = Annotated[int | None, Parameter(help="seed of the synthetic market")]
Players = Annotated[int, Parameter(help="zero-skill players per asset for the luck tables")]
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
Interval = Literal["15m", "1h", "4h", "1d", "1w"]
Source = Literal[SOURCES]  # type: ignore[valid-type]  # the providers' registry names them
StandIn = Literal[STAND_INS]  # type: ignore[valid-type]  # what the files folder can stand in for
