"""Whom the signal store believes: forged requests over a real WebSocket (bar times after the
server's clock, bars of another terminal, a bar that disagrees with a stored one), and the
store's clock rule on its own. Regression tests of issue 27, item 8: one forged request from
another connection fixed all three horizons of a debate at +99%, for good."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from websockets.sync.client import connect

from arena.doors.signal_server import SignalServer, terminal_of
from arena.doors.signal_store import HORIZONS, LAKE, BarConflict, SignalStore
from tests.doors.test_signal_server import Running, ask

CLOSES = 100 * 1.01 ** np.arange(55)  # daily bars from 2026-11-02: the true feed
DAYS = pd.date_range("2026-11-02", periods=55, freq="1D", tz="UTC")  # the last on 2026-12-26
ALICE = {"additional_headers": {"Authorization": "Bearer alice-terminal"}}
MALLORY = {"additional_headers": {"Authorization": "Bearer mallory-terminal"}}


class Clock:
    def __init__(self, at: str) -> None:
        self.at = pd.Timestamp(at, tz="UTC")

    def __call__(self) -> pd.Timestamp:
        return self.at


def series(closes: np.ndarray, days: pd.DatetimeIndex = DAYS) -> str:
    return json.dumps({"time": [t.isoformat() for t in days[:len(closes)]],
                       "close": [float(c) for c in closes]})


def forged(closes: np.ndarray) -> np.ndarray:
    """The true closes up to the debate's last bar (the 30th), then doubled: +99% or more."""
    out = closes.copy()
    out[30:] = 2 * closes[29] * 1.0001 ** np.arange(len(closes) - 30)
    return out


def returns(store: SignalStore) -> dict[int, float]:
    return store.outcomes().set_index("horizon_bars")["return"].to_dict()


def test_another_terminal_or_bars_after_the_clock_bring_no_outcome(tmp_path):
    """Alice debates on 30 bars (the last, 2026-12-01, still forming at noon). A request with
    bar times after the server's clock is refused whole; once those bars closed, another
    connection's (Mallory's, or one without a token) series attaches nothing; Alice's own
    later request, from a new connection with her token, attaches the true returns."""
    store = SignalStore(tmp_path / "store")
    clock = Clock("2026-12-01 12:00")
    with Running(SignalServer(store, clock=clock)) as url:
        [debate] = ask(url, f"DEBATE:EURUSD:{series(CLOSES[:30])}", **ALICE)
        assert debate["signal"] == "buy"
        [future] = ask(url, f"PRICES:EURUSD:{series(forged(CLOSES))}", **ALICE)
        assert "2026-12-26T00:00:00+00:00 is after the server's clock" in future["error"]
        [future] = ask(url, f"PRICES:EURUSD:{series(forged(CLOSES))}", **MALLORY)
        assert "after the server's clock" in future["error"]
        assert store.outcomes().empty and len(store.debates()) == 1  # nothing kept of them
        clock.at = pd.Timestamp("2026-12-27 12:00", tz="UTC")  # every bar has closed now
        mallory, anonymous = (ask(url, f"PRICES:EURUSD:{series(forged(CLOSES))}", **MALLORY)[0],
                              ask(url, f"PRICES:EURUSD:{series(forged(CLOSES))}")[0])
        assert mallory["signal"] and anonymous["signal"]  # they get their answers, no more
        assert store.outcomes().empty
        [_] = ask(url, f"PRICES:EURUSD:{series(CLOSES)}", **ALICE)
    got = returns(store)
    assert sorted(got) == list(HORIZONS)
    for h in HORIZONS:
        assert got[h] == pytest.approx(1.01 ** h - 1)  # not +99%
    assert set(store.outcomes()["source"]) == {terminal_of("alice-terminal")}
    terminals = set(store.debates()["terminal"])  # alice twice, mallory, one without a token
    alice, mallory = terminal_of("alice-terminal"), terminal_of("mallory-terminal")
    assert len(store.debates()) == 4 and {alice, mallory} < terminals
    [anonymous] = terminals - {alice, mallory}
    assert anonymous.startswith("conn-") and alice.startswith("key-")  # a digest, not the token


def test_a_bar_that_disagrees_with_a_stored_one_is_refused_not_taken(tmp_path):
    """Alice's debate of 2026-12-02 rests on the closed bar of 2026-12-01, and her first
    outcome on the bar of 2026-12-02. A later series of hers with another close at either
    time is refused whole - no outcome, no debate kept - also after the store is reopened;
    the true series then attaches the rest."""
    store = SignalStore(tmp_path / "store")
    clock = Clock("2026-12-02 12:00")  # the 30th bar (2026-12-01) has closed
    with Running(SignalServer(store, clock=clock)) as url:
        ask(url, f"DEBATE:EURUSD:{series(CLOSES[:30])}", **ALICE)
        base = CLOSES[:31].copy()
        base[29] *= 1.5
        [refused] = ask(url, f"DEBATE:EURUSD:{series(base[:31])}", **ALICE)
        assert refused["error"].startswith(
            "EURUSD: the bar at 2026-12-01T00:00:00+00:00 closes at 200.176 in this series "
            "but at 133.45 in the signal store") and "nothing was attached" in refused["error"]
        clock.at = pd.Timestamp("2026-12-03 12:00", tz="UTC")
        [_] = ask(url, f"PRICES:EURUSD:{series(CLOSES[:32])}", **ALICE)  # h1 on 2026-12-02
        assert returns(store) == {1: pytest.approx(0.01)}
    assert len(store.debates()) == 2  # the debate and the PRICES; the refused one is not kept
    reopened = SignalStore(tmp_path / "store")  # the kept bars come back from the files
    clock.at = pd.Timestamp("2026-12-27 12:00", tz="UTC")
    with Running(SignalServer(reopened, clock=clock)) as url:
        restated = CLOSES.copy()
        restated[30] = 500.0  # the bar the first outcome ended on
        [refused] = ask(url, f"PRICES:EURUSD:{series(restated)}", **ALICE)
        assert "the bar at 2026-12-02T00:00:00+00:00 closes at 500" in refused["error"]
        assert len(reopened.outcomes()) == 1
        [_] = ask(url, f"PRICES:EURUSD:{series(CLOSES)}", **ALICE)
    got = returns(reopened)
    assert sorted(got) == list(HORIZONS) and got[20] == pytest.approx(1.01 ** 20 - 1)
    # another terminal's feed may differ: its bars are its own, never a conflict of Alice's
    with Running(SignalServer(reopened, clock=clock)) as url:
        [other] = ask(url, f"PRICES:EURUSD:{series(restated)}", **MALLORY)
    assert other["signal"]


def test_only_bars_closed_by_the_clock_count(tmp_path):
    """The store on its own: a series whose bars run to the present attaches only the
    horizons whose bars closed by ``now``; a lake the same."""
    from arena.data.lake import Lake, PartitionKey, write_bars_file
    from arena.doors.signal_store import attach_from_lake

    store = SignalStore(tmp_path / "store")
    debate = {"received_at": DAYS[29] + pd.Timedelta(hours=1), "command": "DEBATE",
              "symbol": "EURUSD", "bars": 30, "last_bar_at": DAYS[29],
              "last_close": float(CLOSES[29]), "bar_seconds": 86400.0, "terminal": "key-a"}
    store.add_debate(debate)
    times = DAYS.as_unit("us")
    # the 36th bar (index 35, five past the debate's) opened at DAYS[34] + 1 day: at noon of
    # its day only the bars up to index 34 have closed - h1 yes, h5 (index 34) yes, h20 no
    at = DAYS[35] + pd.Timedelta(hours=12)
    assert store.attach_outcomes("EURUSD", times, CLOSES, at, terminal="key-b") == 0
    assert store.attach_outcomes("EURUSD", times, CLOSES, at, terminal="key-a") == 2
    assert sorted(returns(store)) == [1, 5]
    with pytest.raises(BarConflict, match="the bar at 2026-12-02"):
        store.attach_outcomes("EURUSD", times, CLOSES * 1.1, DAYS[-1], terminal="key-a")

    lake = Lake(tmp_path / "lake")
    frame = pd.DataFrame({"timestamp": times, "open": CLOSES, "high": CLOSES, "low": CLOSES,
                          "close": CLOSES, "volume": 1.0})
    key = PartitionKey("synthetic", "1d", "EURUSD")
    lake.path(key).parent.mkdir(parents=True, exist_ok=True)
    write_bars_file(frame, lake.path(key))
    assert attach_from_lake(store, lake, DAYS[48]) == 0  # the 20th bar after (index 49) is open
    assert attach_from_lake(store, lake, DAYS[50]) == 1
    outcomes = store.outcomes().set_index("horizon_bars")
    assert outcomes.loc[20, "source"] == LAKE and outcomes.loc[1, "source"] == "key-a"
    assert outcomes.loc[20, "return"] == pytest.approx(1.01 ** 20 - 1)


def test_terminals_with_tokens_of_their_own_stay_apart_beyond_loopback(tmp_path):
    """A server that requires tokens takes one per terminal: Mallory, holding a token of her
    own, cannot write outcomes onto Alice's debates; a token the server does not know is
    refused; Alice's own later series attaches them."""
    store = SignalStore(tmp_path / "store")
    clock = Clock("2026-12-01 12:00")
    with Running(SignalServer(store, clock=clock), token="alice-terminal,mallory-terminal") as url:
        [debate] = ask(url, f"DEBATE:EURUSD:{series(CLOSES[:30])}", **ALICE)
        assert debate["signal"] == "buy"
        with connect(url, open_timeout=20, additional_headers={
                "Authorization": "Bearer someone-else"}) as ws:
            assert "a token is required" in json.loads(ws.recv(timeout=20))["error"]
        clock.at = pd.Timestamp("2026-12-27 12:00", tz="UTC")
        [_] = ask(url, f"PRICES:EURUSD:{series(forged(CLOSES))}", **MALLORY)
        assert store.outcomes().empty
        [_] = ask(url, f"PRICES:EURUSD:{series(CLOSES)}", **ALICE)
    assert returns(store)[1] == pytest.approx(0.01)
