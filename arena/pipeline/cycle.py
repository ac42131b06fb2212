"""The decision cycle: every contestant of the roster plays once at the cycle time, recorded
exactly once.

The steps, written once for the command line and the Prefect flow (which runs each as a task
through its :class:`~arena.core.runner.Runner`):

1. :func:`cycle_market` - the market of the cycle, built once; every contestant sees the same
   market and its own portfolio, folded from the ledger; the assets whose price is stale (their
   data stopped arriving, :attr:`arena.market.types.MarketData.stale`) are decided there too, so
   the briefing flags them and the engine refuses to trade them (``stale_price``) alike;
2. :func:`play_turn` for every contestant, all at once (a cycle lasts as long as its slowest model
   call; :class:`ProviderSlots` bounds the calls of one model provider when the season's
   ``$ARENA_PROVIDER_CONCURRENCY`` says so) - each turn
   (:func:`arena.pipeline.turn.take_turn`) runs inside
   :meth:`arena.ledger.store.Ledger.record_cycle`, so a re-run, or two runs at the same time,
   never execute its trades twice;
3. :func:`play_turn` for the contestants that answer from the others' answers (a reverse:
   :func:`arena.agents.base.plays_after_others`), once the others are recorded: their briefing
   carries what the others' books executed this cycle, both rounds (:class:`ExecutedDecisions`),
   and the standings before it.

Every briefing carries the cycle's charts (:class:`CycleCharts`): the closed bars of any asset of
the universe at the cycle time, for a contestant whose tools look beyond its briefing.

One contestant's failure never stops the others. An operational failure (its model never
answered) records nothing and is reported as ``failed`` (:data:`arena.engine.outcomes.FAILED`),
so a later run of the cycle can play it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from arena.agents.base import Contestant, KeysStayBehind, plays_after_others
from arena.agents.llm import warm_calls
from arena.agents.roster import model_provider
from arena.core.environment import setting
from arena.core.runner import INLINE, Runner, steady_heap, step
from arena.core.types import Charts
from arena.core.universe import Universe
from arena.data.errors import DamagedFile
from arena.data.lake import Lake
from arena.engine.outcomes import FAILED
from arena.engine.rules import ARENA_RULES, EXECUTION_ORDER, CycleState, Rules
from arena.ledger.records import ANSWER, ROUNDS, CycleRecord, RecordStatus, equity_snapshot
from arena.ledger.store import Ledger, LedgerBusy, LedgerError
from arena.market.asof import Providers, closed_bars, provider_of
from arena.market.blind import Blinding, BlindingError
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.market.sections import DEFAULT_LAYOUT
from arena.market.types import MarketData
from arena.pipeline.blind_turn import blind_briefing, blind_turn
from arena.pipeline.season_config import find_season
from arena.pipeline.turn import ContestantCycle, ContestantFailed, Round, take_turn
from arena.reporting.roles import CONTESTANT, recorded_role

log = logging.getLogger(__name__)
Slot = Callable[[Contestant], AbstractContextManager[object]]  # held while a contestant plays


def no_slot(contestant: Contestant) -> AbstractContextManager[object]:
    return nullcontext()


class ProviderSlots:
    """The :data:`Slot` of this process: at most ``limit`` contestants of one model provider
    (:func:`arena.agents.roster.model_provider`) play at once, the others wait for a slot;
    contestants of other providers, or without a model, never wait. ``None``: no limit."""

    def __init__(self, limit: int | None) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"a provider needs at least one slot, not {limit}")
        self.limit = limit
        self._slots: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    def __call__(self, contestant: Contestant) -> AbstractContextManager[object]:
        provider = model_provider(getattr(contestant, "spec", None))
        if self.limit is None or provider is None:
            return nullcontext()
        with self._lock:
            slot = self._slots.setdefault(provider, threading.BoundedSemaphore(self.limit))
        return slot


def provider_slots() -> Slot:
    """The slot of the command line and a replay: ``$ARENA_PROVIDER_CONCURRENCY`` calls of one
    provider at once (unset: no limit)."""
    return ProviderSlots(setting("provider_concurrency"))


@dataclass(frozen=True)
class Outcome:
    """One contestant's line of the cycle report."""

    contestant: str
    recorded: str  # "recorded", "already recorded" or "not recorded"
    status: str  # an outcome of arena.engine.outcomes, or "failed" (not recorded)
    fills: int
    rejections: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None
    latency_s: float
    error: str | None = None
    transient: bool = True  # a failure that playing again may mend (not a refused record)
    queue_s: float = 0.0  # how long the turn waited for a thread and its provider's slot

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def to_record(cycle: ContestantCycle, briefing_prompt: str, prices: Mapping[str, float],
              at: pd.Timestamp, queue_s: float = 0.0) -> CycleRecord:
    """The ledger record of a played cycle; ``queue_s``: how long its turn waited to start,
    recorded on its first call (the later calls of a turn hold its thread and slot)."""
    rounds: Sequence[Round] = cycle.rounds
    last = rounds[-1].reply
    read = [r for r in rounds if r.parsed is not None and r.parsed.ok]
    calls = [c for r in rounds for c in r.reply.calls]
    if calls:
        calls[0] = replace(calls[0], queue_s=round(queue_s, 6))
    return CycleRecord(
        contestant=cycle.contestant, cycle_at=at, status=cycle.status,
        prompt=briefing_prompt, messages=tuple(last.transcript),
        responses={r.name: r.reply.text for r in rounds},
        decisions={r.name: [d.as_json() for d in r.parsed.answer.decisions] for r in read},
        rejections={r.name: list(r.result.rejections) for r in rounds if r.result},
        fills={r.name: list(r.result.fills) for r in rounds if r.result},
        levels={r.name: list(r.result.levels) for r in rounds if r.result},
        calls=tuple(calls),
        equity=equity_snapshot(cycle.state.portfolio, prices),
        parse_errors={r.name: r.parsed.reason for r in rounds
                      if r.parsed is not None and not r.parsed.ok},
        errors=tuple(r.reply.error for r in rounds if r.reply.error),
        extras={r.name: dict(r.reply.extra) for r in rounds if r.reply.extra},
        notes={r.name: notes for r in read if (notes := _notes(r))})


def _notes(r: Round) -> list[str]:
    """What the parser noted of a read round, unknown fields included."""
    notes = list(r.parsed.notes)
    if r.parsed.ignored_fields:
        notes.append(f"unknown fields ignored: {', '.join(r.parsed.ignored_fields)}")
    return notes


def recorded_outcome(name: str, recorded: RecordStatus, ledger: Ledger,
                     at: pd.Timestamp) -> Outcome:
    """The cycle report line of a recorded (cycle, contestant), read back from its record."""
    [outcome] = ledger.record_rows("outcome", at, name)
    calls = ledger.record_rows("calls", at, name)
    costs = [c["cost_usd"] for c in calls if c["cost_usd"] is not None]
    errors = [e for e in outcome["errors"] or [] if e]
    return Outcome(
        name, str(recorded), str(outcome["status"]), int(outcome["n_fills"]),
        int(outcome["n_rejections"]), sum(c["tokens_in"] or 0 for c in calls),
        sum(c["tokens_out"] or 0 for c in calls), float(sum(costs)) if costs else None,
        max((c["latency_s"] for c in calls), default=0.0), "; ".join(errors) or None,
        queue_s=float(calls[0].get("queue_s") or 0.0) if calls else 0.0)


def executed(ledger: Ledger, at: pd.Timestamp, name: str) -> list[dict[str, Any]] | None:
    """The decisions ``name``'s book executed at ``at``: those of either round with a fill or a
    level move (a hold that changed nothing is left out), each a JSON object of the contract with
    its ``round``, in the order the engine applied them (the answer's, then the repair's; in a
    round closes, holds, adds, opens, each group in the order sent). ``None``: no record at ``at``,
    or one without an answer (skipped)."""
    try:
        if ledger.responses(name, at).get(ANSWER) is None:
            return None
    except KeyError:  # no record this cycle
        return None
    acted = {(r["round"], r["decision_index"])
             for table in ("fills", "levels") for r in ledger.record_rows(table, at, name)}
    rows = sorted((r for r in ledger.record_rows("decisions", at, name)
                   if (r["round"], r["decision_index"]) in acted),
                  key=lambda r: (ROUNDS.index(r["round"]), EXECUTION_ORDER.get(r["action"], -1),
                                 r["decision_index"]))
    return [{**json.loads(r["decision"]), "round": r["round"]} for r in rows]


class ExecutedDecisions(Mapping[str, list[dict[str, Any]]]):
    """:func:`executed` of each of ``names`` at ``at`` that has one, read from the ledger when
    first asked for (a reverse reads one of them, not the whole roster's records)."""

    def __init__(self, ledger: Ledger, at: pd.Timestamp, names: Sequence[str]) -> None:
        self._ledger, self._at, self._names = ledger, at, tuple(names)
        self._read: dict[str, list[dict[str, Any]] | None] = {}

    def _get(self, name: str) -> list[dict[str, Any]] | None:
        if name not in self._read:
            self._read[name] = (executed(self._ledger, self._at, name)
                                if name in self._names else None)
        return self._read[name]

    def __getitem__(self, name: str) -> list[dict[str, Any]]:
        found = self._get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __iter__(self) -> Iterator[str]:
        return (name for name in self._names if self._get(name) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)


@dataclass(frozen=True)
class CycleCharts:
    """The cycle's :class:`~arena.core.types.Charts`: the closed bars of any asset of
    ``universe`` at ``at``, read from ``provider``'s partitions of ``lake`` when asked for
    (:func:`arena.market.asof.closed_bars`: a bar still forming at ``at`` is never returned)."""

    lake: Lake
    provider: Providers
    universe: Universe
    at: pd.Timestamp

    def candles(self, symbol: str, interval: str, count: int) -> pd.DataFrame:
        asset = self.universe[symbol]
        return closed_bars(self.lake, provider_of(self.provider, asset), asset, interval, self.at,
                           limit=count)


def standings(ledger: Ledger, at: pd.Timestamp, names: Sequence[str]) -> dict[str, float]:
    """Each contestant of ``names``' equity at its last recorded cycle before ``at`` (none yet,
    or not valued: left out). The house rules among them are left out too: they play as
    rulers, the yardstick, never "the worst" a reverse mirrors (their role read from their
    records, as every report reads it: :func:`arena.reporting.roles.recorded_role`)."""
    out = {}
    for name in names:
        row = ledger.equity_before(name, at)
        if row is not None and not pd.isna(row["equity"]) and \
                recorded_role(ledger, name, at) == CONTESTANT:
            out[name] = float(row["equity"])
    return out


@step("play-{contestant.name}")
def play_turn(contestant: Contestant, market: MarketData, ledger: Ledger, universe: Universe,
         at: pd.Timestamp, *, rules: Rules = ARENA_RULES, others: Sequence[str] = (),
         slot: Slot = no_slot, queued_at: float | None = None,
         candles: str = DEFAULT_LAYOUT, charts: Charts | None = None,
         blind: BlindCycle | None = None) -> Outcome:
    """Play and record one contestant's cycle (at most once per cycle, however often called),
    holding ``slot(contestant)`` meanwhile; ``others``: the contestants whose answers a follower
    sees; ``queued_at``: when the fan-out asked for the turn (Unix seconds: the turn may run in
    another process), so the time it waited for a thread and its slot is recorded beside its
    calls' latency; ``candles``: the season's candle layout; ``charts``: what its briefing's
    charts read (:class:`CycleCharts`); ``blind``: the cycle of a blind season
    (:class:`BlindCycle`). A failure becomes its report line."""
    queue_s = 0.0
    try:
        with slot(contestant):
            queue_s = 0.0 if queued_at is None else max(0.0, time.time() - queued_at)
            return record_turn(contestant, market, ledger, universe, at, rules, others, queue_s,
                               candles, charts, blind)
    except ContestantFailed as exc:  # the model never answered: nothing happened, nothing recorded
        log.warning("contestant %s failed at %s (nothing recorded): %s", contestant.name, at,
                    exc.reply.error)
        calls = exc.reply.calls
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0,
                       sum(c.tokens_in or 0 for c in calls), sum(c.tokens_out or 0 for c in calls),
                       None, max((c.latency_s for c in calls), default=0.0), exc.reply.error,
                       queue_s=queue_s)
    except DamagedFile as exc:  # a file of its history cannot be read: its book cannot be folded
        log.error("contestant %s at %s: %s (nothing recorded)", contestant.name, at, exc)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0, str(exc),
                       queue_s=queue_s)
    except LedgerError as exc:  # refused (a cycle behind its history, a broken chain, a secret)
        log.error("contestant %s at %s: %s", contestant.name, at, exc)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0, str(exc),
                       transient=isinstance(exc, LedgerBusy), queue_s=queue_s)
    except Exception as exc:
        log.exception("contestant %s failed at %s", contestant.name, at)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0,
                       f"{type(exc).__name__}: {exc}", queue_s=queue_s)


def record_turn(contestant: Contestant, market: MarketData, ledger: Ledger, universe: Universe,
                at: pd.Timestamp, rules: Rules, others: Sequence[str], queue_s: float,
                candles: str = DEFAULT_LAYOUT, charts: Charts | None = None,
                blind: BlindCycle | None = None) -> Outcome:
    def build() -> CycleRecord:
        state = CycleState(ledger.portfolio(contestant.name), at, stale=market.untradeable)
        snapshot = portfolio_snapshot(state, market.prices, stale=market.stale)
        follows = plays_after_others(contestant)
        earlier = ExecutedDecisions(ledger, at, others) if follows else None
        ranks = standings(ledger, at, others) if follows else None
        if blind is not None:
            briefing = blind_briefing(blind.market, contestant.name, snapshot, blind.blinding,
                                      rules=rules, candles=candles, charts=charts,
                                      earlier=earlier, standings=ranks)
            cycle = blind_turn(contestant, briefing, state, market.prices, universe,
                               blind.blinding, rules=rules)
            return to_record(cycle, briefing.prompt_text, market.prices, at, queue_s)
        briefing = build_briefing(market, contestant.name, snapshot, rules=rules,
                                  candles=candles)
        if charts is not None:
            briefing = replace(briefing, charts=charts)
        if follows:
            briefing = replace(briefing, earlier=earlier, standings=ranks)
        cycle = take_turn(contestant, briefing, state, market.prices, universe, rules=rules)
        return to_record(cycle, briefing.prompt_text, market.prices, at, queue_s)

    recorded = ledger.record_cycle(at, contestant.name, build)
    return recorded_outcome(contestant.name, recorded, ledger, at)


@step("market")
def cycle_market(lake: Lake, provider: str, universe: Universe,
                 contestants: Sequence[Contestant], at: pd.Timestamp, ledger: Ledger) -> MarketData:
    """The cycle's market, with full depth for everything any contestant holds."""
    held: set[str] = set()
    with ledger.reading():  # the roster's books from one listing of each kind
        for c in contestants:
            try:
                held |= {s for s in ledger.portfolio(c.name).positions
                         if s in universe}  # a symbol dropped from the universe has no market
            except DamagedFile:  # its own step refuses it, naming the file
                continue
    return build_market(lake, provider, universe, at, held=sorted(held))


@dataclass(frozen=True)
class BlindCycle:
    """A blind season's cycle: its blinding (:class:`arena.market.blind.Blinding`) and the
    cycle's market under it, made once for every contestant."""

    blinding: Blinding
    market: MarketData


def secret_names(contestants: Sequence[Contestant]) -> set[str]:
    """The environment variables holding the contestants' keys (never to be written)."""
    return {name for c in contestants
            if (name := getattr(getattr(c, "spec", None), "api_key_env", None))}


def run_cycle(lake: Lake, provider: str, universe: Universe, contestants: Sequence[Contestant],
              at: pd.Timestamp, *, ledger: Ledger | None = None, runner: Runner = INLINE,
              rules: Rules = ARENA_RULES, slot: Slot | None = None,
              candles: str = DEFAULT_LAYOUT, blinding: Blinding | None = None
              ) -> list[Outcome]:
    """The decision cycle at ``at`` (a UTC timestamp) for every contestant (see the module
    docstring); one report line per contestant, first the ones that answer themselves.
    ``slot``: what a contestant holds while it plays (default :func:`provider_slots`);
    ``candles``: the season's candle layout (the prompts show it); ``blinding``: a blind
    season's (:mod:`arena.market.blind`): every contestant plays in its blind world, and the
    lake of a blind season refuses a cycle without it (:class:`BlindingError`)."""
    if blinding is None and (season := find_season(lake)) is not None and season.blind:
        raise BlindingError(f"season {season.id!r} is blind: its cycle is played under its "
                            "blinding (season_blinding), never open")
    ledger = ledger or Ledger(lake, secret_names=secret_names(contestants))
    slot = slot or provider_slots()
    market = runner.run(cycle_market, lake, provider, universe, contestants, at, ledger)
    charts = CycleCharts(lake, provider, universe, at)
    blind = None if blinding is None else BlindCycle(blinding, blinding.market(market))
    first = [c for c in contestants if not plays_after_others(c)]
    followers = [c for c in contestants if plays_after_others(c)]
    if not getattr(runner, "distributes", False) and any(isinstance(c, KeysStayBehind)
                                                          for c in contestants):
        warm_calls()  # the turns run in this process: their calls leave together
    with steady_heap():  # no collector's pass over the whole process as the calls leave
        outcomes = runner.map(play_turn, first, market, ledger, universe, at, rules=rules,
                              slot=slot, queued_at=time.time(), candles=candles,
                              charts=charts, blind=blind)
    names = tuple(c.name for c in first)
    return outcomes + [runner.run(play_turn, c, market, ledger, universe, at, rules=rules,
                                  others=names, slot=slot, queued_at=time.time(),
                                  candles=candles, charts=charts, blind=blind)
                       for c in followers]
