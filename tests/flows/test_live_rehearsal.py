"""A three-day live season, offline, through the real flows: crypto from Binance (ccxt), stocks
and SPY from Yahoo (yfinance), both served in their own formats by :mod:`tests.vendors`, with the
wall clock injected to those days. The operator's schedule is played hour by hour: the ingest
flow of each vendor before every cycle (on the last day one run that names no vendor: the
season's own, each in turn), the monitor flow every three hours (a live season ticks every
15 minutes), the cycle flow at 16:00 UTC. On the second day Yahoo blocks (its consent
wall, served with HTTP 200) and the files drop folder stands in for it; on the third Yahoo is
back, Binance throttles once (a retried fetch) and the season closes.
"""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest

from arena.core.universe import Universe
from arena.data.ingest import IngestError
from arena.data.lake import Lake, PartitionKey
from arena.ledger.store import Ledger
from arena.pipeline.live.closed import closed_at
from arena.pipeline.live.status import season_status
from arena.pipeline.season_config import default_providers, init_season, make_season
from tests.data.test_yahoo import Reply, fresh_yfinance  # noqa: F401 - yfinance state reset
from tests.vendors import FIXTURES, Market, binance_error, install

SYMBOLS = ("BTC", "ETH", "SPY", "AAPL")
START = pd.Timestamp("2026-03-02 16:00", tz="UTC")  # a Monday; cycles Mon, Tue, Wed
CYCLES = [START + pd.Timedelta(days=i) for i in range(3)]
TICK = "3h"  # the monitor's test schedule (a live season ticks every 15 minutes)
HISTORY = pd.Timedelta(days=230)  # the reference rules warm up on 220 days
ROSTER = ("contestants:\n"
          "  - {name: equal-weight, kind: house, strategy: equal_weight}\n"
          "  - {name: momentum, kind: house, strategy: momentum}\n")
CONSENT_WALL = Reply(200, (FIXTURES / "yahoo" / "consent_wall.html").read_bytes(),
                     "text/html; charset=utf-8")


def _iso(t: pd.Timestamp) -> str:
    return t.isoformat()


def _drop_folder(market: Market, root, symbols, start: pd.Timestamp, end: pd.Timestamp) -> None:
    """What a publisher on a network that reaches Yahoo pushes: Yahoo's hourly and 15-minute
    bars of the stocks (volumes in whole shares, as Yahoo serves them) as CSV files."""
    for interval in ("15m", "1h"):
        (root / interval).mkdir(parents=True, exist_ok=True)
        for symbol in symbols:
            bars = market.source.fetch_bars(market.universe[symbol], interval, start, end)
            bars["volume"] = bars["volume"].astype("int64")
            bars.to_csv(root / interval / f"{symbol}.csv", index=False)


def test_a_three_day_live_season_runs_through_the_flows(prefect_server, local_storage, tmp_path,
                                                        monkeypatch, universe: Universe) -> None:
    from arena.flows.cycle import cycle_flow
    from arena.flows.ingest import ingest_flow
    from arena.flows.monitor import monitor_flow

    season_universe = universe.select(list(SYMBOLS))
    market = Market(season_universe)
    binance, yahoo = install(monkeypatch, market)
    lake = Lake(tmp_path / "lake")
    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    season = make_season(START.date(), 3, SYMBOLS,
                         providers=default_providers(crypto="ccxt", stocks="yfinance"))
    init_season(lake, season, roster=roster)

    def ingest(now: pd.Timestamp, source: str, **kw) -> dict:
        return ingest_flow(source=source, start=_iso(now - HISTORY), end=_iso(now),
                           lake_root=str(lake.root), now=_iso(now), **kw)

    manifests: dict[str, dict] = {}
    monitor_ends = []
    for hour in pd.date_range(CYCLES[0], CYCLES[-1], freq=TICK):
        if hour in CYCLES:
            day = CYCLES.index(hour)
            if day == 2:  # a run naming no vendor takes the season's own, each in turn
                both = ingest(hour, None)["runs"]
                assert [m["provider"] for m in both] == ["ccxt", "yfinance"]
                manifests["ccxt-2"], manifests["yfinance-2"] = both
            else:
                manifests[f"ccxt-{day}"] = ingest(hour, "ccxt")
            if day == 1:  # Yahoo blocks: the run fails, the stocks keep their bars
                yahoo.down = CONSENT_WALL
                with pytest.raises(IngestError, match="AAPL"):
                    ingest(hour, "yfinance")
                drop = tmp_path / "drop"
                _drop_folder(market, drop, ("SPY", "AAPL"), hour - pd.Timedelta(days=3), hour)
                manifests["files-1"] = ingest(hour, "files", drop=str(drop), drop_interval="15m",
                                              instead_of="yfinance")
                yahoo.down = None
            elif day == 0:
                manifests[f"yfinance-{day}"] = ingest(hour, "yfinance")
            if day == 2:  # Binance throttles once: the fetch task is retried, nothing is lost
                binance.faults = [binance_error(429, -1003, "Too many requests; current limit "
                                                "is 6000 request weight per 1 MINUTE.",
                                                **{"Retry-After": "1"})]
                before = len(binance.requests_to("klines"))
                manifests["ccxt-2-throttled"] = ingest(hour + pd.Timedelta(minutes=1), "ccxt")
                assert len(binance.requests_to("klines")) - before >= 3  # 429, then both assets
                assert set(manifests["ccxt-2-throttled"]["published"]) == {"BTC", "ETH"}
            rows = cycle_flow(lake_root=str(lake.root), now=_iso(hour + pd.Timedelta(minutes=5)),
                              publish=day == 2)
            assert {r["contestant"]: r["recorded"] for r in rows} == {
                "equal-weight": "recorded", "momentum": "recorded"}, rows
        else:
            out = monitor_flow(lake_root=str(lake.root), now=_iso(hour))
            monitor_ends.append(out["end"])

    ledger = Ledger(lake)
    # every cycle recorded once per contestant, in order
    assert sorted((k.cycle_at, k.contestant) for k in ledger.records()) == sorted(
        (c, n) for c in CYCLES for n in ("equal-weight", "momentum"))
    # the monitor's recorded windows never overlap, each starts where its contestant's book last
    # changed (a cycle or the window before it) and each closed something
    for name in ("equal-weight", "momentum"):
        windows = sorted((k.start, k.end) for k in ledger.monitor_records(name))
        marks = set(CYCLES) | {e for _, e in windows}
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(windows))
        assert all(s in marks for s, _ in windows)
    assert (ledger.table("outcome", monitor=True)["n_fills"] > 0).all()
    assert monitor_ends[-1] == _iso(CYCLES[-1] - pd.Timedelta(TICK))

    # the stocks a contestant held, and only those, got Yahoo's 15-minute bars (a watch run:
    # nothing derived from them)
    traded = {f.symbol for n in ("equal-weight", "momentum") for f in ledger.fills(n)}
    watched = {s for v, s, i in market.calls if v == "yahoo" and i == "15m"}
    assert watched and watched <= traded & {"SPY", "AAPL"}, (watched, traded)
    for symbol in watched:
        bars = lake.read_bars(PartitionKey("yfinance", "15m", symbol))
        assert bars["timestamp"].iloc[-1] == CYCLES[-1] - pd.Timedelta(minutes=15)
    assert manifests["yfinance-0"]["asked"]["intervals"] == ["1h", "4h", "1d", "1w"]
    watch_runs = [json.loads(p.read_text()) for p in (lake.root / "manifests" / "ingest").glob(
        "*yfinance*.json")]
    assert any(m["asked"]["watch"] and m["asked"]["intervals"] == ["15m"] for m in watch_runs)

    # Yahoo's day: the drop folder filled Yahoo's partitions; Yahoo back, nothing was restated
    assert manifests["files-1"]["stand_in"] == "files"
    assert manifests["files-1"]["provider"] == "yfinance"
    assert set(manifests["files-1"]["published"]) == {"SPY", "AAPL"}
    assert manifests["yfinance-2"]["restated"] == {}
    # no bar closing after the clock of its run was ever stored (no lookahead)
    for symbol in SYMBOLS:
        provider = "ccxt" if universe[symbol].is_crypto else "yfinance"
        bars = lake.read_bars(PartitionKey(provider, "1h", symbol))
        assert bars["timestamp"].iloc[-1] < CYCLES[-1]

    # after the last cycle the season is closed, published and its status says so
    assert closed_at(lake) is not None
    assert (lake.root / "reports" / "season.html").is_file()
    status = season_status(lake, season, ["equal-weight", "momentum"],
                           CYCLES[-1] + pd.Timedelta(hours=1)).to_json()
    assert [c["state"] for c in status["cycles"]] == ["done"] * 3
    # the schedules keep firing after the close: the runs complete with nothing to do (no
    # failed run, so no alert every 15 minutes), and nothing is recorded
    records = len(ledger.records()), len(ledger.monitor_records())
    after = _iso(CYCLES[-1] + pd.Timedelta(days=1, minutes=10))
    manifests = len(lake.manifests())
    assert monitor_flow(lake_root=str(lake.root), now=after)["end"] is None
    assert len(lake.manifests()) == manifests  # a closed season's tick ingests nothing either
    assert cycle_flow(lake_root=str(lake.root), now=after, publish=False) == []
    assert (len(ledger.records()), len(ledger.monitor_records())) == records
