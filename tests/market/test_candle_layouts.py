"""The prompt's candle layouts, read back against the lake: every candle row of an ``ohlcv``
prompt is the lake's bar (prices at the asset's decimals, volume in the named unit), every close
line of a ``close`` prompt the lake's closes; the layouts' token counts; the season's setting."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from arena.core.sessions import bar_close_times
from arena.data.lake import PartitionKey
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.market.prompts import prompt_tokens
from arena.market.screener import screen
from arena.market.sections import (
    CANDLE_INTERVALS,
    CLOSE,
    OHLCV,
    VOLUME_UNITS,
    asset_block,
    fmt_price,
    price_decimals,
    volume_unit,
)
from arena.market.types import DEPTH
from arena.pipeline.season_config import SeasonConfig, SeasonConfigError, make_season
from tests.market_lakes import FRI, PROVIDER, book_state, market_lakes

UNITS = {word: size for size, word in VOLUME_UNITS}
SERIES = re.compile(r"^(1w|1d|4h) from (\d{4}-\d\d-\d\d), open,high,low,close,volume "
                    r"\(volume in (\w+)\):$")
CLOSES = re.compile(r"^(1w|1d|4h) from (\d{4}-\d\d-\d\d) \(high ([\d.]+), low ([\d.]+)\): (.*)$")


@pytest.fixture(scope="module")
def lakes(tmp_path_factory, universe):
    return market_lakes(tmp_path_factory, universe)


@pytest.fixture(scope="module")
def case(lakes, universe):
    """Friday: 10 screened assets, three held ones the screen did not pick, two benchmarks."""
    picked = screen(lakes.full, PROVIDER, universe, FRI).selected
    held = tuple([a.symbol for a in universe.tradable if a.symbol not in picked][::20][:3])
    market = build_market(lakes.full, PROVIDER, universe, FRI, held=held)
    snapshot = portfolio_snapshot(book_state(market.prices, held, FRI), market.prices)
    return market, snapshot


def lake_bars(lake, universe, symbol: str, interval: str) -> pd.DataFrame:
    """The bars of ``interval`` a prompt at FRI shows for ``symbol``: the last ones closed by
    then, read straight from the lake."""
    bars = lake.read_bars(PartitionKey(PROVIDER, interval, symbol))
    closes = bar_close_times(universe[symbol].calendar, interval, bars["timestamp"])
    return bars[np.asarray(closes <= FRI)].iloc[-DEPTH[interval]:].reset_index(drop=True)


def blocks(prompt: str) -> dict[str, list[str]]:
    """Each asset's block of the prompt (from its ``### SYMBOL price`` line), as lines."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in prompt.splitlines():
        head = re.match(r"^### (\S+) price ", line)
        if head:
            current = out.setdefault(head.group(1), [])
        elif current is not None and (not line or line.startswith("#")):
            current = None
        elif current is not None:
            current.append(line)
    return out


def test_every_ohlcv_row_of_the_prompt_is_the_lakes_bar(case, lakes, universe):
    market, snapshot = case
    prompt = build_briefing(market, "tester", snapshot, candles=OHLCV).prompt_text
    shown = blocks(prompt)
    assets = [*market.for_holdings(list(market.held)).assets, *market.benchmarks]
    assert set(shown) == {d.symbol for d in assets} and len(shown) == 15
    rows_read = 0
    for detail in assets:
        lines = shown[detail.symbol]
        dec = price_decimals(detail.price)
        for interval in CANDLE_INTERVALS:
            bars = lake_bars(lakes.full, universe, detail.symbol, interval)
            assert len(bars) == DEPTH[interval]
            at = next(i for i, x in enumerate(lines) if x.startswith(f"{interval} from "))
            head = SERIES.match(lines[at])
            assert head, lines[at]
            assert head.group(2) == f"{bars['timestamp'].iloc[0]:%Y-%m-%d}"
            unit = UNITS[head.group(3)]
            assert (unit, head.group(3)) == volume_unit(bars["volume"].tolist())
            rows = lines[at + 1:at + 1 + len(bars)]
            for row, bar in zip(rows, bars.itertuples(index=False), strict=True):
                o, h, lo, c, v = row.split(",")
                assert [o, h, lo, c] == [fmt_price(x, dec) for x in
                                         (bar.open, bar.high, bar.low, bar.close)], row
                assert int(v) == round(bar.volume / unit), row
                # the shown prices are the bar's within half a unit of the last decimal
                assert abs(float(c) - bar.close) <= 0.5 * 10 ** -dec + 1e-9 * bar.close
                rows_read += 1
            following = lines[at + 1 + len(bars)] if at + 1 + len(bars) < len(lines) else ""
            assert not re.match(r"^[\d.]+,", following)  # exactly DEPTH rows
    assert rows_read == 15 * sum(DEPTH.values())


def test_every_close_line_of_the_prompt_is_the_lakes_closes(case, lakes, universe):
    market, snapshot = case
    prompt = build_briefing(market, "tester", snapshot, candles=CLOSE).prompt_text
    shown = blocks(prompt)
    for detail in [*market.for_holdings(list(market.held)).assets, *market.benchmarks]:
        dec = price_decimals(detail.price)
        for interval in CANDLE_INTERVALS:
            bars = lake_bars(lakes.full, universe, detail.symbol, interval)
            line = next(x for x in shown[detail.symbol] if x.startswith(f"{interval} from "))
            m = CLOSES.match(line)
            assert m, line
            assert m.group(3) == fmt_price(bars["high"].max(), dec)
            assert m.group(4) == fmt_price(bars["low"].min(), dec)
            assert m.group(5).split(",") == [fmt_price(x, dec) for x in bars["close"]]


def test_the_layouts_token_counts(case):
    """The investor prompt of 10 screened, 3 held and 2 benchmark assets (cl100k_base): full
    candles cost about ten tokens a value more than closes; closes keep the prompt near 11k."""
    market, snapshot = case
    tokens = {layout: prompt_tokens(build_briefing(market, "tester", snapshot,
                                                   candles=layout).messages)
              for layout in (OHLCV, CLOSE)}
    print(f"\ninvestor prompt, 10 screened + 3 held + 2 benchmarks (cl100k_base): {tokens}")
    assert 10_500 <= tokens[CLOSE] <= 12_000
    assert 26_000 <= tokens[OHLCV] <= 30_000


def test_the_ohlcv_volume_unit_keeps_two_digits_of_the_median():
    assert volume_unit([9.0, 12.0, 30.0]) == (1.0, "units")
    assert volume_unit([9_999.0, 10_000.0, 10_001.0]) == (1e3, "thousands")
    assert volume_unit([9_999.0, 9_999.0, 1e9]) == (1.0, "units")  # the median decides
    assert volume_unit([15.1e6] * 3) == (1e6, "millions")
    assert volume_unit([9.5e6] * 3) == (1e3, "thousands")
    assert volume_unit([2e13] * 3) == (1e12, "trillions")
    assert volume_unit([]) == (1.0, "units")


def test_a_layout_per_interval_and_an_unknown_layout(case):
    market, _ = case
    eth = market.detail("ETH")
    mixed = asset_block(eth, {"1w": OHLCV, "1d": CLOSE, "4h": CLOSE}).splitlines()
    assert sum(bool(SERIES.match(x)) for x in mixed) == 1
    assert sum(bool(CLOSES.match(x)) for x in mixed) == 2
    with pytest.raises(ValueError, match=r"unknown candle layout 'candles'.*ohlcv, close"):
        asset_block(eth, "candles")


def test_a_season_records_its_candle_layout():
    season = make_season("2026-10-01", 5, ["BTC"])
    assert season.candles == OHLCV  # a new season shows full candles
    assert make_season("2026-10-01", 5, ["BTC"], candles=CLOSE).candles == CLOSE
    stored = season.to_json()
    assert stored["candles"] == OHLCV
    assert SeasonConfig.from_json(stored).candles == OHLCV
    # a season stored before the setting existed played with closes: it keeps them
    older = {k: v for k, v in stored.items() if k != "candles"}
    assert SeasonConfig.from_json(older).candles == CLOSE
    with pytest.raises(SeasonConfigError, match="candles must be one of ohlcv, close, not 'raw'"):
        make_season("2026-10-01", 5, ["BTC"], candles="raw")


@pytest.mark.parametrize("layout", [OHLCV, CLOSE])
def test_a_live_cycle_shows_the_candles_in_its_seasons_layout(tmp_path_factory, tmp_path,
                                                              universe, layout):
    """``arena cycle`` in a season of each layout: the prompt the ledger keeps shows every
    screened asset's candles that way (and never the other)."""
    from arena.cli import main
    from arena.ledger.store import Ledger
    from tests.conftest import ts
    from tests.market_lakes import season_lake

    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                       "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n",
                       candles=layout)
    at = ts("2025-11-26 16:00")
    assert main(["cycle", "--at", at.isoformat(), "--no-publish", "--lake", str(lake.root)]) == 0
    prompt = "\n".join(m.content for m in Ledger(lake).messages("momentum", at)
                       if m.role == "user")
    rows = sum(bool(SERIES.match(x)) for x in prompt.splitlines())
    lines = sum(bool(CLOSES.match(x)) for x in prompt.splitlines())
    assert (rows, lines) == ((36, 0) if layout == OHLCV else (0, 36))  # 12 assets x 3 series


def test_a_live_cycle_tells_the_contestants_their_seasons_fee(tmp_path_factory, tmp_path,
                                                              universe):
    """The prompt's rules are the season's: a season charging 0.3% a fill says so (the
    engine charges it), not the arena's default 0.1%."""
    import shutil

    from arena.cli import main
    from arena.data.lake import Lake
    from arena.ledger.store import Ledger
    from arena.pipeline.season_config import init_season
    from tests.conftest import ts

    lake = Lake(tmp_path / "lake")
    shutil.copytree(market_lakes(tmp_path_factory, universe).full.root, lake.root)
    roster = tmp_path / "roster.yaml"
    roster.write_text("contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n",
                      encoding="utf-8")
    init_season(lake, make_season("2025-11-26", 1, universe.symbols, fee_rate=0.003),
                roster=roster)
    at = ts("2025-11-26 16:00")
    assert main(["cycle", "--at", at.isoformat(), "--no-publish", "--lake", str(lake.root)]) == 0
    prompt = "\n".join(m.content for m in Ledger(lake).messages("momentum", at)
                       if m.role == "user")
    assert "A fee of 0.3% of notional is charged on every fill" in prompt
    assert "A fee of 0.1%" not in prompt
