"""The decision cycle: every contestant of the roster plays once at the cycle time, recorded
exactly once.

The steps, written once for the command line and the Prefect flow (which runs each as a task
through its :class:`~arena.core.runner.Runner`):

1. :func:`cycle_market` - the market of the cycle, built once; every contestant sees the same
   market and its own portfolio, folded from the ledger; the assets whose price is stale (their
   data stopped arriving, :attr:`arena.market.types.MarketData.stale`) are decided there too, so
   the briefing flags them and the engine refuses to trade them (``stale_price``) alike;
2. :func:`play` for every contestant, concurrently - its turn
   (:func:`arena.pipeline.turn.run_contestant_cycle`) runs inside
   :meth:`arena.ledger.store.Ledger.record_cycle`, so a re-run, or two runs at the same time,
   never execute its trades twice;
3. :func:`play` for the contestants that answer from the others' answers (a reverse:
   :func:`arena.agents.base.plays_after_others`), once the others are recorded: their briefing
   carries the others' first answers of this cycle and the standings before it.

One contestant's failure never stops the others. An operational failure (its model never
answered) records nothing and is reported as ``failed`` (:data:`arena.engine.outcomes.FAILED`),
so a later run of the cycle can play it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace

from arena.agents.base import Contestant, plays_after_others
from arena.core.lazy import lazy_import
from arena.core.runner import INLINE, Runner, step
from arena.core.universe import Universe
from arena.data.errors import DamagedFile
from arena.data.lake import Lake
from arena.engine.outcomes import FAILED
from arena.engine.rules import ARENA_RULES, CycleState, Rules
from arena.ledger.records import ANSWER, CycleRecord, RecordStatus, equity_snapshot
from arena.ledger.store import Ledger, LedgerBusy, LedgerError
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.market.types import MarketData
from arena.pipeline.turn import ContestantCycle, ContestantFailed, Round, run_contestant_cycle

pd = lazy_import("pandas")

log = logging.getLogger(__name__)
Slot = Callable[[Contestant], AbstractContextManager[object]]  # held while a contestant plays


def no_slot(contestant: Contestant) -> AbstractContextManager[object]:
    return nullcontext()


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

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def to_record(cycle: ContestantCycle, briefing_prompt: str, prices: Mapping[str, float],
              at: pd.Timestamp) -> CycleRecord:
    """The ledger record of a played cycle."""
    rounds: Sequence[Round] = cycle.rounds
    last = rounds[-1].reply
    read = [r for r in rounds if r.parsed is not None and r.parsed.ok]
    return CycleRecord(
        contestant=cycle.contestant, cycle_at=at, status=cycle.status,
        prompt=briefing_prompt, messages=tuple(last.transcript),
        responses={r.name: r.reply.text for r in rounds},
        decisions={r.name: [d.as_json() for d in r.parsed.answer.decisions] for r in read},
        rejections={r.name: list(r.result.rejections) for r in rounds if r.result},
        fills={r.name: list(r.result.fills) for r in rounds if r.result},
        levels={r.name: list(r.result.levels) for r in rounds if r.result},
        calls=tuple(c for r in rounds for c in r.reply.calls),
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


def _summary(name: str, recorded: RecordStatus, ledger: Ledger, at: pd.Timestamp) -> Outcome:
    """The cycle report line of a recorded (cycle, contestant), read back from its record."""
    [outcome] = ledger.record_rows("outcome", at, name)
    calls = ledger.record_rows("calls", at, name)
    costs = [c["cost_usd"] for c in calls if c["cost_usd"] is not None]
    errors = [e for e in outcome["errors"] or [] if e]
    return Outcome(
        name, str(recorded), str(outcome["status"]), int(outcome["n_fills"]),
        int(outcome["n_rejections"]), sum(c["tokens_in"] or 0 for c in calls),
        sum(c["tokens_out"] or 0 for c in calls), float(sum(costs)) if costs else None,
        max((c["latency_s"] for c in calls), default=0.0), "; ".join(errors) or None)


def earlier_answers(ledger: Ledger, at: pd.Timestamp, names: Sequence[str]) -> dict[str, str]:
    """The first answers recorded at ``at`` by ``names`` (those without a record or an answer
    are left out)."""
    out = {}
    for name in names:
        try:
            text = ledger.responses(name, at).get(ANSWER)
        except KeyError:  # no record this cycle
            continue
        if text is not None:
            out[name] = text
    return out


def standings(ledger: Ledger, at: pd.Timestamp, names: Sequence[str]) -> dict[str, float]:
    """Each of ``names``' equity at its last recorded cycle before ``at`` (none yet, or not
    valued: left out)."""
    out = {}
    for name in names:
        row = ledger.equity_before(name, at)
        if row is not None and not pd.isna(row["equity"]):
            out[name] = float(row["equity"])
    return out


@step("play-{contestant.name}")
def play(contestant: Contestant, market: MarketData, ledger: Ledger, universe: Universe,
         at: pd.Timestamp, *, rules: Rules = ARENA_RULES, others: Sequence[str] = (),
         slot: Slot = no_slot) -> Outcome:
    """Play and record one contestant's cycle (at most once per cycle, however often called),
    holding ``slot(contestant)`` meanwhile; ``others``: the contestants whose answers a follower
    sees. A failure becomes its report line."""
    try:
        with slot(contestant):
            return _play(contestant, market, ledger, universe, at, rules, others)
    except ContestantFailed as exc:  # the model never answered: nothing happened, nothing recorded
        log.warning("contestant %s failed at %s (nothing recorded): %s", contestant.name, at,
                    exc.reply.error)
        calls = exc.reply.calls
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0,
                       sum(c.tokens_in or 0 for c in calls), sum(c.tokens_out or 0 for c in calls),
                       None, max((c.latency_s for c in calls), default=0.0), exc.reply.error)
    except DamagedFile as exc:  # a file of its history cannot be read: its book cannot be folded
        log.error("contestant %s at %s: %s (nothing recorded)", contestant.name, at, exc)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0, str(exc))
    except LedgerError as exc:  # refused (a cycle behind its history, a broken chain, a secret)
        log.error("contestant %s at %s: %s", contestant.name, at, exc)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0, str(exc),
                       transient=isinstance(exc, LedgerBusy))
    except Exception as exc:
        log.exception("contestant %s failed at %s", contestant.name, at)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0,
                       f"{type(exc).__name__}: {exc}")


def _play(contestant: Contestant, market: MarketData, ledger: Ledger, universe: Universe,
          at: pd.Timestamp, rules: Rules, others: Sequence[str]) -> Outcome:
    def build() -> CycleRecord:
        state = CycleState(ledger.portfolio(contestant.name), at, stale=market.untradeable)
        briefing = build_briefing(market, contestant.name,
                                  portfolio_snapshot(state, market.prices, stale=market.stale))
        if plays_after_others(contestant):
            briefing = replace(briefing, earlier=earlier_answers(ledger, at, others),
                               standings=standings(ledger, at, others))
        cycle = run_contestant_cycle(contestant, briefing, state, market.prices, universe,
                                     rules=rules)
        return to_record(cycle, briefing.prompt_text, market.prices, at)

    recorded = ledger.record_cycle(at, contestant.name, build)
    return _summary(contestant.name, recorded, ledger, at)


@step("market")
def cycle_market(lake: Lake, provider: str, universe: Universe,
                 contestants: Sequence[Contestant], at: pd.Timestamp, ledger: Ledger) -> MarketData:
    """The cycle's market, with full depth for everything any contestant holds."""
    held: set[str] = set()
    for c in contestants:
        try:
            held |= {s for s in ledger.portfolio(c.name).positions
                     if s in universe}  # a symbol dropped from the universe has no market
        except DamagedFile:  # its own step refuses it, naming the file
            continue
    return build_market(lake, provider, universe, at, held=sorted(held))


def secret_names(contestants: Sequence[Contestant]) -> set[str]:
    """The environment variables holding the contestants' keys (never to be written)."""
    return {name for c in contestants
            if (name := getattr(getattr(c, "spec", None), "api_key_env", None))}


def run_cycle(lake: Lake, provider: str, universe: Universe, contestants: Sequence[Contestant],
              at: pd.Timestamp, *, ledger: Ledger | None = None, runner: Runner = INLINE,
              rules: Rules = ARENA_RULES, slot: Slot = no_slot) -> list[Outcome]:
    """The decision cycle at ``at`` (a UTC timestamp) for every contestant (see the module
    docstring); one report line per contestant, first the ones that answer themselves."""
    ledger = ledger or Ledger(lake, secret_names=secret_names(contestants))
    market = runner.run(cycle_market, lake, provider, universe, contestants, at, ledger)
    first = [c for c in contestants if not plays_after_others(c)]
    followers = [c for c in contestants if plays_after_others(c)]
    outcomes = runner.map(play, first, market, ledger, universe, at, rules=rules, slot=slot)
    names = tuple(c.name for c in first)
    return outcomes + [runner.run(play, c, market, ledger, universe, at, rules=rules,
                                  others=names, slot=slot) for c in followers]
