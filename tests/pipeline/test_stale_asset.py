"""A season day whose ingest published some assets but not others plays on, with the failed
asset stale: left out of the screen, its trades rejected (``stale_price``), a held position in
it valued at its last price and flagged in the briefing and the daily report. A day on which no
asset published fails."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pandas as pd
import pytest

from arena.agents.base import Reply
from arena.agents.house import STRATEGIES, trading_table
from arena.core.sessions import daily_cycles
from arena.core.types import Briefing, Message
from arena.core.universe import Asset
from arena.data.errors import ProviderError
from arena.data.ingest import IngestError
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.market.briefing import build_market
from arena.pipeline.day import DayIngest, play_day
from arena.pipeline.season import replay_season
from tests.conftest import ts

SYMBOLS = ["BTC", "SPY", "ETH", "SOL", "ADA", "AAPL", "MSFT"]
MON, TUE = ts("2025-11-24 16:00"), ts("2025-11-25 16:00")
SINCE = "stale: last price 2025-11-24 16:00 UTC"  # SOL's last bar closed at Monday's cycle


class VendorDown(SyntheticProvider):
    """The synthetic market, except that the vendor fails for ``down`` symbols on any fetch
    reaching past ``after`` - what a recorded vendor outage looks like to the ingest."""

    def __init__(self, down: set[str], after: pd.Timestamp) -> None:
        super().__init__()
        self.down, self.after = down, after

    def fetch_bars(self, asset: Asset, interval: str, start: pd.Timestamp,
                   end: pd.Timestamp) -> pd.DataFrame:
        if asset.symbol in self.down and pd.Timestamp(end) > self.after:
            raise ProviderError("HTTP 503", provider=self.name, symbol=asset.symbol)
        return super().fetch_bars(asset, interval, start, end)


def _answer(*decisions: dict) -> str:
    return json.dumps({"reasoning": "scripted", "decisions": list(decisions)})


@dataclass
class ByCycle:
    """Answers from a script per cycle time; ``decide(briefing)`` builds the decisions. Keeps
    every briefing it was sent; a repair answer holds everything."""

    name: str
    script: dict
    kind: str = "test"
    briefings: list[Briefing] = field(default_factory=list)

    def answer(self, briefing: Briefing) -> Reply:
        self.briefings.append(briefing)
        decide = self.script.get(briefing.at)
        text = _answer(*(decide(briefing) if decide else ()))
        return Reply(text, transcript=(*briefing.messages, Message("assistant", text)))

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        text = _answer()
        return Reply(text, transcript=(*previous.transcript, Message("user", follow_up),
                                       Message("assistant", text)))


def _price(briefing: Briefing, symbol: str) -> float:
    return next(r["price"] for r in briefing.data["market"]["table"] if r["symbol"] == symbol)


def open_sol(briefing: Briefing) -> list[dict]:
    return [{"action": "open_long", "symbol": "SOL", "percent_of_equity": 20, "confidence": 0.9,
             "invalidation_price": round(_price(briefing, "SOL") * 0.5, 4), "thesis": "t",
             "invalidation": "i"}]


@pytest.fixture(scope="module", params=["daily", "season"])
def season(request, tmp_path_factory, universe):
    """Two days; SOL's vendor is down on the second, after the holder opened SOL on the first.
    Ingested day by day, or as a season (whose run cannot publish SOL, which reaches past the
    outage: SOL is then ingested day by day) - the same days either way."""
    lake = Lake(tmp_path_factory.mktemp("stale") / "lake")
    holder = ByCycle("holder", {MON: open_sol, TUE: lambda b: [{"action": "close",
                                                                 "symbol": "SOL"}]})
    opener = ByCycle("opener", {TUE: open_sol})
    sub = universe.select(SYMBOLS)
    report = replay_season(VendorDown({"SOL"}, after=MON), sub, [holder, opener],
                           daily_cycles(MON, 2), lake=lake, ingest=request.param)
    return lake, sub, report, holder, opener


def test_the_day_plays_on_and_records_what_did_not_publish(season):
    _, _, report, _, _ = season
    assert [d.at for d in report.days] == [MON, TUE]
    assert report.days[0].not_published == {}
    assert list(report.days[1].not_published) == ["SOL"]
    assert "HTTP 503" in report.days[1].not_published["SOL"]
    assert {o.status for o in report.days[1].outcomes} == {"no_trade"}


def test_the_market_marks_the_asset_stale_and_leaves_it_out_of_the_screen(season):
    lake, sub, _, _, _ = season
    fresh = build_market(lake, "synthetic", sub, MON)
    assert fresh.stale == {} and "SOL" in fresh.screen.crypto
    market = build_market(lake, "synthetic", sub, TUE, held=["SOL"])
    assert market.stale == {"SOL": MON.isoformat()}
    assert "SOL" not in market.screen.selected
    assert set(market.screen.crypto) == {"ETH", "ADA"}  # every other crypto asset is screened
    [line] = [s for s in market.screen.scores if s.symbol == "SOL"]
    assert (line.rank, line.score, line.selected) == (None, None, False)
    assert line.adv_usd is not None  # its bars are there, only stale
    # valued at its last price: Monday's
    assert market.prices["SOL"] == fresh.prices["SOL"]


def test_trades_in_the_stale_asset_are_rejected_with_stale_price(season):
    lake, _, _, _, _ = season
    ledger = Ledger(lake)
    rejected = ledger.table("rejections")
    tue = rejected[rejected["cycle_at"] == TUE]
    got = sorted(zip(tue["contestant"], tue["action"], tue["symbol"], tue["code"], strict=True))
    assert got == [("holder", "close", "SOL", "stale_price"),
                   ("opener", "open_long", "SOL", "stale_price")]
    assert [(f.at, f.symbol, f.kind) for f in ledger.fills("holder")] == [(MON, "SOL", "open")]
    assert ledger.fills("opener") == []


def test_a_held_stale_position_is_valued_at_its_last_price_and_flagged(season):
    lake, sub, report, holder, _ = season
    ledger = Ledger(lake)
    market = build_market(lake, "synthetic", sub, TUE, held=["SOL"])
    book = ledger.portfolio("holder", until=TUE)
    [row] = ledger.record_rows("equity", TUE, "holder")
    assert row["equity"] == pytest.approx(book.equity(market.prices), rel=0, abs=1e-9)

    briefing = holder.briefings[-1]
    assert briefing.at == TUE
    [position] = briefing.portfolio["positions"]
    assert position["symbol"] == "SOL" and position["stale_since"] == MON.isoformat()
    assert position["price"] == market.prices["SOL"]
    prompt = briefing.prompt_text
    assert f"SOL ({SINCE})" in prompt  # the header's list of stale prices
    assert re.search(rf"### SOL price [0-9.]+ \| {SINCE} \| rsi_4h", prompt)  # its candles
    assert f"  SOL {SINCE}: valued at it" in prompt  # the portfolio line
    assert SINCE not in holder.briefings[0].prompt_text  # Monday: nothing stale

    text = report.days[1].daily_report
    assert "## Stale prices" in text
    assert re.search(rf"\* SOL at [0-9.,]+ \({SINCE}\): held by holder \(long\)\n", text)
    assert re.search(rf"\* \*\*holder\*\* (leads|lags): .* SOL [-+][0-9.,]+ \({SINCE}\)", text)
    assert "## Stale prices" not in report.days[0].daily_report
    assert "Median move across 6 assets" in text  # SOL's price did not move: left out


def test_a_day_on_which_no_asset_published_fails(tmp_path, universe):
    sub = universe.select(["BTC", "SPY", "ETH"])
    with pytest.raises(IngestError, match="season day 2025-11-24") as caught:
        down = VendorDown({"BTC", "SPY", "ETH"}, after=MON - pd.Timedelta(days=400))
        lake = Lake(tmp_path / "lake")
        play_day(lake, down.name, sub, [], MON, ledger=Ledger(lake), ingest=[DayIngest(down, None)])
    assert caught.value.published == []
    assert set(caught.value.manifest["not_published"]) == {"BTC", "SPY", "ETH"}


def test_the_season_plays_without_an_asset_its_ingest_could_not_publish(tmp_path, universe):
    """The season's market in one run (the default): SOL's vendor is down over the whole window,
    so SOL has no bars (its daily retries fail too). The other assets publish and the season
    plays on: SOL is listed without a price, out of the screen, and an open in it is rejected
    (``no_price``). A replay where no asset publishes fails."""
    sub = universe.select(SYMBOLS)
    blind = {"action": "open_long", "symbol": "SOL", "percent_of_equity": 20, "confidence": 0.9,
             "invalidation_price": 1.0, "thesis": "t", "invalidation": "i"}
    opener = ByCycle("opener", {TUE: lambda b: [blind]})
    lake = Lake(tmp_path / "lake")
    down = VendorDown({"SOL"}, after=MON - pd.Timedelta(days=400))
    report = replay_season(down, sub, [opener], daily_cycles(MON, 2), lake=lake)
    assert list(report.ingest.not_published) == ["SOL"]
    assert "HTTP 503" in report.ingest.not_published["SOL"]
    assert sorted(report.ingest.published) == sorted(set(SYMBOLS) - {"SOL"})
    assert [d.at for d in report.days] == [MON, TUE]
    assert [list(d.not_published) for d in report.days] == [["SOL"], ["SOL"]]  # tried each day
    for briefing in opener.briefings:
        market = briefing.data["market"]
        assert next(r for r in market["table"] if r["symbol"] == "SOL")["price"] is None
        assert "SOL" not in market["screen"]["crypto"]
    rejected = Ledger(lake).table("rejections")
    assert rejected[["symbol", "code"]].values.tolist() == [["SOL", "no_price"]]
    with pytest.raises(IngestError, match="season 2025-11-24 to 2025-11-25"):
        replay_season(VendorDown(set(SYMBOLS), after=MON - pd.Timedelta(days=400)), sub,
                      [opener], daily_cycles(MON, 2), lake=Lake(tmp_path / "none"))


def test_house_rules_leave_a_stale_asset_alone():
    """The house rules read a stale row as not tradeable: momentum picks the best fresh asset
    and does not close a held stale one (the engine would refuse both)."""
    row = {"tradeable_today": True, "return_10d": -0.1, "rsi_14d": 50.0, "adv_usd": 1e9,
           "distance_from_30d_high": 0.0}
    market = {"table": [{**row, "symbol": "SOL", "price": 100.0, "return_30d": 0.5},
                        {**row, "symbol": "ETH", "price": 2000.0, "return_30d": 0.2}],
              "stale": {"SOL": MON.isoformat()}}
    book = {"cash": 10_000.0, "equity": 10_000.0, "new_positions_left": 1,
            "positions": [{"symbol": "SOL", "side": "long"}]}
    table = trading_table(market)
    assert [r["tradeable_today"] for r in table] == [False, True]
    decisions = STRATEGIES["momentum"](table, book)["decisions"]
    assert [(d["action"], d["symbol"]) for d in decisions] == [("open_long", "ETH")]
    fresh = STRATEGIES["momentum"](market["table"], book)["decisions"]
    assert ("close", "SOL") in [(d["action"], d["symbol"]) for d in fresh]  # were it fresh
