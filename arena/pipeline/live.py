"""A season's cycle, run only when it is sound, and the season's status.

:func:`check_cycle` refuses a cycle - before anything is recorded - when the lake holds no season
(or another one), when the time is off the season's schedule (unless forced) or in the future,
when a later cycle is already recorded (cycles are recorded in order), when the time is not the
season's current cycle (a missed day is played only as an explicit backfill, and only while no
later cycle exists), and when the market is not fresh enough to trade: the benchmarks stale, most
assets stale, or no bars at all. Each asset's freshness is judged by its own calendar
(:func:`arena.market.asof.is_stale`: a stock holding Friday's close is fresh on Sunday).

:func:`play_season_cycle` then records the monitor window that ends at the cycle (the automatic
closes since the previous cycle come first, as the ledger's order requires) and runs the cycle
(:func:`arena.pipeline.cycle.run_cycle`) on the season's providers, roster and rules.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import asdict, dataclass, field

from arena.agents.base import Contestant
from arena.core.errors import UnusableInput
from arena.core.lazy import lazy_import
from arena.core.runner import INLINE, Runner
from arena.core.sessions import bar_close_times, expected_bars, regular_session
from arena.core.universe import Universe
from arena.data.lake import Lake, PartitionKey, write_text
from arena.data.persistence import Boot, last_boot
from arena.engine.rules import ARENA_RULES, Rules
from arena.ledger.attempts import Attempts
from arena.ledger.store import Ledger
from arena.market.asof import (
    is_stale,
    last_price,
    price_interval,
    provider_of,
)
from arena.pipeline.cycle import Outcome, Slot, secret_names
from arena.pipeline.day import (
    DayReport,
    Retries,
    cycle_prices_at,
    monitor_day,
    play_day,
    record_forfeit,
)
from arena.pipeline.season import SeasonOutputs, finish_season
from arena.pipeline.season_config import (
    SEASON_DIR,
    SeasonConfig,
    active,
    roster_changes,
    season_roster,
)
from arena.pipeline.warehouse import Invoke
from arena.reporting.daily import daily_report, write_daily_report
from arena.reporting.roles import CONTESTANT, RULER

pd = lazy_import("pandas")

log = logging.getLogger(__name__)
STALE_SHARE_REFUSED = 0.5  # a cycle refuses when more than this share of its assets is stale


class CycleRefused(UnusableInput, RuntimeError):
    """The cycle was not run (nothing recorded); the message says why and what to do."""

    consequence = "nothing recorded"


class OffSeason(Exception):
    """Refused because the season has not started yet or is closed: nothing is wrong, there is
    just nothing to do (a scheduled flow completes instead of failing and alerting)."""


class CycleOffSeason(CycleRefused, OffSeason):
    """No cycle: the season has not started or is closed."""


@dataclass(frozen=True)
class Freshness:
    """One asset's data at a time: its last price's print time (None: no bar), the interval
    it comes from, and whether it is stale there."""

    symbol: str
    provider: str
    interval: str | None
    printed_at: pd.Timestamp | None
    stale: bool

    @property
    def state(self) -> str:
        return "no data" if self.printed_at is None else ("stale" if self.stale else "fresh")


def freshness(lake: Lake, season: SeasonConfig, universe: Universe, at: pd.Timestamp
              ) -> list[Freshness]:
    """Every asset of the season: how fresh its price is at ``at``, by its own calendar."""
    out = []
    for asset in universe:
        provider = provider_of(season.market, asset)
        interval = price_interval(lake, provider, asset.symbol)
        got = last_price(lake, provider, asset, at) if interval else None
        printed = None if got is None else got[1]
        stale = printed is None or is_stale(asset.calendar, interval, printed, at)
        out.append(Freshness(asset.symbol, provider, interval, printed, stale))
    return out


@dataclass
class CyclePlan:
    """A sound cycle: when, the market's freshness, and the monitor window before it."""

    at: pd.Timestamp
    fresh: list[Freshness]
    monitor_from: pd.Timestamp | None

    @property
    def stale(self) -> list[str]:
        return [f.symbol for f in self.fresh if f.stale]


def current_cycle(season: SeasonConfig, now: pd.Timestamp) -> pd.Timestamp:
    """The season's cycle due at ``now`` (:class:`CycleRefused` before its first)."""
    due = season.due(now)
    if due is None:
        raise CycleOffSeason(f"season {season.id!r} starts {season.first.isoformat()}: no cycle "
                           "is due yet")
    return due


def check_cycle(lake: Lake, season: SeasonConfig, ledger: Ledger, universe: Universe,
                at: pd.Timestamp, *, now: pd.Timestamp, force_time: bool = False,
                backfill: bool = False, retry: bool = False) -> CyclePlan:
    """Whether the cycle at ``at`` may run now (see the module docstring); raises
    :class:`CycleRefused` naming the reason, before anything is recorded. ``retry``: the cycle
    was played before (a record or a failed attempt exists) and is played again for the
    contestants without a record."""
    where = f"season {season.id!r}"
    closed = closed_at(lake)
    if closed is not None:
        raise CycleOffSeason(f"{where} was closed at {closed} after its last cycle: no further "
                           "cycle is accepted; start the next season in a new lake (arena "
                           "season init --lake ...)")
    if not season.on_schedule(at):
        inside = season.first <= at < season.last + pd.Timedelta(days=1)
        if not (force_time and inside):
            raise CycleRefused(
                f"{at.isoformat()} is not a cycle time of {where} (daily at "
                f"{season.cycle_hour:02d}:00 UTC from {season.first:%Y-%m-%d} to "
                f"{season.last:%Y-%m-%d})" + ("" if inside else "; it lies outside the season")
                + ("" if force_time or not inside else "; --force-time runs it anyway"))
    if at > now:
        raise CycleRefused(f"{at.isoformat()} is in the future (now {now.isoformat()}): its bars "
                           "do not exist yet")
    recorded = {k.cycle_at for k in ledger.records()}
    later = sorted(t for t in recorded if t > at)
    if later:
        raise CycleRefused(f"{where} already has a later cycle ({later[0].isoformat()}): cycles "
                           "are recorded in order, so this one can no longer be played")
    due = season.due(now)
    if retry:
        played = recorded | set(Attempts(lake).cycles())
        if at not in played:
            raise CycleRefused(f"{at.isoformat()} was never played in {where}: nothing to retry")
    elif backfill and due is not None and at >= due:
        raise CycleRefused(f"{at.isoformat()} is the current cycle of {where}, not a missed one: "
                           "run it with arena cycle")
    if not (backfill or retry) and due is not None and at < due:
        raise CycleRefused(f"{at.isoformat()} is not the current cycle of {where} (due: "
                           f"{due.isoformat()}); a missed cycle is played by arena season "
                           f"backfill {at:%Y-%m-%d}, while no later cycle exists")
    fresh = freshness(lake, season, universe, at)
    _check_market(fresh, universe, at, where)
    previous = [t for t in recorded if t < at]
    return CyclePlan(at, fresh, max(previous) if previous else None)


def _check_market(fresh: Sequence[Freshness], universe: Universe, at: pd.Timestamp,
                  where: str) -> None:
    if all(f.printed_at is None for f in fresh):
        raise CycleRefused(f"the lake of {where} holds no bars closed by {at.isoformat()} "
                           "(run arena ingest first)")
    benchmarks = {a.symbol for a in universe.benchmarks}
    bad_bench = [f for f in fresh if f.symbol in benchmarks and f.stale]
    stale = [f for f in fresh if f.stale]
    if bad_bench or len(stale) > STALE_SHARE_REFUSED * len(fresh):
        shown = ", ".join(f"{f.symbol} ({_since(f)})" for f in (bad_bench or stale)[:6])
        more = f" and {len(stale) - 6} more" if len(stale) > 6 else ""
        what = "the benchmark" + ("s are" if len(bad_bench) > 1 else " is") if bad_bench else \
            f"{len(stale)} of {len(fresh)} assets are"
        raise CycleRefused(f"the market at {at.isoformat()} is not fresh: {what} stale - {shown}"
                           f"{more}; ingest up to the cycle first (arena ingest)")


def _since(f: Freshness) -> str:
    return "no bars" if f.printed_at is None else f"last price {f.printed_at:%Y-%m-%d %H:%M}"


@dataclass
class CycleRun:
    """A cycle played: the plan it was checked against, and its day."""

    plan: CyclePlan
    day: DayReport

    @property
    def outcomes(self) -> list[Outcome]:
        return self.day.outcomes

    @property
    def automatic_closes(self) -> int:
        return self.day.automatic_closes

    @property
    def forfeits(self) -> list[tuple[pd.Timestamp, str]]:
        """The earlier cycles' contestants recorded as forfeited before this cycle."""
        return self.day.forfeits

    @property
    def attempts(self) -> int:
        """Rounds the failed contestants were played in (1: no retry)."""
        return self.day.rounds


def season_rules(season: SeasonConfig) -> Rules:
    return ARENA_RULES if season.fee_rate == ARENA_RULES.fee_rate else dataclasses.replace(
        ARENA_RULES, fee_rate=season.fee_rate)


def play_season_cycle(lake: Lake, season: SeasonConfig, contestants: Sequence[Contestant],
                      at: pd.Timestamp, *, now: pd.Timestamp, universe: Universe | None = None,
                      force_time: bool = False, backfill: bool = False, retry: bool = False,
                      runner: Runner = INLINE, slot: Slot | None = None,
                      ledger: Ledger | None = None, attempts: Attempts | None = None,
                      deadline_s: float | None = None,
                      clock: Callable[[], float] = time.monotonic,
                      sleep: Callable[[float], None] = time.sleep) -> CycleRun:
    """Check the cycle (:func:`check_cycle`), then play its day
    (:func:`arena.pipeline.day.play_day`): every contestant still without a record in an
    earlier cycle where it failed is recorded as forfeited, with the reason from the attempts
    log; the monitor window ending at the cycle is recorded; the cycle is played. A contestant
    that failed (its model unreachable) is played again - with waits of 2, 4, 8... seconds -
    until the season's cycle deadline (one whose record the ledger refused, e.g. for a secret
    in it, is not); each failed attempt goes to the attempts log
    (:class:`arena.ledger.attempts.Attempts`), never to the ledger. ``retry``: the cycle was
    played before (``arena season retry``): only the contestants without a record play.
    ``deadline_s``: the seconds left to retry in (default: the season's cycle deadline)."""
    universe = universe or season.universe()
    secrets = secret_names(contestants)
    ledger = ledger or Ledger(lake, secret_names=secrets)
    attempts = attempts or Attempts(lake, secret_names=secrets)
    plan = check_cycle(lake, season, ledger, universe, at, now=now, force_time=force_time,
                       backfill=backfill, retry=retry)
    # a contestant retired since it failed is still forfeited where it played
    names = () if retry else tuple(sorted({c.name for c in contestants}
                                          | set(season_roster(lake).names)))
    day = play_day(lake, season.market, universe, contestants, at, ledger=ledger,
                   rules=season_rules(season), runner=runner, slot=slot, attempts=attempts,
                   forfeit_names=names, candles=season.candles,
                   retries=Retries(season.cycle_deadline_s if deadline_s is None else deadline_s,
                                   season.call_timeout_s, clock, sleep))
    return CycleRun(plan, day)


# ----------------------------------------------------------------------------- live monitor
MONITOR_STEP = dt.timedelta(minutes=15)


class MonitorRefused(UnusableInput, RuntimeError):
    """The monitor was not run (nothing recorded); the message says why."""

    consequence = "nothing recorded"


class MonitorOffSeason(MonitorRefused, OffSeason):
    """No monitor tick: the season is closed."""


@dataclass
class MonitorRun:
    end: pd.Timestamp
    contestants: list[str]
    automatic_closes: int
    held: list[str]  # the symbols any contestant holds (what the monitor watched)


def monitor_end(season: SeasonConfig, ledger: Ledger, tick: pd.Timestamp) -> pd.Timestamp | None:
    """Where a live monitor tick may end: the 15-minute mark at or before ``tick`` (a step
    earlier at an NYSE session's open, whose opening print needs the session's first bar), but
    never past a cycle of the season that is due and not played yet (that cycle records the
    window up to itself first, so the ledger keeps its order). None: nothing to watch yet (the
    season's first cycle is not played)."""
    end = tick.floor(MONITOR_STEP)
    session = regular_session(end)
    if session is not None and session.open == end:
        # The session's opening print is observed at the open but its bar closes a step later:
        # a window ending at the open would be written before that bar exists and the print,
        # at the window's end, would never be watched. The window ends a step earlier; the
        # next tick's window holds the open and its bar.
        end -= MONITOR_STEP
    played = {k.cycle_at for k in ledger.records()}
    if not played:
        return None
    pending = [t for t in season.times if t <= end and t > max(played)]
    return min([end, *pending[:1]])


def run_monitor(lake: Lake, season: SeasonConfig, contestants: Sequence[Contestant],
                tick: pd.Timestamp, *, now: pd.Timestamp, universe: Universe | None = None,
                ledger: Ledger | None = None) -> MonitorRun:
    """One live monitor tick: every contestant's open positions checked against the bars since
    its last monitor window (or its last cycle), up to :func:`monitor_end` - with the same pure
    monitor as a replay, each window recorded exactly once. Refused (nothing recorded) for a
    tick in the future and when a held symbol's 15-minute bars do not reach the window's end
    yet: a window is recorded once, so a bar ingested after it would never be watched."""
    closed = closed_at(lake)
    if closed is not None:
        raise MonitorOffSeason(f"season {season.id!r} was closed at {closed}: nothing to watch")
    if tick > now:
        raise MonitorRefused(f"the tick {tick.isoformat()} is in the future (now "
                             f"{now.isoformat()})")
    universe = universe or season.universe()
    ledger = ledger or Ledger(lake, secret_names=secret_names(contestants))
    end = monitor_end(season, ledger, tick)
    if end is None:
        raise MonitorRefused(f"season {season.id!r} has no cycle played yet: no position to "
                             "watch")
    cycles = [k.cycle_at for k in ledger.records() if k.cycle_at <= end]
    if not cycles or end <= max(cycles):
        raise MonitorRefused(f"the tick {tick.isoformat()} is not after the season's last played "
                             f"cycle ({max(k.cycle_at for k in ledger.records()).isoformat()})")
    latest = max(cycles)
    # a contestant without a record at the latest cycle is still being played, retried or
    # forfeited there: that cycle's own monitor step watches it (its record must come first)
    playing = [c for c in contestants if ledger.has(latest, c.name)]
    watched = max((k.end for c in playing for k in ledger.monitor_records(c.name)), default=None)
    if watched is not None and end < watched:
        raise MonitorRefused(f"the tick {tick.isoformat()} is already watched: the monitor's "
                             f"windows reach {watched.isoformat()} (a window is recorded once; "
                             "a later tick watches on)")
    held = sorted({s for c in playing for s in ledger.portfolio(c.name).positions})
    behind = _bars_behind(lake, season, universe, held, end)
    if behind:
        raise MonitorRefused("the 15-minute bars of " + ", ".join(
            f"{s} (to {t:%Y-%m-%d %H:%M})" if t is not None else f"{s} (none)"
            for s, t in behind.items()) + f" do not reach {end.isoformat()}: ingest first")
    closes = monitor_day(lake, ledger, season.market, universe, playing, end)
    return MonitorRun(end, [c.name for c in playing], closes, held)


def _bars_behind(lake: Lake, season: SeasonConfig, universe: Universe, symbols: Sequence[str],
                 end: pd.Timestamp) -> dict[str, pd.Timestamp | None]:
    """The symbols with a 15-minute bar the calendar expects to close by ``end`` that the lake
    does not hold yet, each with where its bars end."""
    out: dict[str, pd.Timestamp | None] = {}
    for symbol in symbols:
        asset = universe[symbol]
        bars = lake.read_bars(PartitionKey(provider_of(season.market, asset), "15m", symbol),
                              end - pd.Timedelta(days=7), end)
        last = None
        if len(bars):
            last = bar_close_times(asset.calendar, "15m",
                                   pd.DatetimeIndex(bars["timestamp"].iloc[-1:]))[0]
        since = last if last is not None else end - pd.Timedelta(days=7)
        opens = expected_bars(asset.calendar, "15m", since, end)
        if len(opens) and bool((bar_close_times(asset.calendar, "15m", opens) <= end).any()):
            out[symbol] = last
    return out


# -------------------------------------------------------------------------- publication, end
CLOSED = "closed.json"
LIVE_PLAYERS = 2_000  # zero-skill players per asset after each cycle (the nightly build: more)


class PublishError(UnusableInput, RuntimeError):
    """The season's tables, marts and report cannot be built (no cycle yet, or a final
    publication before the last cycle)."""


def closed_at(lake: Lake) -> str | None:
    """When the lake's season was closed (None: it is open)."""
    path = lake.root / SEASON_DIR / CLOSED
    if not path.is_file():
        return None
    return str(json.loads(path.read_text(encoding="utf-8")).get("closed_at"))


def publish_season(lake: Lake, season: SeasonConfig, *, players: int = LIVE_PLAYERS,
                   final: bool = False, now: pd.Timestamp | None = None,
                   invoke: Invoke | None = None, runner: Runner = INLINE,
                   ledger: Ledger | None = None,
                   progress: Callable[[str], None] | None = None) -> SeasonOutputs:
    """The season so far as analysts read it: its luck and rules tables (``players`` per asset),
    the dbt marts and the season report, from the cycles recorded until now - the same steps
    as the end of a replay. ``final``: after the season's last cycle, the season closes
    (no further cycle is accepted; :func:`closed_at`)."""
    recorded = sorted({k.cycle_at for k in (ledger or Ledger(lake)).records()})
    if not recorded:
        raise PublishError(f"season {season.id!r} has no recorded cycle yet: its tables, marts "
                           "and report follow its first cycle")
    if final and recorded[-1] < season.last:
        raise PublishError(f"season {season.id!r} cannot close before its last cycle "
                           f"({season.last.isoformat()}; the last recorded is "
                           f"{recorded[-1].isoformat()})")
    times = sorted({t for t in season.times if t <= recorded[-1]} | set(recorded))
    out = finish_season(lake, season.market, season.universe(), times, players=players,
                        quiet=True, invoke=invoke, runner=runner, progress=progress)
    if final:
        stamp_ = (now or pd.Timestamp.now(tz="UTC")).isoformat()
        write_text(lake.root / SEASON_DIR / CLOSED, json.dumps(
            {"season": season.id, "closed_at": stamp_, "last_cycle": recorded[-1].isoformat(),
             "players": players}, indent=2) + "\n")
    return out


# ------------------------------------------------------------------------------------- status
DONE, PARTIAL, FAILED_RETRY, DUE, MISSED, MISSED_BACKFILL, UPCOMING = (
    "done", "partial", "failed (retry allowed)", "due", "missed", "missed (backfill allowed)",
    "upcoming")
CYCLE_STATES = (DONE, PARTIAL, FAILED_RETRY, DUE, MISSED, MISSED_BACKFILL, UPCOMING)


@dataclass(frozen=True)
class CycleState:
    """One cycle of the season as the status sees it: its state (one of :data:`CYCLE_STATES`),
    who is recorded, who is missing, who failed there and each one's last error."""

    at: pd.Timestamp
    state: str
    recorded: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    last_error: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"at": self.at.isoformat(), "state": self.state, "recorded": list(self.recorded),
                "missing": list(self.missing), "failed": list(self.failed),
                "last_error": dict(self.last_error)}


@dataclass(frozen=True)
class ContestantState:
    """One contestant of the season: its cycles, its last one and how it ended, its equity and
    positions now, the roster changes made to it, and its role (a contestant, or a house rule
    playing as a ruler: :mod:`arena.reporting.roles`)."""

    contestant: str
    cycles: int
    last_cycle: pd.Timestamp | None
    last_status: str | None
    equity: float | None
    positions: tuple[str, ...]
    roster: tuple[str, ...]
    role: str = CONTESTANT
    luck_percentile: float | None = None  # as of the last publication (None: not published)
    skill_percentile: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"contestant": self.contestant, "role": self.role, "cycles": self.cycles,
                "last_cycle": None if self.last_cycle is None else self.last_cycle.isoformat(),
                "last_status": self.last_status, "equity": self.equity,
                "positions": list(self.positions), "roster": list(self.roster),
                "luck_percentile": self.luck_percentile,
                "skill_percentile": self.skill_percentile}


@dataclass
class SeasonStatus:
    season: SeasonConfig
    now: pd.Timestamp
    cycles: list[CycleState]
    assets: list[Freshness]
    contestants: list[ContestantState]
    closed: str | None = None
    storage: Boot | None = None  # the last start's persistence verdict (arena serve)
    published_cycles: int = 0  # the cycles the percentiles were published after (0: none)

    def count(self, state: str) -> int:
        return sum(1 for c in self.cycles if c.state == state)

    @property
    def leader(self) -> ContestantState | None:
        """The contestant with the highest equity now (of several, the first by name); None
        before any has an equity, and in a season of house rules only: a ruler never leads."""
        valued = [c for c in self.contestants if c.role == CONTESTANT and c.equity is not None]
        return min(valued, key=lambda c: (-c.equity, c.contestant), default=None)  # type: ignore[operator]

    def to_json(self) -> dict[str, object]:
        leader = self.leader
        return {"season": self.season.to_json(), "now": self.now.isoformat(),
                "closed_at": self.closed,
                "leader": None if leader is None else leader.contestant,
                "cycles": [c.to_json() for c in self.cycles],
                "assets": [{"symbol": f.symbol, "provider": f.provider, "interval": f.interval,
                            "last_price_at": None if f.printed_at is None
                            else f.printed_at.isoformat(), "state": f.state}
                           for f in self.assets],
                "contestants": [c.to_json() for c in self.contestants],
                "percentiles_after_cycles": self.published_cycles,
                "storage": None if self.storage is None else asdict(self.storage)}


def missed_cycles(season: SeasonConfig, ledger: Ledger, attempts: Attempts, now: pd.Timestamp,
                  *, before: pd.Timestamp | None = None) -> list[pd.Timestamp]:
    """The cycles before the one due at ``now`` (or before ``before``, a time forced after
    it) that nobody played (no record, no failed attempt) and that can still be played: each
    is later than every recorded cycle. Playing a later cycle first would lose them for good
    (cycles are recorded in order)."""
    due = before if before is not None else season.due(now)
    if due is None:
        return []
    recorded = {k.cycle_at for k in ledger.records()}
    tried = set(attempts.cycles())
    last = max(recorded, default=None)
    return [t for t in season.times if t < due and (last is None or t > last)
            and t not in recorded and t not in tried]


def forfeit_missed(lake: Lake, season: SeasonConfig, ledger: Ledger, universe: Universe,
                   missed: Sequence[pd.Timestamp], reason: str) -> list[tuple[pd.Timestamp, str]]:
    """Record every contestant of the season's roster at each missed cycle as forfeited there,
    with ``reason`` (the operator skipped the cycle), in order: first the monitor window up to
    the cycle, then the forfeits (each book valued at the cycle's prices), then its daily
    report. Returns the (cycle, contestant) pairs recorded."""
    out = []
    for at in sorted(missed):
        names = list(season_roster(lake, at).names)
        monitor_day(lake, ledger, season.market, universe, names, at)
        prices = cycle_prices_at(lake, season.market, universe, at)
        out += [(at, n) for n in names if record_forfeit(ledger, at, n, reason, prices)]
        write_daily_report(lake, daily_report(ledger, lake, season.market, universe, at), at)
    return out


def season_status(lake: Lake, season: SeasonConfig, roster: Sequence[str], now: pd.Timestamp,
                  *, ledger: Ledger | None = None, attempts: Attempts | None = None,
                  rulers: Collection[str] = ()) -> SeasonStatus:
    """Every cycle of the season (done, partial, missed, due, upcoming), each asset's data
    freshness at ``now`` and each contestant's state: the contestants first, then ``rulers``
    (the house rules of the roster), each band in the roster's order."""
    ledger = ledger or Ledger(lake)
    attempts = attempts or Attempts(lake)
    by_cycle: dict[pd.Timestamp, set[str]] = {}
    for key in ledger.records():
        by_cycle.setdefault(key.cycle_at, set()).add(key.contestant)
    names = list(dict.fromkeys([*roster, *sorted({c for s in by_cycle.values() for c in s})]))
    due = season.due(now)
    last_done = max(by_cycle, default=None)
    tried = {t: attempts.of(t) for t in attempts.cycles()}
    playable = set(missed_cycles(season, ledger, attempts, now))
    cycles = []
    changes = roster_changes(lake)
    for t in season.times:
        got = by_cycle.get(t, set())
        expected = [n for n in roster if active(changes, n, t)]  # added or retired meanwhile
        failed = sorted(n for n in tried.get(t, {}) if n not in got)
        if failed and (last_done is None or t >= last_done):
            state = FAILED_RETRY
        elif got and got >= set(expected):
            state = DONE
        elif got:
            state = PARTIAL
        elif t > now:
            state = UPCOMING
        elif t == due:
            state = DUE
        else:
            state = MISSED_BACKFILL if t in playable else MISSED
        cycles.append(CycleState(t, state, tuple(sorted(got)),
                                 tuple(n for n in expected if n not in got), tuple(failed),
                                 {n: tried[t][n][-1].error for n in failed}))
    universe = season.universe()
    contestants = []
    for name in names:
        keys = ledger.records(name)
        last = keys[-1].cycle_at if keys else None
        status = ledger.record_rows("outcome", last, name)[0]["status"] if last is not None \
            else None
        equity = ledger.equity_before(name, now + pd.Timedelta(days=1))
        positions = ledger.portfolio(name).positions
        contestants.append(ContestantState(
            name, len(keys), last, None if status is None else str(status),
            None if equity is None else equity.get("equity"), tuple(sorted(positions)),
            tuple(f"{c.change} from {c.from_cycle}" for c in changes if c.contestant == name),
            RULER if name in rulers else CONTESTANT))
    contestants.sort(key=lambda c: c.role != CONTESTANT)  # stable: each band in roster order
    published, after = published_percentiles(lake)
    contestants = [dataclasses.replace(c, luck_percentile=published.get(c.contestant, (None,))[0],
                                       skill_percentile=published.get(c.contestant,
                                                                      (None, None))[1])
                   for c in contestants]
    return SeasonStatus(season, now, cycles, freshness(lake, season, universe, now), contestants,
                        closed_at(lake), last_boot(lake), after)


def published_percentiles(lake: Lake) -> tuple[dict[str, tuple[float | None, float | None]], int]:
    """Each contestant's luck and skill percentiles as the season's last publication holds them
    (``<lake>/marts/leaderboard.parquet``; a skill percentile is None where it has none - no
    position -, or the publication came before it), and the cycles that publication covers
    (0, and no percentile, before the first publication)."""
    path = lake.root / "marts" / "leaderboard.parquet"
    if not path.is_file():
        return {}, 0
    board = pd.read_parquet(path)
    skill = board["skill_percentile"] if "skill_percentile" in board else [None] * len(board)
    out = {}
    for name, luck, mine in zip(board["contestant"], board["zero_skill_percentile"], skill,
                                strict=True):
        out[str(name)] = (None if pd.isna(luck) else float(luck),
                          None if mine is None or pd.isna(mine) else float(mine))
    return out, int(board["cycles"].max()) if len(board) else 0
