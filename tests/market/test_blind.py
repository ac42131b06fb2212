"""A blind season's mapping (:mod:`arena.market.blind`) and a turn played under it
(:mod:`arena.pipeline.blind_turn`): the contestant sees neutral names, a shifted calendar and
rescaled prices, and the engine's judgement comes back in real terms bit for bit."""

from __future__ import annotations

import json
import random
import re

import pandas as pd
import pytest

from arena.data.errors import DamagedFile
from arena.engine.portfolio import Portfolio
from arena.engine.rules import CycleState
from arena.market.blind import EXPONENTS, HIDDEN_SECTOR, Blinding, BlindingError
from arena.market.briefing import build_market, portfolio_snapshot
from arena.pipeline.blind_turn import blind_briefing, blind_turn
from arena.pipeline.turn import take_turn
from tests.market_lakes import FRI, PROVIDER, market_lakes
from tests.pipeline.test_turn import AT, BRIEFING, Scripted

PRICES = {"ETH": 2_013.37, "SOL": 101.29, "AAPL": 201.07, "NVDA": 180.33, "DOGE": 0.1713}


@pytest.fixture(scope="module")
def blinding(universe):
    return Blinding.draw(universe, seed=7)


def test_names_keep_the_class_and_hide_the_order(universe, blinding):
    for a in universe:
        name = blinding.name(a.symbol)
        prefix = "BENCH" if a.benchmark else {"crypto": "CRY", "stock": "STK", "etf": "ETF"}[
            a.asset_class]
        assert re.fullmatch(rf"{prefix}\d+", name), (a.symbol, name)
        assert blinding.real(name) == a.symbol
    assert len(set(blinding.names.values())) == len(universe)
    crypto = [blinding.name(a.symbol) for a in universe if a.is_crypto and not a.benchmark]
    assert crypto != sorted(crypto)  # numbered in a secret order, not the universe's
    assert Blinding.draw(universe, seed=7) == blinding  # a seed draws the same secret again
    assert Blinding.draw(universe, seed=8) != blinding


def test_factors_are_powers_of_two_far_from_one_and_the_shift_is_whole_weeks(universe, blinding):
    for s in universe.symbols:
        f = blinding.factor(s)
        assert f in {2.0 ** k for k in EXPONENTS} and (f >= 4 or f <= 0.25)
    assert 40 * 52 <= blinding.shift_weeks <= 80 * 53
    shifted = blinding.time(AT)
    assert shifted.day_name() == AT.day_name() and shifted.time() == AT.time()
    assert shifted.year - AT.year >= 40


def test_the_secret_survives_its_file_and_a_damaged_one_is_refused(universe, blinding):
    body = json.loads(json.dumps(blinding.as_json()))
    assert Blinding.from_json(body) == blinding
    with pytest.raises(BlindingError, match="format"):
        Blinding.from_json({**body, "format": 99})
    with pytest.raises(BlindingError, match="malformed"):
        Blinding.from_json({k: v for k, v in body.items() if k != "assets"})
    twice = [dict(a, neutral="CRY01") for a in body["assets"][:2]]
    with pytest.raises(BlindingError, match="share a neutral name"):
        Blinding.from_json({**body, "assets": twice})
    real_name = [dict(body["assets"][0], neutral=body["assets"][1]["symbol"]), body["assets"][1]]
    with pytest.raises(BlindingError, match="real symbols too"):
        Blinding.from_json({**body, "assets": real_name})
    with pytest.raises(BlindingError, match="out of range"):
        Blinding.from_json({**body, "assets": [dict(body["assets"][0],
                                                    price_factor_exponent=1)]})
    with pytest.raises(BlindingError, match="no neutral name for ETH"):
        Blinding({"SOL": "CRY01"}, {"SOL": 2}, 3000).covers(universe.select(["ETH", "SOL"]))


# ------------------------------------------------------------------- the engine, equivariant
def _decision(rng: random.Random, symbol: str, price: float) -> dict:
    action = rng.choice(["open_long", "open_short", "add", "close", "hold", "hold", "buy"])
    d = {"action": action, "symbol": symbol, "confidence": rng.choice([0.5, 0.85, 0.95, 0.9]),
         "thesis": "t", "invalidation": "i"}
    if action in ("open_long", "open_short", "add"):
        d["percent_of_equity"] = rng.choice([5, 15, 30, 60, 100])
    if action == "close":
        d["percent_of_position"] = rng.choice([25, 50, 100])
    if action != "close" and rng.random() < 0.9:  # mostly on the losing side, not always
        below = action == "open_long" or (action != "open_short" and rng.random() < 0.5)
        d["invalidation_price"] = round(price * (rng.uniform(0.8, 0.98) if below else
                                                 rng.uniform(1.02, 1.2)), 4)
    return d


def _answer(decisions: list[dict]) -> str:
    return json.dumps({"reasoning": "r", "decisions": decisions})


def _fields(cycle):
    """Everything of a played cycle that reaches the ledger's books, exactly."""
    rounds = [(r.name, r.result.fills if r.result else None,
               r.result.levels if r.result else None,
               [(x.decision_index, x.symbol, x.code) for x in r.result.rejections]
               if r.result else None,
               [d.as_json() for d in r.parsed.answer.decisions]
               if r.parsed is not None and r.parsed.ok else None) for r in cycle.rounds]
    return cycle.status, rounds, cycle.state.portfolio


def test_a_blind_turn_books_exactly_what_the_open_turn_books(universe, blinding):
    fills = sum(_play_both(universe, blinding, seed) for seed in range(12))
    assert fills >= 12  # the answers traded: opens, adds and closes, blind and open


def _play_both(universe, blinding, seed):
    """The same answers, sent in real terms to the open engine and in blind terms to the blind
    one, leave bit-for-bit the same fills, levels, decisions, rejections and book; four turns
    in a row, so positions opened blind are added to, held and closed blind."""
    rng = random.Random(seed)
    fills = 0
    real_state = blind_state = CycleState(Portfolio(), AT)
    for turn in range(4):
        at = AT + pd.Timedelta(days=turn)
        prices = {s: p * rng.uniform(0.9, 1.1) for s, p in PRICES.items()}
        decisions = [_decision(rng, s, prices[s]) for s in rng.sample(sorted(PRICES), 3)]
        repair = [_decision(rng, s, prices[s]) for s in rng.sample(sorted(PRICES), 2)]
        script = [_answer(decisions), _answer(repair)]
        blind_script = [_answer([blinding.decision(d) for d in ds]) for ds in (decisions, repair)]
        real = take_turn(Scripted(list(script)), BRIEFING,
                         CycleState(real_state.portfolio, at), prices, universe)
        blind = blind_turn(Scripted(list(blind_script)), BRIEFING,
                           CycleState(blind_state.portfolio, at), prices, universe, blinding)
        assert _fields(blind) == _fields(real), (seed, turn)
        real_state, blind_state, fills = real.state, blind.state, fills + len(real.fills)
    return fills


def test_the_blind_engine_speaks_blind_and_refuses_real_names(universe, blinding):
    """A rejection and the repair follow-up name the neutral symbol and its blind price level;
    a real ticker is not in the blind market at all."""
    eth, level = blinding.name("ETH"), PRICES["ETH"] * 1.1  # on the wrong side of a long
    first = _answer([blinding.decision({"action": "open_long", "symbol": "ETH",
                                        "percent_of_equity": 20, "confidence": 0.9,
                                        "invalidation_price": level, "thesis": "t",
                                        "invalidation": "i"}),
                     {"action": "open_long", "symbol": "SOL", "percent_of_equity": 20,
                      "confidence": 0.9, "invalidation_price": 90.0, "thesis": "t",
                      "invalidation": "i"}])
    contestant = Scripted([first, _answer([])])
    out = blind_turn(contestant, BRIEFING, CycleState(Portfolio(), AT), PRICES, universe,
                     blinding)
    [follow_up] = contestant.follow_ups
    assert eth in follow_up and "ETH" not in follow_up
    blind_price = f"{PRICES['ETH'] * blinding.factor('ETH'):g}"
    assert blind_price in follow_up and f"{PRICES['ETH']:g}" not in follow_up
    assert "SOL is not in the universe table" in follow_up  # a real name trades nothing
    codes = {(r.symbol, r.code) for r in out.rounds[0].result.rejections}
    assert codes == {("ETH", "level_wrong_side"), ("SOL", "unknown_symbol")}
    assert out.fills == ()


# ------------------------------------------------------------------------------ the briefing
def test_the_briefing_shows_no_real_name_date_or_price(tmp_path_factory, universe, blinding):
    lake = market_lakes(tmp_path_factory, universe).cut_fri
    market = build_market(lake, PROVIDER, universe, FRI, held=["ETH"])
    state = CycleState(Portfolio(), FRI)
    snapshot = portfolio_snapshot(state, market.prices)
    briefing = blind_briefing(blinding.market(market), "m", snapshot, blinding)
    text = briefing.prompt_text
    for a in universe:
        assert not re.search(rf"(?<![A-Z0-9.]){re.escape(a.symbol)}(?![A-Z0-9])", text), a.symbol
        assert a.name not in text or a.name == blinding.name(a.symbol), a.name
    for day in pd.date_range(FRI - pd.Timedelta(days=400), FRI, freq="D"):
        assert f"{day:%Y-%m-%d}" not in text
    assert "BLIND" in text and f"{blinding.time(FRI):%Y-%m-%d %H:%M} UTC" in text
    assert HIDDEN_SECTOR in text
    rows = {r.symbol: r for r in market.table}
    shown = {r.symbol: r for r in blinding.market(market).table}
    for s, r in rows.items():
        b = shown[blinding.name(s)]
        assert (b.return_10d, b.rsi_14d, b.adv_usd, b.volatility_30d) == (
            r.return_10d, r.rsi_14d, r.adv_usd, r.volatility_30d)
        if r.price is not None:
            assert b.price == r.price * blinding.factor(s)


def test_a_malformed_decision_is_recorded_with_its_real_symbol_and_level(universe, blinding):
    """The decisions table is in real terms, even for an item the contract could not read."""
    level = PRICES["ETH"] * 0.9 * blinding.factor("ETH")
    sent = {"action": "open_long", "symbol": blinding.name("ETH"), "percent_of_equity": "lots",
            "confidence": 0.9, "invalidation_price": level}
    contestant = Scripted([_answer([sent]), _answer([])])
    out = blind_turn(contestant, BRIEFING, CycleState(Portfolio(), AT), PRICES, universe,
                     blinding)
    [recorded] = [d.as_json() for d in out.rounds[0].parsed.answer.decisions]
    assert recorded["symbol"] == "ETH" and recorded["percent_of_equity"] == "lots"
    assert recorded["invalidation_price"] == level / blinding.factor("ETH")
    assert [r.symbol for r in out.rounds[0].result.rejections] == ["ETH"]


class _Damaged:
    def candles(self, symbol, interval, count):
        raise DamagedFile(f"lake/bars/provider=synthetic/symbol={symbol}/data.parquet",
                          "not a Parquet file")


def test_a_tool_answer_about_damaged_bars_does_not_name_the_real_partition(blinding):
    with pytest.raises(BlindingError, match="the bars of CRY") as caught:
        blinding.charts(_Damaged()).candles(blinding.name("ETH"), "1d", 10)
    assert "ETH" not in str(caught.value) and "symbol=" not in str(caught.value)


def test_held_assets_are_shown_in_the_neutral_names_order(tmp_path_factory, universe,
                                                          blinding):
    lake = market_lakes(tmp_path_factory, universe).cut_fri
    market = build_market(lake, PROVIDER, universe, FRI)
    unscreened = [r.symbol for r in market.table if r.symbol not in market.screen.selected
                  and r.price is not None][:4]
    market = build_market(lake, PROVIDER, universe, FRI, held=unscreened)
    shown = blinding.market(market)
    screened = [d.symbol for d in shown.assets[:len(market.screen.selected)]]
    held = [d.symbol for d in shown.assets[len(market.screen.selected):]]
    assert screened == [blinding.name(s) for s in market.screen.selected]
    assert held == sorted(blinding.name(s) for s in unscreened)
