"""The leak test of blind seasons: every prompt, conversation, answer, tool call and tool answer
of a blind season - as the ledger keeps them and as the model server received them - is searched
for every ticker, vendor symbol and company name of the universe file, every real date of the
season and the history its prompts reach back to (in the common formats), and the real price
levels, and nothing is found (:mod:`tests.blind_leaks`).

Two seasons: one of the synthetic market, replayed blind with every kind that reads a prompt or
calls a tool (a model, a researcher with its tools, a debate, a reverse, the house rules), and
one of a recorded real series shipped with the tests - Google's daily bars (``GOOG.csv``)
standing for GOOGL and the S&P 500's (``SP500_1d.csv.gz``) for the benchmark SPY, from a files
drop folder - played blind through the week of 2008-09-15, a week any model would recognise.
Each test first runs the same search on what the season shows when open, which must find the
real names, dates and prices: the search can fail.
"""

from __future__ import annotations

import datetime as dt
import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from arena.agents.factory import build_contestant
from arena.agents.roster import ContestantSpec, Params
from arena.app.replay import ReplayPlan, replay
from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.providers import make_provider
from arena.engine.portfolio import Portfolio
from arena.engine.rules import CycleState
from arena.ledger.store import Ledger
from arena.market.blind import Blinding
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.pipeline.cycle import CycleCharts, run_cycle
from arena.pipeline.season_config import find_season, season_blinding
from tests.agents.openai_stub import OpenAIStub
from tests.blind_leaks import Real, blind_model, leaks, real_of, season_texts, shown_as

FIXTURES = Path(__file__).parents[1] / "fixtures" / "prices"
KEY = {"STUB_KEY": "not-a-real-key"}


def _spec(name: str, kind: str, url: str, **more) -> dict:
    return {"name": name, "kind": kind, "model": "openai/stub-model", "api_base": url,
            "api_key_env": "STUB_KEY", "params": {"timeout": 10, "num_retries": 0}, **more}


def _charted(lake: Lake, provider: str, universe, times) -> list[float]:
    """Every price a tool could serve: the last 100 closed bars of each interval of each asset."""
    levels = []
    for at in times:
        charts = CycleCharts(lake, provider, universe, at)
        for a in universe:
            for interval in ("4h", "1d", "1w"):
                bars = charts.candles(a.symbol, interval, 100)
                levels += bars[["open", "high", "low", "close"]].to_numpy().ravel().tolist()
    return levels


def _open_prompt(lake: Lake, provider: str, universe, at) -> str:
    market = build_market(lake, provider, universe, at)
    state = CycleState(Portfolio(), at)
    return build_briefing(market, "open", portfolio_snapshot(state, market.prices)).prompt_text


def _control(open_prompt: str, real, universe) -> list[str]:
    """The search over the open prompt of the same cycle, each name standing for itself: it
    finds every kind of leak there (tickers, dates, printed prices), so it can fail."""
    found = leaks(open_prompt, real, {s: s for s in universe.symbols})
    kinds = {f.split(" ")[0] + (" " + f.split(" ")[1] if f.startswith("real") else "")
             for f in found}
    assert {"ticker", "real date", "real price"} <= kinds, sorted(kinds)
    return found


def _check(texts: dict[str, str], real, blinding: Blinding) -> None:
    assert len(texts) > 20
    joined = "\n".join(texts.values())
    assert any(n in joined for n in blinding.names.values())  # the blind names were shown
    found = {where: got for where, text in texts.items()
             if (got := leaks(text, real, shown_as(blinding)))}
    assert found == {}, {k: v for k, v in list(found.items())[:5]}


@pytest.fixture(scope="module")
def synthetic_season(tmp_path_factory):
    root = tmp_path_factory.mktemp("blind-synthetic")
    with OpenAIStub(handler=blind_model) as stub:
        roster = {"version": 1, "contestants": [
            _spec("model", "llm", stub.url), _spec("researcher", "researcher", stub.url),
            _spec("debate", "debate", stub.url),
            {"name": "anti-model", "kind": "reverse", "mirror_of": "model"},
            {"name": "momentum", "kind": "house", "strategy": "momentum"},
            {"name": "random", "kind": "house", "strategy": "random"}]}
        path = root / "roster.yaml"
        path.write_text(yaml.safe_dump(roster))
        symbols = ["BTC", "ETH", "SOL", "DOGE", "LINK", "SPY", "AAPL", "V", "MA", "GOOGL"]
        lake = Lake(root / "lake")
        done = replay(lake, ReplayPlan(dt.date(2026, 10, 5), 2, str(path), symbols, seed=11,
                                       players=50, arena_players=50, blind=True,
                                       blind_seed=5), env=KEY)
        requests = [r.body for r in stub.requests]
    config = find_season(lake)
    return lake, config, done, requests


def test_a_blind_season_of_the_synthetic_market_shows_nothing_real(synthetic_season):
    lake, config, done, requests = synthetic_season
    universe, blinding = config.universe(), season_blinding(lake, config)
    markets = [build_market(lake, "synthetic", universe, at,
                            held=[a.symbol for a in universe.tradable]) for at in config.times]
    real = real_of(markets, config.first.date() - dt.timedelta(days=800), config.last.date())
    real = real.__class__(**{**real.__dict__, "raw_prices": real.raw_prices | {
        repr(float(p)) for p in _charted(lake, "synthetic", universe, config.times)}})
    _control(_open_prompt(lake, "synthetic", universe, config.first), real, universe)
    texts = season_texts(Ledger(lake), requests)
    tools = [t for where, t in texts.items() if where.startswith("researcher") and "rows" in t]
    assert tools, "the researcher's tools answered with candles"
    assert done.played.fills > 0  # the blind world traded
    _check(texts, real, blinding)


@pytest.fixture(scope="module")
def real_season(tmp_path_factory, universe):
    """Three blind cycles on recorded real bars: the files drop, ingested and played."""
    root = tmp_path_factory.mktemp("blind-real")
    drop = root / "drop" / "1d"
    drop.mkdir(parents=True)
    shutil.copy(FIXTURES / "GOOG.csv", drop / "GOOGL.csv")
    (drop / "SPY.csv").write_bytes(gzip.decompress((FIXTURES / "SP500_1d.csv.gz").read_bytes()))
    season = universe.select(["GOOGL", "SPY"])
    lake = Lake(root / "lake")
    run_ingest(make_provider("files", drop=root / "drop", drop_interval="1d"), season,
               start="2006-09-01", end="2008-09-18", lake=lake,
               now=pd.Timestamp("2026-01-01", tz="UTC"))
    times = [pd.Timestamp(f"2008-09-{d} 16:00", tz="UTC") for d in (15, 16, 17)]
    blinding = Blinding.draw(season, seed=2008)
    ledger = Ledger(lake)
    with OpenAIStub(handler=blind_model) as stub:
        specs = [ContestantSpec(name="model", kind="llm", model="openai/stub-model",
                                api_base=stub.url, params=Params(timeout=10, num_retries=0)),
                 ContestantSpec(name="researcher", kind="researcher", model="openai/stub-model",
                                api_base=stub.url, params=Params(timeout=10, num_retries=0)),
                 ContestantSpec(name="momentum", kind="house", strategy="momentum")]
        contestants = [build_contestant(s) for s in specs]
        for at in times:
            run_cycle(lake, "files", season, contestants, at, ledger=ledger, blinding=blinding)
        requests = [r.body for r in stub.requests]
    return lake, season, times, blinding, ledger, requests


def test_a_blind_season_of_recorded_real_prices_shows_nothing_real(real_season):
    lake, season, times, blinding, ledger, requests = real_season
    markets = [build_market(lake, "files", season, at) for at in times]
    real = real_of(markets, dt.date(2006, 9, 1), dt.date(2008, 9, 17))
    found = _control(_open_prompt(lake, "files", season, times[0]), real, season)
    assert {"ticker GOOGL", "ticker SPY", "real date '2008-09-15'"} <= set(found)
    assert len(requests) >= 6 and len(ledger.records()) == 9
    _check(season_texts(ledger, requests), real, blinding)


@pytest.mark.parametrize(("text", "found"), [
    ("ETH rallies", "ticker ETH"),
    ("on BTC/USDT", "vendor symbol BTC/USDT"),
    ("ethereum's upgrade", "company name Ethereum"),
    ("as of Sep 15, 2008", "real date 'Sep 15, 2008'"),
    ("closed 15.09.2008", "real date '15.09.2008'"),
    ("bar 20080915 closed", "real date '20080915'"),
    ("in September 2008", "real month 'September 2008'"),
    ("CRY01,crypto,undisclosed,Y,2013,+1.0,+2,+3,60,55,-4,1.2B,NA", "real price 2013 of ETH beside CRY01"),
    ("Executed: open long CRY01 1.2 at 2013.37 ($2,416.04, fee $2.42).",
     "real price 2013.37 of ETH beside CRY01"),
    ('{"symbol": "CRY01", "rows": [[1, 2013.3712]]}', "real raw price 2013.3712"),
])
def test_the_search_names_each_kind_of_leak(text, found):
    real = Real(frozenset({"ETH"}), frozenset({"BTC/USDT"}), frozenset({"Ethereum"}),
                frozenset({dt.date(2008, 9, 15)}), {"ETH": frozenset({"2013", "2013.37"})},
                frozenset({"2013.3712"}))
    assert leaks(text, real, {"CRY01": "ETH"}) == [found]
    assert leaks("CRY01,crypto,undisclosed,Y,8053,+1.0,+2,+3,60,55,-4,1.2B,NA at 2071-05-04",
                 real, {"CRY01": "ETH"}) == []
