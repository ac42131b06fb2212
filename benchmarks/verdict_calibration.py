"""Calibration of the verdict on skill: how often it calls a contestant without skill "skilled",
and how often it finds planted skill - on real daily prices and on the synthetic market.

Leagues of 2, 5, 10 and 20 seasons (28 cycles each) are played by contestants of every kind a user
could field, each through the engine's own broker (:func:`arena.engine.broker.execute_answer`),
each season placed among its matched players (:mod:`arena.scoring.matched`) and each league judged
by the verdict (:func:`arena.scoring.verdict.matched_stouffer`, the contestant tested alone at 5%).
The zero-skill kinds:

* ``random policy``      the arena's zero-skill players' own policy (:func:`zero_skill_answer`)
* ``cash``               trades nothing (no skill percentile: never tested)
* ``buy-and-hold``       one asset drawn at random per league, bought with all the cash every season
* ``equal-weight basket``ten assets drawn per league, one bought per cycle at 10% of equity
* ``short-only``         the random policy, every open a short
* ``+/-1 weekly``        one asset per league, long or short at random with all the cash, five
                         cycles at a time
* ``replicated xM a=A``  M instances of the random policy; each season each instance copies one
                         shared book with probability A, else plays its own

Planted skill (power): the random policy whose opens, with probability p, buy the asset that rises
most by the next cycle. Printed without a target: ``momentum`` (the house momentum rule, with its
defaults, on the briefing's 10- and 30-day returns), which on real prices may hold a genuine
edge over random selection.

Markets:

* ``real``: the daily closes of 20 S&P 500 stocks, 1990-2022, that skfolio ships
  (``skfolio/datasets/data/sp500_dataset.csv.gz``, BSD-3; read from the installed package without
  importing it: ``make bench-verdict`` installs it with ``pip install --no-deps``). One cycle per
  trading day; seasons are consecutive 28-day windows, a league 20 consecutive seasons from a
  random start (leagues overlap, so their flags are not independent: the Monte Carlo error is an
  underestimate there).
* ``synthetic``: the embedded default market (10 crypto assets and 10 stocks, daily closes, a
  cycle every day, stocks tradable on NYSE sessions only), a market of its own (provider seed) for
  every five leagues, so the leagues are independent.

Before/after (``--before``, real market): the same leagues judged by the previous ruler - the
luck percentile among the arena's zero-skill players (long or short 50/50), every replicated
instance pooled as a draw of its own, Stouffer's Z with the normal p-value.

    python benchmarks/verdict_calibration.py [--leagues 400] [--players 500] [--workers 2]
                                             [--markets real,synthetic] [--before]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from arena.agents.house import momentum
from arena.core.universe import Asset, Universe, load_universe
from arena.data.providers.synthetic import SyntheticProvider
from arena.engine.broker import execute_answer
from arena.engine.contract import Answer, Decision
from arena.engine.portfolio import SHORT, Fill, Portfolio
from arena.engine.rules import ARENA_RULES, CycleState
from arena.scoring.arena_luck import arena_zero_skill, zero_skill_answer
from arena.scoring.matched import MatchedMarket, book_from_fills, matched_players, relabelling_keys
from arena.scoring.verdict import ALPHA, SeasonPlace, matched_stouffer, mid_rank, stouffer

LENGTHS = (2, 5, 10, 20)
CYCLES = 28
HISTORY = 31  # cycles before a season that the momentum rule reads (its 30-day return)
SKFOLIO_DATA = "datasets/data/sp500_dataset.csv.gz"
SYNTHETIC_SEASONS = 100  # 2018-01 to 2025-10: five leagues of 20 seasons per synthetic market
NORMAL = NormalDist()


# ------------------------------------------------------------------------------- the markets
@dataclass(frozen=True)
class Market:
    """Cycle prices (NaN: no price of that cycle) of tradable assets, and where each season of
    the market starts (a row of ``prices``)."""

    name: str
    prices: pd.DataFrame
    universe: Universe
    starts: tuple[int, ...]


def real_market() -> Market:
    spec = importlib.util.find_spec("skfolio")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the real market needs skfolio's data file: pip install --no-deps 'skfolio==1.12.2'"
                 " (or make bench-verdict)")
    path = Path(next(iter(spec.submodule_search_locations))) / SKFOLIO_DATA
    frame = pd.read_csv(path, index_col=0, parse_dates=True).dropna()
    frame.index = pd.DatetimeIndex(frame.index).tz_localize("UTC") + pd.Timedelta(hours=16)
    universe = Universe(tuple(Asset(str(s), str(s), "stock", "", True, False, "24/7")
                              for s in frame.columns))  # every row is a trading day
    starts = tuple(range(HISTORY, len(frame) - CYCLES + 1, CYCLES))
    return Market("real", frame.astype("float64"), universe, starts)


def synthetic_market(seed: int) -> Market:
    universe = load_universe().select(None)  # the default season's assets
    crypto = [a for a in universe.tradable if a.asset_class == "crypto"][:10]
    stocks = [a for a in universe.tradable if a.asset_class == "stock"][:10]
    provider = SyntheticProvider(seed=seed)
    first, last = pd.Timestamp("2018-01-02", tz="UTC"), pd.Timestamp("2025-12-31", tz="UTC")
    days = pd.date_range(first, last, freq="1D")
    columns = {}
    for asset in crypto + stocks:
        bars = provider.fetch_bars(asset, "1d", first, last)
        closes = pd.Series(bars["close"].to_numpy(),
                           index=pd.DatetimeIndex(bars["timestamp"]).tz_convert("UTC").normalize())
        columns[asset.symbol] = closes.reindex(days)
    prices = pd.DataFrame(columns)
    prices.index = days + pd.Timedelta(hours=16)
    starts = tuple(HISTORY + CYCLES * i for i in range(SYNTHETIC_SEASONS))
    return Market(f"synthetic-{seed}", prices, universe, starts)


@dataclass
class Season:
    """One season: its cycle prices, the marks each cycle values a book at, the tradable
    symbols of each cycle, the next cycle's marks (the planted oracle), its matched market."""

    key: str
    prices: pd.DataFrame
    universe: Universe
    marks: list[dict[str, float]]
    tradable: list[list[str]]
    ahead: list[dict[str, float]]
    history: pd.DataFrame  # the season and the cycles before it (momentum's returns)
    matched: MatchedMarket


def season_of(market: Market, start: int) -> Season:
    window = market.prices.iloc[start:start + CYCLES]
    matched = MatchedMarket.from_prices(window, market.universe)
    marked = market.prices.ffill()
    marks, tradable, ahead = [], [], []
    for k in range(CYCLES):
        row = marked.iloc[start + k]
        marks.append({s: float(v) for s, v in row.items() if math.isfinite(v)})
        tradable.append([matched.symbols[j] for j in np.flatnonzero(matched.tradable[k])])
        nxt = marked.iloc[min(start + k + 1, len(marked) - 1)]
        ahead.append({s: float(v) for s, v in nxt.items() if math.isfinite(v)})
    return Season(f"{market.name}:{start}", window, market.universe, marks, tradable, ahead,
                  marked.iloc[start - HISTORY:start + CYCLES], matched)


# ------------------------------------------------------------------------------- the players
Policy = Callable[[int, Portfolio, Season], Answer]


def play(season: Season, policy: Policy) -> list[Fill]:
    """One contestant's season through the engine's broker (no invalidation monitor: daily
    closes only)."""
    state, fills = Portfolio(), []
    for k, at in enumerate(season.matched.cycles):
        answer = policy(k, state, season)
        if answer.decisions:
            result = execute_answer(CycleState(state, at), answer, season.marks[k],
                                    season.universe, ARENA_RULES)
            state, fills = result.state.portfolio, [*fills, *result.fills]
    return fills


def _decision(action: str, symbol: str, pct: float, price: float, side: str) -> Decision:
    level = price * (0.5 if side != SHORT else 1.5)
    return Decision(action=action, symbol=symbol, percent_of_equity=pct, invalidation_price=level,
                    confidence=0.9, thesis="t", invalidation="i", rationale="r")


def random_policy(rng: np.random.Generator, *, shorts_only: bool = False,
                  oracle: float = 0.0) -> Policy:
    """The zero-skill players' own policy; ``shorts_only`` turns its opens into shorts;
    ``oracle`` is the chance that an open buys the asset that rises most by the next cycle."""
    def answer(k: int, state: Portfolio, season: Season) -> Answer:
        got = zero_skill_answer(rng, state, season.marks[k], season.marks[k],
                                season.tradable[k])
        if not (shorts_only or oracle):
            return got
        decisions = []
        for d in got.decisions:
            if d.action in ("open_long", "open_short"):
                symbol, side = d.symbol, SHORT if shorts_only else (
                    "long" if d.action == "open_long" else SHORT)
                if oracle and rng.random() < oracle:
                    closing = {x.symbol for x in got.decisions if x.action == "close"}
                    pool = [s for s in season.tradable[k]
                            if s not in state.positions and s not in closing]
                    symbol = max(pool, key=lambda s: season.ahead[k][s] / season.marks[k][s])
                    side = "long"
                action = "open_short" if side == SHORT else "open_long"
                d = _decision(action, symbol, d.percent_of_equity, season.marks[k][symbol], side)
            decisions.append(d)
        return replace(got, decisions=decisions)
    return answer


def buy_and_hold(symbol: str) -> Policy:
    def answer(k: int, state: Portfolio, season: Season) -> Answer:
        if k or symbol not in season.tradable[0]:
            return Answer(reasoning="hold", decisions=[])
        return Answer(reasoning="buy", decisions=[
            _decision("open_long", symbol, 100.0, season.marks[0][symbol], "long")])
    return answer


def basket(symbols: list[str]) -> Policy:
    def answer(k: int, state: Portfolio, season: Season) -> Answer:
        todo = [s for s in symbols if s not in state.positions and s in season.tradable[k]]
        if not todo or len(state.positions) >= len(symbols):
            return Answer(reasoning="hold", decisions=[])
        return Answer(reasoning="buy", decisions=[
            _decision("open_long", todo[0], 10.0, season.marks[k][todo[0]], "long")])
    return answer


def weekly(symbol: str, rng: np.random.Generator) -> Policy:
    def answer(k: int, state: Portfolio, season: Season) -> Answer:
        if symbol not in season.tradable[k]:
            return Answer(reasoning="hold", decisions=[])
        if symbol in state.positions:
            opened = season.matched.cycles.get_loc(state.positions[symbol].opened_at)
            if k - opened >= 5:
                return Answer(reasoning="close", decisions=[
                    Decision(action="close", symbol=symbol, rationale="r")])
            return Answer(reasoning="hold", decisions=[])
        side = "long" if rng.random() < 0.5 else SHORT
        action = "open_long" if side == "long" else "open_short"
        return Answer(reasoning="open", decisions=[
            _decision(action, symbol, 100.0, season.marks[k][symbol], side)])
    return answer


def momentum_rule(k: int, state: Portfolio, season: Season) -> Answer:
    """The house momentum rule on the universe table a briefing would show: each tradable
    asset's price and its 10- and 30-cycle returns."""
    now = HISTORY + k
    table = []
    for symbol in season.prices.columns:
        price = season.marks[k].get(symbol)
        past = season.history[symbol].iloc[:now + 1].dropna()
        row = {"symbol": symbol, "price": price, "tradeable_today": symbol in season.tradable[k]}
        for days in (1, 10, 30):
            row[f"return_{days}d"] = (float(past.iloc[-1] / past.iloc[-1 - days] - 1)
                                      if len(past) > days else None)
        table.append(row)
    equity = state.equity({s: season.marks[k][s] for s in state.positions})
    book = {"positions": [{"symbol": s, "side": p.side} for s, p in state.positions.items()],
            "cash": state.cash, "equity": equity,
            "new_positions_left": 1 if len(state.positions) < ARENA_RULES.max_positions else 0}
    return Answer.of(momentum(table, book))


# ------------------------------------------------------------------------------- the kinds
ZERO_SKILL = ("random policy", "cash", "buy-and-hold", "equal-weight basket", "short-only",
              "+/-1 weekly", "replicated x3 a=0", "replicated x3 a=0.9", "replicated x3 a=1",
              "replicated x10 a=0.9", "replicated x10 a=1")
PLANTED = ("planted p=0.05", "planted p=0.1", "planted p=0.2")
KINDS = (*ZERO_SKILL, *PLANTED, "momentum")


def _replicas(kind: str) -> tuple[int, float]:
    parts = kind.split()
    return int(parts[1][1:]), float(parts[2][2:])


def instances(kind: str, season: Season, league_rng: np.random.Generator, league: dict,
              rng: np.random.Generator) -> list[list[Fill]]:
    """The books of a kind's instances for one season (one, unless replicated)."""
    symbols = list(season.prices.columns)
    if kind == "random policy":
        return [play(season, random_policy(rng))]
    if kind == "cash":
        return [[]]
    if kind == "buy-and-hold":
        return [play(season, buy_and_hold(league.setdefault(
            "asset", str(league_rng.choice(symbols)))))]
    if kind == "equal-weight basket":
        chosen = league.setdefault("basket", list(league_rng.choice(symbols, 10, replace=False)))
        return [play(season, basket([str(s) for s in chosen]))]
    if kind == "short-only":
        return [play(season, random_policy(rng, shorts_only=True))]
    if kind == "+/-1 weekly":
        return [play(season, weekly(league.setdefault("asset", str(league_rng.choice(symbols))),
                                    rng))]
    if kind.startswith("replicated"):
        m, agree = _replicas(kind)
        shared = play(season, random_policy(np.random.default_rng(rng.integers(2**63))))
        return [shared if rng.random() < agree else
                play(season, random_policy(np.random.default_rng(rng.integers(2**63))))
                for _ in range(m)]
    if kind.startswith("planted"):
        return [play(season, random_policy(rng, oracle=float(kind.split("=")[1])))]
    if kind == "momentum":
        return [play(season, momentum_rule)]
    raise ValueError(kind)


# ------------------------------------------------------------------------------- one league
@dataclass
class LeagueResult:
    flags: dict[str, dict[int, bool | None]]  # kind -> length -> flagged (None: not tested)
    places: dict[str, list[float]]  # kind -> the unit's skill percentile of each season
    before: dict[str, dict[int, bool]]  # kind -> length -> flagged by the previous ruler


def play_league(task: tuple[str, int, int, int, bool]) -> LeagueResult:
    market_name, seed, first, league_index, before = task
    market = _market(market_name, seed)
    players = _PLAYERS
    keys = relabelling_keys(tuple(sorted(market.prices.columns)), players, seed=0)
    seasons = [season_of(market, market.starts[first + i]) for i in range(max(LENGTHS))]
    flags: dict[str, dict[int, bool | None]] = {}
    places: dict[str, list[float]] = {}
    previous: dict[str, dict[int, bool]] = {}
    for kind_index, kind in enumerate(KINDS):
        league_rng = np.random.default_rng([seed, league_index, kind_index, 0])
        rng = np.random.default_rng([seed, league_index, kind_index, 1])
        league: dict = {}
        placed: list[SeasonPlace | None] = []
        luck: list[list[float]] = []
        for s in seasons:
            fills = instances(kind, s, league_rng, league, rng)
            books = [book_from_fills(f"{kind}-{i}", f, s.matched) for i, f in enumerate(fills)]
            if before and kind in BEFORE:
                zero = _zero_skill(market, s)
                luck.append([mid_rank(float(np.mean(zero < b.final_return())
                                            + 0.5 * np.mean(zero == b.final_return())),
                                      len(zero)) for b in books])
            if not any(b.traded for b in books):
                placed.append(None)
                continue
            got = matched_players(books, s.matched, players=players, seed=0, name=kind,
                                  keys=keys)
            placed.append(SeasonPlace(s.key, got.own_return, got.unit_returns))
        scored = [p for p in placed if p is not None]
        places[kind] = [matched_stouffer([p]).places[0] for p in scored]
        flags[kind] = {}
        for length in LENGTHS:
            mine = [p for p in placed[:length] if p is not None]
            flags[kind][length] = (None if len(mine) < 2 else
                                   matched_stouffer(mine).p_value <= ALPHA)
            if luck:
                previous.setdefault(kind, {})[length] = (
                    stouffer([u for season in luck[:length] for u in season])[1] <= ALPHA)
    return LeagueResult(flags, places, previous)


BEFORE = ("random policy", "buy-and-hold", "+/-1 weekly", "replicated x3 a=0.9",
          "replicated x10 a=0.9", "replicated x10 a=1")
_MARKETS: dict[tuple[str, int], Market] = {}
_ZERO: dict[str, np.ndarray] = {}
_PLAYERS = 500
_ZERO_PLAYERS = 300


def _market(name: str, seed: int) -> Market:
    key = (name, seed)
    if key not in _MARKETS:
        _MARKETS[key] = real_market() if name == "real" else synthetic_market(seed)
    return _MARKETS[key]


def _zero_skill(market: Market, season: Season) -> np.ndarray:
    if season.key not in _ZERO:
        _ZERO[season.key] = arena_zero_skill(season.prices, market.universe,
                                             players=_ZERO_PLAYERS, seed=0).returns
    return _ZERO[season.key]


def _init(players: int) -> None:
    global _PLAYERS
    _PLAYERS = players


# ------------------------------------------------------------------------------- the report
def tasks(market: str, leagues: int, before: bool) -> list[tuple[str, int, int, int, bool]]:
    if market == "real":
        count = len(real_market().starts)
        rng = np.random.default_rng(2026)
        firsts = rng.integers(0, count - max(LENGTHS) + 1, size=leagues)
        return [("real", 0, int(f), i, before) for i, f in enumerate(firsts)]
    per = SYNTHETIC_SEASONS // max(LENGTHS)
    return [("synthetic", 1000 + i // per, (i % per) * max(LENGTHS), i, False)
            for i in range(leagues)]


def rate(values: list[bool]) -> tuple[float, float]:
    n = len(values)
    p = sum(values) / n if n else math.nan
    return p, math.sqrt(p * (1 - p) / n) if n else math.nan


def report(market: str, results: list[LeagueResult], seconds: float) -> bool:
    print(f"\n== {market}: {len(results)} leagues, flag rate at {ALPHA:.0%} (tested alone) "
          f"+/- one standard error; {seconds:.0f} s")
    print(f"{'kind':24s}" + "".join(f"{f'{n} seasons':>18s}" for n in LENGTHS)
          + "   median pct   target")
    ok = True
    for kind in KINDS:
        cells, met = [], True
        for length in LENGTHS:
            got = [r.flags[kind][length] for r in results if r.flags[kind][length] is not None]
            if not got:
                cells.append(f"{'not tested':>18s}")
                continue
            p, se = rate(got)
            cells.append(f"{p:>11.1%} +/-{se:4.1%}")
            if kind in ZERO_SKILL and p > ALPHA + 2 * se:
                met = False
        places = [u for r in results for u in r.places[kind]]
        median = f"{np.median(places):10.1%}" if places else f"{'-':>10s}"
        target = ("met" if met else "MISSED") if kind in ZERO_SKILL else "power" if \
            kind in PLANTED else "-"
        ok &= met
        print(f"{kind:24s}" + "".join(cells) + f"   {median}   {target}")
    if any(r.before for r in results):
        print(f"\n   the previous ruler on the same leagues (luck percentile among "
              f"{_ZERO_PLAYERS} zero-skill players, instances pooled, normal p-value):")
        for kind in BEFORE:
            cells = []
            for length in LENGTHS:
                p, se = rate([r.before[kind][length] for r in results if kind in r.before])
                cells.append(f"{p:>11.1%} +/-{se:4.1%}")
            print(f"{kind:24s}" + "".join(cells))
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leagues", type=int, default=400)
    parser.add_argument("--players", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--markets", default="real,synthetic")
    parser.add_argument("--before", action="store_true",
                        help="also judge the real market's leagues by the previous ruler")
    args = parser.parse_args()
    ok = True
    for market in args.markets.split(","):
        t0 = time.perf_counter()
        todo = tasks(market, args.leagues, args.before and market == "real")
        with ProcessPoolExecutor(args.workers, initializer=_init,
                                 initargs=(args.players,)) as pool:
            results = list(pool.map(play_league, todo, chunksize=1))
        ok &= report(market, results, time.perf_counter() - t0)
    print("\nevery zero-skill kind at or below 5% within two standard errors:",
          "yes" if ok else "NO")


if __name__ == "__main__":
    main()
