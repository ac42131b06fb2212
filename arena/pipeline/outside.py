"""What an outside entrant may ask of the season and do in it (the MCP server's tools, minus
the transport): read the rules, read candles up to the present, submit a decision for the coming
cycle (dry-run at once), submit positions for the single-asset track, and see its score.

The present is the server's clock, never the caller's: candles are the bars closed by it, a
submission is stamped with it and goes to the first cycle after it. Once the season is over
(:func:`arena.pipeline.entrants.season_over`: its last cycle's time passed, or it was closed) a
decision or a position is refused; the rules, candles and scores stay readable. Every refusal
is an :class:`OutsideError` whose message says what to do instead.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from arena.agents.entrant import Inbox, unreadable
from arena.core.errors import UnusableInput
from arena.core.sessions import INTERVAL_ORDER
from arena.core.universe import Asset, Universe
from arena.data.lake import Lake, PartitionKey, write_text
from arena.engine.check import check_answer
from arena.engine.rules import REASON_CODES, CycleState
from arena.ledger.store import Ledger
from arena.market.asof import NoPrices, closed_bars, cycle_prices, provider_of
from arena.market.prompts import Prompts
from arena.market.sections import rule_fields
from arena.pipeline.entrants import Entrant, entrants, join, season_over
from arena.pipeline.live.cycle import season_rules
from arena.pipeline.matched_tables import BOOK_UNMATCHED, NO_TRADES, SCORED
from arena.pipeline.season_config import SeasonConfig
from arena.pipeline.season_tables import (
    TRACK_DIR,
    TRACK_ELIGIBLE,
    TRACK_NO_BARS,
    TRACK_NO_POSITION,
    TRACK_TOO_SHORT,
    asset_tracks,
    entrant_track,
    read_analytics,
    read_tracks,
    track_series,  # noqa: F401 - the track's positions, where callers of this module knew them
)
from arena.reporting.roles import CONTESTANT, RULER, recorded_role
from arena.scoring.matched import share_below
from arena.scoring.scorer import asset_cost_rate, percentile, rank_score

MAX_BARS = 1000  # candles one call returns at most
MAX_ANSWER_CHARS = 32_000  # a submitted answer (the engine's own limit is higher)
ELIGIBLE_SHARE = 0.70  # valid submissions over the cycles since joining


class OutsideError(UnusableInput, ValueError):
    """A request an entrant cannot make (names what is wrong and what to do)."""


@dataclass(frozen=True)
class Arena:
    """One season seen from outside: its lake, config and universe. A blind season has no
    door: its data tools would serve the real names, dates and prices it hides."""

    lake: Lake
    season: SeasonConfig

    def __post_init__(self) -> None:
        if self.season.blind:
            raise OutsideError(f"season {self.season.id} is played blind: outside entrants "
                               "would read its real names, dates and prices, so it takes none")

    @property
    def universe(self) -> Universe:
        return self.season.universe()

    def asset(self, symbol: str) -> Asset:
        universe = self.universe
        if symbol not in universe:
            raise OutsideError(f"{symbol!r} is not an asset of season {self.season.id} (its "
                               f"assets: {', '.join(a.symbol for a in universe)})")
        return universe[symbol]

    def refuse_when_over(self, now: pd.Timestamp, what: str) -> None:
        """:class:`OutsideError` when the season is over at ``now``: it takes no ``what``."""
        why = season_over(self.lake, self.season, now)
        if why is not None:
            raise OutsideError(f"{why}; it takes no {what} (its rules, candles and your score "
                               "stay readable)")

    def next_cycle(self, now: pd.Timestamp) -> pd.Timestamp:
        later = self.season.next_after(now)
        if later is None:
            raise OutsideError(f"season {self.season.id} has no cycle after {now.isoformat()}: "
                               "it is over")
        return later


def rules(arena: Arena, now: pd.Timestamp) -> dict[str, object]:
    """The season's assets (each with the cost a single-asset track on it pays), fees, cycle
    time and deadline, the decision contract, the reason codes, the luck ceiling per asset so
    far (once the luck tables were published), and a contest's own rules (``contest``: null
    when the season is not one)."""
    season, rules_ = arena.season, season_rules(arena.season)
    fields = rule_fields(rules_, [b.symbol for b in arena.universe.benchmarks])
    prompts = Prompts()
    try:
        ceiling = read_analytics(arena.lake, "luck_ceiling")
        ceilings = [{"symbol": r.symbol, "ceiling": float(r.ceiling), "median": float(r.q50),
                     "players": int(r.players)} for r in ceiling.itertuples()]
    except (FileNotFoundError, LookupError, KeyError):
        ceilings = []
    upcoming = season.next_after(now)
    return {
        "season": season.id, "now": now.isoformat(),
        "assets": [{"symbol": a.symbol, "name": a.name, "asset_class": a.asset_class,
                    "calendar": a.calendar, "provider": provider_of(season.providers, a),
                    "track_cost_rate": asset_cost_rate(a)}
                   for a in arena.universe],
        "intervals": list(INTERVAL_ORDER),
        "fee_rate": rules_.fee_rate, "start_cash": rules_.start_cash,
        "cycle_time_utc": f"{season.cycle_hour:02d}:00",
        "next_cycle": upcoming.isoformat() if upcoming is not None else None,
        "deadline": "a submission counts for the first cycle after the server receives it; the "
                    "last one before the cycle's time executes there",
        "cycles": [t.isoformat() for t in season.times],
        "rules": prompts.render("rules", **fields).strip(),
        "contract": prompts.render("contract", **fields).strip(),
        "reason_codes": list(REASON_CODES),
        "luck_ceiling": ceilings or "not published yet: the luck tables are built nightly",
        "contest": contest_rules(season),
    }


def contest_rules(season: SeasonConfig) -> dict[str, object] | None:
    """A contest's rules as an entrant reads them (None: the season is not a contest)."""
    contest = season.contest
    if contest is None:
        return None
    return {"name": contest.name, "assets": list(contest.assets), "fees": contest.fees,
            "eligibility": contest.eligibility,
            "prizes": {s: list(p) for s, p in contest.prizes.items()},
            "currency": contest.currency, "ties": "tracks tied at a place share the prizes of "
            "the places they take, equally", "first_day": season.first.isoformat(),
            "last_day": season.last.isoformat(), "days": season.days}


def candles(arena: Arena, symbol: str, interval: str, now: pd.Timestamp,
            limit: int = 200) -> dict[str, object]:
    """The ``interval`` bars of ``symbol`` closed by ``now`` (the last ``limit``). An asset or
    interval the lake does not hold is refused; no bar after ``now`` is ever returned."""
    asset = arena.asset(symbol)
    if interval not in INTERVAL_ORDER:
        raise OutsideError(f"unknown interval {interval!r} (intervals: {', '.join(INTERVAL_ORDER)})")
    if not 1 <= limit <= MAX_BARS:
        raise OutsideError(f"limit must be between 1 and {MAX_BARS}, not {limit}")
    provider = provider_of(arena.season.providers, asset)
    held = [i for i in INTERVAL_ORDER if arena.lake.has(PartitionKey(provider, i, symbol))]
    if interval not in held:
        raise OutsideError(f"the lake holds no {interval} bars of {symbol} (it holds "
                           f"{', '.join(held) or 'none'})")
    bars = closed_bars(arena.lake, provider, asset, interval, now, limit=limit)
    return {"symbol": symbol, "interval": interval, "provider": provider,
            "closed_by": now.isoformat(), "bars": [
                {"open_time": t.isoformat(), "open": o, "high": h, "low": lo, "close": c,
                 "volume": v}
                for t, o, h, lo, c, v in zip(bars["timestamp"], bars["open"], bars["high"],
                                             bars["low"], bars["close"], bars["volume"],
                                             strict=True)]}


def _latest_prices(arena: Arena, at: pd.Timestamp) -> dict[str, float]:
    prices = cycle_prices(arena.lake, arena.season.providers, arena.universe, [at])
    return {str(r.symbol): float(r.price) for r in prices.itertuples()}


def submit_decision(arena: Arena, entrant: Entrant, answer: str, now: pd.Timestamp,
                    clock: Callable[[], pd.Timestamp] | None = None) -> dict[str, object]:
    """Keep ``answer`` for the coming cycle and dry-run it at once against the entrant's
    portfolio and the latest prices, with the contract and validator every contestant gets.
    The entrant joins the season with its first submission. ``clock``: read again once the
    submission is kept - one that lands as the cycle begins is taken back and refused. Refused
    once the season is over."""
    arena.refuse_when_over(now, "decision")
    if not isinstance(answer, str) or not answer.strip():
        raise OutsideError("answer must be the arena answer as text: a JSON object with a "
                           "'decisions' list (see the rules' contract)")
    if len(answer) > MAX_ANSWER_CHARS:
        raise OutsideError(f"answer is {len(answer):,} characters; the limit is "
                           f"{MAX_ANSWER_CHARS:,}")
    why = unreadable(answer)
    if why is not None:  # kept, it would replace the last valid submission
        raise OutsideError(f"submission refused, not kept (your last valid submission, if any, "
                           f"still executes): {why}")
    cycle_at = arena.next_cycle(now)
    try:  # the dry run first: nothing is kept for an answer that cannot even be checked
        prices = _latest_prices(arena, now)
    except NoPrices as exc:
        raise OutsideError(f"no prices to check the answer against yet: {exc}") from None
    portfolio = Ledger(arena.lake).portfolio(entrant.name)
    report = check_answer(CycleState(portfolio, cycle_at), answer, prices, arena.universe,
                          season_rules(arena.season))
    joined = join(arena.lake, arena.season, entrant.name, cycle_at, now)
    inbox = Inbox(arena.lake.root)
    kept = inbox.put(entrant.name, cycle_at, now, answer)
    if clock is not None and clock() >= cycle_at:  # the cycle began while it was written
        kept.path.unlink(missing_ok=True)
        raise OutsideError(f"the cycle of {cycle_at.isoformat()} began while the submission "
                           "was being kept: submit again for the next one")
    return {"cycle_at": cycle_at.isoformat(), "received_at": now.isoformat(),
            "joined_from": None if joined is None else joined.from_cycle,
            "kept": kept.path.name, "dry_run": report,
            "note": "the last valid submission before the cycle executes there; resubmit until then "
                    "to mend any rejection (the engine's judgement at the cycle is final)"}


def own_submissions(arena: Arena, entrant: Entrant, now: pd.Timestamp) -> dict[str, object]:
    """The entrant's own submissions for the coming cycle, oldest first, and the text of the
    one that counts (the last valid one: :meth:`arena.agents.entrant.Inbox.last`)."""
    cycle_at = arena.next_cycle(now)
    inbox = Inbox(arena.lake.root)
    kept = inbox.submissions(entrant.name, cycle_at)
    counts = inbox.last(entrant.name, cycle_at)
    return {"entrant": entrant.name, "cycle_at": cycle_at.isoformat(),
            "submissions": [{"received_at": s.received_at.isoformat(), "chars": len(s.answer)}
                            for s in kept],
            "last_answer": None if counts is None else counts.answer}


_TRACK_WRITE = threading.Lock()
# when a submitted position starts earning (the rule of season_tables.tracks.track_series)
POSITION_NOTE = ("held from the first bar close at or after received_at (one received exactly "
                 "at a close earns from that close on), or from the open of the season's first "
                 "bar when sent by then; a symbol left out keeps its position")


def submit_positions(arena: Arena, entrant: Entrant, positions: Mapping[str, float],
                     now: pd.Timestamp) -> dict[str, object]:
    """Positions in [-1, +1] per asset for the single-asset track, held from the first bar
    close at or after ``now`` (the open of the season's first bar, when sent by then) until
    the next submission naming the asset (:func:`~arena.pipeline.season_tables.track_series`);
    out-of-range ones are clipped. Refused once the season is over: no bar of it is left to
    hold them."""
    arena.refuse_when_over(now, "position")
    if not positions:
        raise OutsideError("positions must map at least one symbol to a number in [-1, 1]")
    clipped, kept = {}, {}
    for symbol, raw in positions.items():
        arena.asset(symbol)
        value = float(raw)
        if not np.isfinite(value):
            raise OutsideError(f"position of {symbol} must be a finite number, not {raw!r}")
        kept[symbol] = float(np.clip(value, -1.0, 1.0))
        if kept[symbol] != value:
            clipped[symbol] = {"asked": value, "kept": kept[symbol]}
    with _TRACK_WRITE:  # two submissions stamped alike are two files, in the order received
        folder = arena.lake.root / TRACK_DIR / entrant.name
        path = folder / f"{now.value:020d}.json"
        for k in range(1, 1000):
            if not path.exists():
                break
            path = folder / f"{now.value:020d}_{k:03d}.json"  # sorts after the first
        write_text(path, json.dumps({"received_at": now.isoformat(), "positions": kept}))
    return {"received_at": now.isoformat(), "positions": kept, "clipped": clipped,
            "note": POSITION_NOTE}


def entrant_score(arena: Arena, entrant: Entrant, now: pd.Timestamp) -> dict[str, object]:
    """The entrant's return, place and luck so far (the arena track, from its record: its
    place among the contestants, the house rules playing beside them as rulers counted apart),
    its eligibility, and each single-asset track against that asset's zero-skill players over
    the season up to its latest cycle (:func:`_tracks`: the published ``asset_tracks`` mart's
    numbers, or the same numbers computed here for a cycle not yet published)."""
    entrant = next((e for e in entrants(arena.lake) if e.name == entrant.name), entrant)
    cash = season_rules(arena.season).start_cash
    ledger = Ledger(arena.lake)
    records = ledger.records()  # the keys only: one directory listing
    played = [k.cycle_at for k in records if k.contestant == entrant.name]
    out: dict[str, object] = {"entrant": entrant.name, "now": now.isoformat(),
                              "joined_from": entrant.joined_from}
    if played:
        last = max(played)
        standings = {}
        for key in records:
            if key.cycle_at == last:
                rows = ledger.record_rows("equity", last, key.contestant)
                if rows:
                    standings[key.contestant] = float(rows[-1]["equity"])
        mine = standings.get(entrant.name)
        roles = {n: recorded_role(ledger, n, last) for n in standings}
        rivals = [v for n, v in standings.items() if roles[n] == CONTESTANT]
        rulers = [v for n, v in standings.items() if roles[n] == RULER]
        place = 1 + sum(v > mine for v in rivals) if mine is not None else None
        out["arena"] = {"cycles": len(played), "last_cycle": last.isoformat(),
                        "equity": mine, "return": None if mine is None else mine / cash - 1,
                        "place": place, "of": len(rivals), "rulers": len(rulers),
                        "rulers_ahead": None if mine is None else sum(v > mine for v in rulers),
                        **_arena_luck(arena, mine, cash), **_arena_skill(arena, entrant.name)}
    due = sorted(t for t in played if t <= now)  # the cycles played since it joined
    inbox = Inbox(arena.lake.root)
    valid = sum(1 for t in due if inbox.last(entrant.name, t) is not None
                and _accepted(ledger, entrant.name, t))
    share = valid / len(due) if due else None
    out["eligibility"] = {"cycles_since_joining": len(due), "valid_submissions": valid,
                          "share": share, "eligible": share is not None
                          and share >= ELIGIBLE_SHARE, "threshold": ELIGIBLE_SHARE}
    out["single_asset"] = _tracks(arena, entrant.name, now)
    return out


def _accepted(ledger: Ledger, name: str, at: pd.Timestamp) -> bool:
    """Whether the record at ``at`` parsed and had no rejected decision."""
    try:
        rejections = ledger.record_rows("rejections", at, name)
        [outcome] = ledger.record_rows("outcome", at, name)
    except (KeyError, ValueError):
        return False
    return not rejections and outcome.get("status") in ("traded", "no_trade")


def _arena_luck(arena: Arena, equity: float | None, cash: float) -> dict[str, object]:
    """The entrant's place among the season's published zero-skill players (whole season)."""
    try:
        players = read_analytics(arena.lake, "arena_luck")
    except (FileNotFoundError, LookupError, KeyError):
        return {"luck": "not published yet: the luck tables are built nightly"}
    returns = players["final_return"].to_numpy(dtype=float)
    if equity is None or not len(returns):
        return {"luck": None}
    pct = percentile(equity / cash - 1, returns)
    return {"luck_percentile": pct, "rank_score": rank_score(pct, len(returns)),
            "zero_skill_players": len(returns),
            "luck_window": "the whole season's zero-skill players (an entrant that joined late "
                           "is judged against the season from its start)"}


SKILL_NULL = ("the share of your matched players below you: players that copy your book - "
              "positions, sides, sizes, timing, holding periods, fees - on assets relabelled at "
              "random, so the market's direction is theirs too and only your choice of assets "
              "is tested")


def _arena_skill(arena: Arena, name: str) -> dict[str, object]:
    """The entrant's skill percentile as the season's latest build of its matched players
    placed it (their book is the entrant's through that build's last cycle)."""
    try:
        books = read_analytics(arena.lake, "matched_books")
        players = read_analytics(arena.lake, "matched_players")
        season = read_analytics(arena.lake, "season")
    except (FileNotFoundError, LookupError, KeyError):
        return {"skill": "not published yet: the skill percentile is built with the marts"}
    row = books[(books["unit"] == name) & (books["unit_kind"] == "contestant")]
    if row.empty:
        return {"skill": "not published yet: your first recorded cycle is not built yet"}
    book = row.iloc[0]
    out: dict[str, object] = {"skill_status": str(book["status"]),
                              "skill_as_of": pd.Timestamp(season["season_end"].iloc[0]).isoformat()}
    if book["status"] != SCORED:
        out["skill_percentile"] = None
        out["skill_note"] = SKILL_NOTES.get(str(book["status"]), str(book["status"]))
        return out
    returns = players.loc[players["unit"] == name, "final_return"].to_numpy(dtype=float)
    return {**out, "skill_percentile": share_below(float(book["own_return"]), returns),
            "skill_players": len(returns), "skill_means": SKILL_NULL}


SKILL_NOTES = {NO_TRADES: "you opened no position yet: there is no choice to test (no "
                          "percentile, not 50%)",
               BOOK_UNMATCHED: "your fills replayed at the cycle prices do not give the equity "
                               "your records hold: no percentile until they do"}


# the published mart of every entrant's tracks (arena.pipeline.warehouse.publish writes the marts)
PUBLISHED_TRACKS = Path("marts") / "asset_tracks.parquet"
# the mart's names of the columns the analytics table names otherwise
_MART_NAMES = {"total_return": "return", "luck_percentile": "percentile",
               "rank_among_entrants": "rank", "zero_skill_players": "players",
               "luck_ceiling": "ceiling"}
TRACK_NOTES = {
    TRACK_NO_POSITION: "no position of yours earns any of the season's bars yet: a position "
                       "counts from the first bar close at or after its arrival",
    TRACK_TOO_SHORT: "no bar of the asset has closed between the season's first cycle and its "
                     "latest one: scored once one has (returns start with the first bar's move)",
    TRACK_NO_BARS: "the lake holds no bars of the asset in the season so far: nothing to "
                   "score it on",
}


def _tracks(arena: Arena, name: str, now: pd.Timestamp) -> list[dict[str, object]]:
    """Each of ``name``'s single-asset tracks over the season from its first cycle to its
    latest one at or before ``now`` (the window the season's tables were built on after that
    cycle): read from the published ``asset_tracks`` mart when it holds that cycle, else
    computed here by the function the season's build calls
    (:func:`~arena.pipeline.season_tables.asset_tracks`), so both give the same numbers."""
    symbols = sorted({s for _, p in entrant_track(arena.lake, name) for s in p})
    if not symbols:
        return []
    season = arena.season
    end = season.due(now) or season.first  # before the first cycle: an empty window
    published = _published_tracks(arena.lake, name, end, symbols)
    if published is not None:
        return published
    tracks = read_tracks(arena.lake)
    out = []
    for symbol in symbols:
        asset = arena.asset(symbol)
        rows = asset_tracks(arena.lake, provider_of(season.providers, asset), asset,
                            season.first, end, tracks)
        [mine] = [r for r in rows if r["entrant"] == name]
        out.append(_track_view(mine, sum(r["rank"] is not None for r in rows), "live"))
    return out


def _published_tracks(lake: Lake, name: str, end: pd.Timestamp, symbols: list[str]
                      ) -> list[dict[str, object]] | None:
    """``name``'s rows of the published mart when they are fresh: built on the season up to
    ``end`` and holding every symbol it submitted; else None (not published, an older build)."""
    try:
        table = pd.read_parquet(lake.root / PUBLISHED_TRACKS).rename(columns=_MART_NAMES)
        mine = table[table["entrant"] == name]
        fresh = (set(symbols) <= set(mine["symbol"])
                 and all(pd.Timestamp(t) == end for t in mine["season_end"]))
    except (OSError, ValueError, KeyError):  # none published yet, or a mart of before
        return None
    if not fresh:
        return None
    ranked = table[table["rank"].notna()].groupby("symbol").size()
    return [_track_view(row, int(ranked.get(row["symbol"], 0)), "published")
            for row in sorted(mine.to_dict("records"), key=lambda r: r["symbol"])
            if row["symbol"] in symbols]


def _track_view(row: Mapping[str, object], of: int, source: str) -> dict[str, object]:
    """A row of the ``asset_tracks`` table as the ``score`` tool shows it (nulls as None)."""

    def value(key: str) -> object:
        v = row.get(key)
        return None if v is None or (not isinstance(v, str) and pd.isna(v)) else v

    def number(key: str) -> float | None:
        v = value(key)
        return None if v is None else float(v)  # type: ignore[arg-type]

    def whole(key: str) -> int | None:
        v = value(key)
        return None if v is None else int(v)  # type: ignore[call-overload]

    def when(key: str) -> str | None:
        v = value(key)
        return None if v is None else pd.Timestamp(v).isoformat()  # type: ignore[arg-type]

    status = str(row["status"])
    out: dict[str, object] = {
        "symbol": str(row["symbol"]), "status": status, "from": when("season_start"),
        "to": when("season_end"), "first_submitted_at": when("first_submitted_at"),
        "grid": value("grid"), "bars": whole("bars"), "return": number("return"),
        "turnover": number("turnover"), "fees": number("fees"), "coverage": number("coverage"),
        "eligible": bool(value("eligible")), "eligible_from": TRACK_ELIGIBLE,
        "luck_percentile": number("percentile"), "rank_score": number("rank_score"),
        "rank": whole("rank"), "of": of, "ceiling": number("ceiling"),
        "zero_skill_players": whole("players"), "seed": whole("seed"), "source": source}
    if status in TRACK_NOTES:
        out["note"] = TRACK_NOTES[status]
    return out
