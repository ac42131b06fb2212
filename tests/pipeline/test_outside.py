"""Outside entrants without the transport: keys, rules, candles up to the present, decisions
dry-run at once and executed at the cycle, the single-asset track, the score."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from arena.core.sessions import interval_delta
from arena.data.lake import PartitionKey
from arena.ledger.store import Ledger
from arena.pipeline.entrants import (
    EntrantError,
    add_entrant,
    authenticate,
    entrants,
    revoke_entrant,
)
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.outside import (
    Arena,
    OutsideError,
    candles,
    entrant_score,
    rules,
    submit_decision,
    submit_positions,
    track_series,
)
from arena.pipeline.season_config import load_season, season_contestants
from arena.pipeline.season_tables.tracks import entrant_track
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
MON, TUE, WED = ts("2025-11-24 16:00"), ts("2025-11-25 16:00"), ts("2025-11-26 16:00")


def answer(*decisions: dict) -> str:
    return json.dumps({"reasoning": "outside view", "decisions": list(decisions)})


def open_eth(percent: float = 20, confidence: float = 0.9) -> dict:
    return {"action": "open_long", "symbol": "ETH", "percent_of_equity": percent,
            "confidence": confidence, "invalidation_price": 1.0, "thesis": "outside thesis",
            "invalidation": "a collapse"}


@pytest.fixture
def arena(tmp_path_factory, tmp_path, universe) -> Arena:
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)
    return Arena(lake, load_season(lake))


def _cycle(arena: Arena, at: pd.Timestamp) -> None:
    contestants, _ = season_contestants(arena.lake, {}, at=at)
    play_season_cycle(arena.lake, arena.season, contestants, at, now=at + pd.Timedelta(minutes=5))


def test_keys_are_shown_once_stored_hashed_and_revocable(arena):
    one, key = add_entrant(arena.lake, arena.season, "outside-one", MON)
    _, key2 = add_entrant(arena.lake, arena.season, "outside-two", MON)
    stored = (arena.lake.root / "season" / "entrants.json").read_text()
    assert key not in stored and key2 not in stored and one.key_sha256 in stored
    assert authenticate(arena.lake, key).name == "outside-one"
    assert authenticate(arena.lake, key2).name == "outside-two"
    assert authenticate(arena.lake, key + "x") is None and authenticate(arena.lake, "") is None
    for taken in ("outside-one", "momentum"):  # an entrant's or a roster contestant's name
        with pytest.raises(EntrantError, match="already uses the name"):
            add_entrant(arena.lake, arena.season, taken, MON)
    with pytest.raises(EntrantError, match="kebab-case"):
        add_entrant(arena.lake, arena.season, "Bad Name", MON)
    revoke_entrant(arena.lake, "outside-one", TUE)
    assert authenticate(arena.lake, key) is None and authenticate(arena.lake, key2) is not None
    assert [e.active for e in entrants(arena.lake)] == [False, True]


def test_the_rules_name_the_assets_contract_and_reason_codes(arena):
    got = rules(arena, MON - pd.Timedelta(hours=3))
    assert {a["symbol"] for a in got["assets"]} == set(arena.season.symbols)
    assert got["next_cycle"] == MON.isoformat() and got["cycle_time_utc"] == "16:00"
    assert "decisions" in got["contract"] and "no_cash" in got["reason_codes"]
    assert got["fee_rate"] == arena.season.fee_rate


def test_candles_stop_at_the_present_and_refuse_what_the_lake_lacks(arena):
    now = ts("2025-11-25 10:37")
    got = candles(arena, "ETH", "1h", now, limit=5)
    times = [pd.Timestamp(b["open_time"]) for b in got["bars"]]
    assert len(times) == 5 and times[-1] == ts("2025-11-25 09:00")  # closed by 10:00
    assert all(t + interval_delta("1h") <= now for t in times)
    day = candles(arena, "AAPL", "1d", now, limit=3)["bars"]
    assert pd.Timestamp(day[-1]["open_time"]) < ts("2025-11-25")  # today's bar is not closed
    with pytest.raises(OutsideError, match="unknown interval '2h'"):
        candles(arena, "ETH", "2h", now)
    with pytest.raises(OutsideError, match="not an asset of season"):
        candles(arena, "DOGE-X", "1h", now)
    arena.lake.path(PartitionKey("synthetic", "4h", "ETH")).unlink()
    with pytest.raises(OutsideError, match="holds no 4h bars of ETH"):
        candles(arena, "ETH", "4h", now)
    with pytest.raises(OutsideError, match="limit must be between 1 and 1000"):
        candles(arena, "ETH", "1h", now, limit=5000)


def test_a_decision_is_dry_run_at_once_and_the_last_before_the_cycle_executes(arena):
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", MON - pd.Timedelta(days=1))
    bad = submit_decision(arena, entrant, answer(open_eth(confidence=0.5)),
                          MON - pd.Timedelta(hours=3))
    assert bad["cycle_at"] == MON.isoformat() and bad["joined_from"] == MON.isoformat()
    assert [r["code"] for r in bad["dry_run"]["rejections"]] == ["low_confidence"]
    good = submit_decision(arena, entrant, answer(open_eth()), MON - pd.Timedelta(hours=2))
    assert good["dry_run"]["rejections"] == [] and good["joined_from"] is None
    assert [f["symbol"] for f in good["dry_run"]["fills"]] == ["ETH"]
    late = submit_decision(arena, entrant, answer(), MON + pd.Timedelta(minutes=1))
    assert late["cycle_at"] == TUE.isoformat()  # after the deadline: the next cycle's
    _cycle(arena, MON)
    ledger = Ledger(arena.lake)
    fills = [(f.symbol, f.kind) for f in ledger.fills("outside-one")]
    assert fills == [("ETH", "open")]  # the last submission before the cycle, not the first
    assert ledger.record_rows("outcome", MON, "outside-one")[0]["status"] == "traded"
    _cycle(arena, TUE)  # its (empty) submission for Tuesday: a hold
    _cycle(arena, WED)  # nothing submitted for Wednesday: a hold too
    assert ledger.record_rows("outcome", WED, "outside-one")[0]["status"] == "no_trade"
    score = entrant_score(arena, entrant, WED + pd.Timedelta(hours=1))
    assert score["arena"]["cycles"] == 3
    # placed among the contestants: the house rule momentum plays beside it as a ruler
    assert (score["arena"]["place"], score["arena"]["of"], score["arena"]["rulers"]) == (1, 1, 1)
    assert score["arena"]["skill"].startswith("not published yet")  # nothing published
    assert score["eligibility"]["cycles_since_joining"] == 3
    assert score["eligibility"]["valid_submissions"] == 2  # Wednesday had none
    assert not score["eligibility"]["eligible"]  # 2/3 < 70%


def test_a_submission_after_the_last_cycle_is_refused(arena):
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", MON)
    with pytest.raises(OutsideError, match="it is over"):
        submit_decision(arena, entrant, answer(), WED + pd.Timedelta(minutes=1))
    for bad in ("", "x" * 40_000):
        with pytest.raises(OutsideError):
            submit_decision(arena, entrant, bad, MON - pd.Timedelta(hours=1))


def test_the_single_asset_track_holds_positions_from_the_next_close(arena):
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", MON)
    kept = submit_positions(arena, entrant, {"ETH": 2.0, "BTC": -0.5}, ts("2025-11-24 10:30"))
    assert kept["positions"] == {"ETH": 1.0, "BTC": -0.5}
    assert kept["clipped"] == {"ETH": {"asked": 2.0, "kept": 1.0}}
    submit_positions(arena, entrant, {"ETH": 0.0}, ts("2025-11-25 10:30"))
    with pytest.raises(OutsideError, match="not an asset"):
        submit_positions(arena, entrant, {"NOPE": 1.0}, MON)
    got = entrant_score(arena, entrant, ts("2025-11-26 12:00"))
    tracks = {t["symbol"]: t for t in got["single_asset"]}
    assert set(tracks) == {"BTC", "ETH"}
    eth = tracks["ETH"]
    assert eth["grid"] == "1h" and eth["zero_skill_players"] == 20_000
    # the window: the season from its first cycle to the latest one (Tuesday's), 24 bars
    assert (eth["from"], eth["to"], eth["bars"]) == (MON.isoformat(), TUE.isoformat(), 24)
    assert 0.0 <= eth["luck_percentile"] <= 1.0 and eth["turnover"] == pytest.approx(2.0)


def test_two_positions_stamped_alike_are_both_kept_in_the_order_received(arena):
    """One call per asset (the contest documents' client) can arrive within one clock tick:
    the second submission used to replace the first's file, losing its asset."""
    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", MON)
    at = ts("2025-11-24 10:30")
    submit_positions(arena, entrant, {"ETH": 0.5}, at)
    submit_positions(arena, entrant, {"BTC": -0.25}, at)
    submit_positions(arena, entrant, {"ETH": 1.0}, at)
    assert entrant_track(arena.lake, "outside-one") == [
        (at, {"ETH": 0.5}), (at, {"BTC": -0.25}), (at, {"ETH": 1.0})]


def test_a_track_position_counts_from_the_first_close_after_it_arrives():
    """No lookahead: a position received during a bar is held from that bar's close on."""
    index = pd.date_range("2025-11-24 09:00", periods=4, freq="1h", tz="UTC")
    closes = pd.Series([1.0, 2.0, 3.0, 4.0], index=index)
    held = track_series(closes, index + pd.Timedelta(hours=1),
                        [(ts("2025-11-24 10:30"), {"ETH": 1.0})], "ETH")
    # bar 09:00 closes at 10:00 (before the submission): flat; bar 10:00 closes at 11:00: held
    assert held.tolist() == [0.0, 1.0, 1.0, 1.0]


def test_a_position_received_exactly_at_a_close_is_held_from_it_and_a_nanosecond_later_not(
        arena):
    """The reply, the stored receipt and the score say one rule: a position is held from the
    first bar close at or after its receipt, to the nanosecond. Sent exactly at Tuesday's
    10:00 close (the 09:00 bar's), or a nanosecond before, it earns the window's last six
    moves of 24 (the window: Monday's cycle to Tuesday's, from the first bar's open); a
    nanosecond after, only five, from the 11:00 close."""
    close = ts("2025-11-25 10:00")
    ns = pd.Timedelta(1, "ns")
    sent = {"before": close - ns, "at": close, "after": close + ns}
    for name, at in sent.items():
        entrant, _ = add_entrant(arena.lake, arena.season, name, MON)
        kept = submit_positions(arena, entrant, {"ETH": 1.0}, at)
        assert kept["received_at"] == at.isoformat()  # the nanosecond is kept
        assert "at or after received_at" in kept["note"]
        assert entrant_track(arena.lake, name) == [(at, {"ETH": 1.0})]
    now = TUE + pd.Timedelta(hours=1)
    got = {name: entrant_score(arena, e, now)["single_asset"][0]
           for name in sent for e in entrants(arena.lake) if e.name == name}
    assert {n: t["coverage"] for n, t in got.items()} == pytest.approx(
        {"before": 6 / 24, "at": 6 / 24, "after": 5 / 24})
    assert got["before"]["return"] == got["at"]["return"] != got["after"]["return"]
    bars = arena.lake.read_bars(PartitionKey("synthetic", "1h", "ETH")).set_index("timestamp")
    last = bars.loc[ts("2025-11-25 15:00"), "close"]
    for name, held_from in (("at", "09:00"), ("after", "10:00")):
        entry = bars.loc[ts(f"2025-11-25 {held_from}"), "close"]
        assert got[name]["return"] == pytest.approx((1 - 0.0006) * last / entry - 1, rel=1e-12)


def test_an_entrant_lands_in_the_marts_and_reports_like_a_roster_contestant(arena):
    """Joined on Tuesday: its window starts there, the leaderboard marks it an outside entrant,
    its trade links to its decision in the season report, the daily report lists it."""
    from arena.pipeline.live.publish import publish_season
    from arena.reporting.season import read_marts

    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", MON)
    _cycle(arena, MON)
    submit_decision(arena, entrant, answer(open_eth()), TUE - pd.Timedelta(hours=1))
    _cycle(arena, TUE)
    out = publish_season(arena.lake, arena.season, players=200)
    board = read_marts(arena.lake)["leaderboard"].set_index("contestant")
    assert bool(board.loc["outside-one", "outside_entrant"]) is True
    assert bool(board.loc["momentum", "outside_entrant"]) is False
    assert board.loc["outside-one", "first_cycle_at"] == TUE
    assert board.loc["outside-one", "model_calls"] == 0  # its inbox is not a model
    # a contestant, placed; the house rule beside it a ruler, not placed
    assert (board.loc["outside-one", "role"], board.loc["outside-one", "place"]) == ("contestant", 1)
    assert board.loc["momentum", "role"] == "ruler" and pd.isna(board.loc["momentum", "place"])
    # its score gives the skill percentile the publication placed it at, saying what it means
    mine = entrant_score(arena, entrant, TUE + pd.Timedelta(hours=1))["arena"]
    assert mine["skill_status"] == board.loc["outside-one", "skill_status"] == "scored"
    assert mine["skill_percentile"] == board.loc["outside-one", "skill_percentile"]
    assert mine["skill_players"] == board.loc["outside-one", "skill_players"]
    assert mine["skill_as_of"] == TUE.isoformat() and "relabelled at random" in mine["skill_means"]
    html = out.report.read_text()
    assert ">outside entrant, from 2025-11-25<" in html and 'id="contestant-outside-one"' in html
    assert 'href="#d-outside-one-20251125T1600-answer-0"' in html
    daily = (arena.lake.root / "reports" / "daily" / "2025-11-25.md").read_text()
    assert "outside-one" in daily and "outside thesis" in daily


def test_a_stock_position_sent_after_the_close_waits_for_the_next_session():
    """AAPL's last hourly bar of 24 November opens 20:30 UTC and closes with the session at
    21:00, not at 21:30: a position sent at 21:10 earns nothing of that night's move."""
    from arena.core.sessions import bar_close_times

    opens = pd.DatetimeIndex([ts("2025-11-24 19:30"), ts("2025-11-24 20:30"),
                              ts("2025-11-25 14:30"), ts("2025-11-25 15:30")])
    closes = pd.Series([1.0, 1.0, 1.1, 1.2], index=opens)
    shut = bar_close_times("XNYS", "1h", opens)
    assert shut[1] == ts("2025-11-24 21:00")
    before = track_series(closes, shut, [(ts("2025-11-24 20:50"), {"AAPL": 1.0})], "AAPL")
    after = track_series(closes, shut, [(ts("2025-11-24 21:10"), {"AAPL": 1.0})], "AAPL")
    assert before.tolist() == [0.0, 1.0, 1.0, 1.0]  # held from the 21:00 close
    assert after.tolist() == [0.0, 0.0, 1.0, 1.0]  # from the next session's first close


def test_a_revoked_key_leaves_no_submission_waiting_and_the_inbox_keeps_twenty(arena):
    from arena.agents.entrant import KEPT_PER_CYCLE, Inbox

    entrant, _ = add_entrant(arena.lake, arena.season, "outside-one", MON - pd.Timedelta(days=1))
    for minute in range(25):
        submit_decision(arena, entrant, answer(open_eth(percent=10 + minute)),
                        MON - pd.Timedelta(hours=3) + pd.Timedelta(minutes=minute))
    inbox = Inbox(arena.lake.root)
    kept = inbox.submissions("outside-one", MON)
    assert len(kept) == KEPT_PER_CYCLE and json.loads(kept[-1].answer)["decisions"][0][
        "percent_of_equity"] == 34  # the last one sent
    revoke_entrant(arena.lake, "outside-one", MON - pd.Timedelta(hours=1))
    assert inbox.last("outside-one", MON) is None
    _cycle(arena, MON)  # it holds
    assert Ledger(arena.lake).fills("outside-one") == []
