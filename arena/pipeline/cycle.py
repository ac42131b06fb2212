"""One daily decision cycle for the whole roster, recorded exactly once per contestant.

Every contestant gets the same market (one :func:`arena.market.briefing.build_market` per cycle) and
its own portfolio, folded from the ledger; its round trip (:func:`arena.pipeline.turn.run_contestant_cycle`)
runs inside :meth:`arena.ledger.store.Ledger.record_cycle`, so a cycle re-run, or two runs at the same
time, never execute a contestant's trades twice. Contestants play in parallel (a bounded pool);
reverse contestants play after the one they mirror. One contestant's failure never stops the
others. An operational failure (its model never answered) records nothing and is reported as
``failed`` (:data:`arena.engine.outcomes.FAILED`), so a later run of the cycle can play it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from arena.agents.base import Contestant
from arena.agents.factory import ReverseContestant
from arena.agents.roster import MIRROR_WORST
from arena.core.sessions import utc
from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.engine.outcomes import FAILED
from arena.engine.rules import ARENA_RULES, CycleState, Rules
from arena.ledger.store import (
    ANSWER,
    CycleRecord,
    Ledger,
    LedgerError,
    RecordStatus,
    equity_snapshot,
)
from arena.market.briefing import build_briefing, build_market, portfolio_snapshot
from arena.market.types import MarketData
from arena.pipeline.turn import ContestantCycle, ContestantFailed, Round, run_contestant_cycle

log = logging.getLogger(__name__)


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

    def as_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


def to_record(cycle: ContestantCycle, briefing_prompt: str, prices: Mapping[str, float],
              at: object) -> CycleRecord:
    """The ledger record of a played cycle."""
    rounds: Sequence[Round] = cycle.rounds
    last = rounds[-1].reply
    read = [r for r in rounds if r.parsed is not None and r.parsed.ok]
    return CycleRecord(
        contestant=cycle.contestant, cycle_at=utc(at), status=cycle.status,
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


def _summary(name: str, recorded: RecordStatus, ledger: Ledger, at: object) -> Outcome:
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


def play(contestant: Contestant, market: MarketData, ledger: Ledger, universe: Universe,
         at: object, *, rules: Rules = ARENA_RULES,
         source: Callable[[], str | None] | None = None) -> Outcome:
    """Play and record one contestant's cycle (at most once per cycle, however often called)."""
    at_ts = utc(at)

    def build() -> CycleRecord:
        state = CycleState(ledger.portfolio(contestant.name), at_ts)
        briefing = build_briefing(market, contestant.name, portfolio_snapshot(state, market.prices))
        player = contestant
        if isinstance(contestant, ReverseContestant):
            mirrored = contestant.answer_from(briefing, source() if source else None)
            player = _Fixed(contestant, mirrored)
        cycle = run_contestant_cycle(player, briefing, state, market.prices, universe, rules=rules)
        return to_record(cycle, briefing.prompt_text, market.prices, at_ts)

    recorded = ledger.record_cycle(at_ts, contestant.name, build)
    return _summary(contestant.name, recorded, ledger, at_ts)


class _Fixed:
    """A contestant whose first answer is already known (a reverse's mirror)."""

    def __init__(self, inner: ReverseContestant, reply) -> None:
        self.inner, self.reply = inner, reply
        self.name, self.kind = inner.name, inner.kind

    def answer(self, briefing):
        return self.reply

    def repair(self, briefing, previous, follow_up):
        return self.inner.repair(briefing, previous, follow_up)


def cycle_market(lake: Lake, provider: str, universe: Universe,
                 contestants: Sequence[Contestant], at: object, ledger: Ledger) -> MarketData:
    """The cycle's market, with full depth for everything any contestant holds."""
    held = sorted({s for c in contestants for s in ledger.portfolio(c.name).positions
                   if s in universe})  # a symbol dropped from the universe has no market
    return build_market(lake, provider, universe, utc(at), held=held)


def worst_performer(ledger: Ledger, at: object, candidates: Sequence[str]) -> str | None:
    """Among ``candidates``, the contestant with the lowest equity at its last cycle before
    ``at`` (ties by name); ``None`` before anyone has a recorded cycle."""
    equity = ledger.table("equity")
    if equity.empty:
        return None
    equity = equity[(equity["cycle_at"] < utc(at)) & equity["contestant"].isin(list(candidates))]
    latest = equity.sort_values("cycle_at").groupby("contestant").tail(1).dropna(subset=["equity"])
    if latest.empty:
        return None
    return str(latest.sort_values(["equity", "contestant"]).iloc[0]["contestant"])


def play_safely(contestant: Contestant, market: MarketData, ledger: Ledger, universe: Universe,
                at: object, *, rules: Rules = ARENA_RULES,
                candidates: Sequence[str] = ()) -> Outcome:
    """:func:`play`, with a reverse fed its target's answer (``mirror_of: worst``: the worst of
    ``candidates`` so far); a failure becomes a report line."""
    source = None
    if isinstance(contestant, ReverseContestant):
        def source() -> str | None:
            target = contestant.mirror_of
            if target == MIRROR_WORST:
                target = worst_performer(ledger, at, candidates)
                if target is None:
                    return None
            try:
                return ledger.responses(target, utc(at)).get(ANSWER)
            except KeyError:  # the target has no record this cycle: nothing to mirror
                return None
    try:
        return play(contestant, market, ledger, universe, at, rules=rules, source=source)
    except ContestantFailed as exc:  # the model never answered: nothing happened, nothing recorded
        log.warning("contestant %s failed at %s (nothing recorded): %s", contestant.name, at,
                    exc.reply.error)
        calls = exc.reply.calls
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0,
                       sum(c.tokens_in or 0 for c in calls), sum(c.tokens_out or 0 for c in calls),
                       None, max((c.latency_s for c in calls), default=0.0), exc.reply.error)
    except LedgerError as exc:  # refused before anything ran (e.g. a cycle behind its history)
        log.error("contestant %s at %s: %s", contestant.name, at, exc)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0, str(exc))
    except Exception as exc:
        log.exception("contestant %s failed at %s", contestant.name, at)
        return Outcome(contestant.name, "not recorded", FAILED, 0, 0, 0, 0, None, 0.0,
                       f"{type(exc).__name__}: {exc}")


def secret_names(contestants: Sequence[Contestant]) -> set[str]:
    """The environment variables holding the contestants' keys (never to be written)."""
    return {name for c in contestants
            if (name := getattr(getattr(c, "spec", None), "api_key_env", None))}


def split_mirrors(contestants: Sequence[Contestant]) -> tuple[list[Contestant], list[Contestant]]:
    """(contestants that answer themselves, reverse contestants that play after them)."""
    return ([c for c in contestants if not isinstance(c, ReverseContestant)],
            [c for c in contestants if isinstance(c, ReverseContestant)])


def run_cycle(lake: Lake, provider: str, universe: Universe, contestants: Sequence[Contestant],
              at: object, *, ledger: Ledger | None = None, workers: int = 4,
              rules: Rules = ARENA_RULES) -> list[Outcome]:
    """The daily cycle at ``at`` for every contestant, in-process (the Prefect flow runs the same
    steps as tasks)."""
    ledger = ledger or Ledger(lake, secret_names=secret_names(contestants))
    market = cycle_market(lake, provider, universe, contestants, at, ledger)
    first, mirrors = split_mirrors(contestants)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        outcomes = list(pool.map(lambda c: play_safely(c, market, ledger, universe, at,
                                                       rules=rules), first))
    names = [c.name for c in first]
    return outcomes + [play_safely(m, market, ledger, universe, at, rules=rules, candidates=names)
                       for m in mirrors]
