"""One contestant's turn in a decision cycle: answer, parse, validate, execute, one repair round.

The same round trip for every contestant kind (SPEC §2 steps 8-9):

1. the contestant answers the briefing;
2. the engine parses the answer and executes what passes, at the cycle prices;
3. if the answer did not parse (an empty answer included), or any decision was rejected, exactly
   one follow-up goes back with the reasons, what already executed and the budget left (the
   engine's repair context); the rejected answer is repeated in that conversation once, cut to
   :data:`arena.engine.repair.ECHO_CHARS` characters;
4. the repair answer is validated and executed under the same cycle state (one new position per
   cycle, repair included). A second failure stays failed: there is no third call.

The outcome (:mod:`arena.engine.outcomes`) is ``traded`` or ``no_trade`` once any answer was
read, ``forfeited`` when none could be, ``skipped`` when the contestant did not play. When the
first call never reached the model (an operational failure) there is nothing to record:
:class:`ContestantFailed` is raised, and the caller records nothing. A repair call that fails
keeps what the first answer executed.

Pure: no I/O beyond the contestant's own calls; the caller records the outcome in the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from arena.agents.base import Contestant, Reply
from arena.core.types import Briefing, Message
from arena.core.universe import Universe
from arena.engine.broker import CycleResult, execute_answer
from arena.engine.contract import ParsedAnswer, ParseFailure, parse_answer
from arena.engine.outcomes import CycleOutcome, played
from arena.engine.portfolio import Fill
from arena.engine.repair import RepairContext, echo, repair_context
from arena.engine.rules import ARENA_RULES, CycleState, Rejection, Rules
from arena.market.briefing import repair_prompt


class ContestantFailed(RuntimeError):
    """The contestant's first call never produced an answer (an operational failure): nothing
    happened in the game, so nothing is to be recorded. ``reply`` carries the error and calls."""

    def __init__(self, contestant: str, reply: Reply) -> None:
        super().__init__(f"{contestant}: {reply.error or 'no answer'}")
        self.contestant, self.reply = contestant, reply


@dataclass(frozen=True)
class Round:
    """One exchange: ``"answer"`` or ``"repair"``."""

    name: str
    reply: Reply
    parsed: ParsedAnswer | ParseFailure | None
    result: CycleResult | None
    follow_up: str | None = None  # the repair prompt that led to this round

    @property
    def ok(self) -> bool:
        """Parsed, and every decision accepted."""
        return self.result is not None and not self.result.rejections


@dataclass(frozen=True)
class ContestantCycle:
    """Everything one contestant's cycle produced, for the ledger and the report."""

    contestant: str
    status: CycleOutcome
    rounds: tuple[Round, ...]
    state: CycleState
    repair: RepairContext | None

    @property
    def fills(self) -> tuple[Fill, ...]:
        return tuple(f for r in self.rounds if r.result for f in r.result.fills)

    @property
    def rejections(self) -> tuple[tuple[str, Rejection], ...]:
        return tuple((r.name, x) for r in self.rounds if r.result for x in r.result.rejections)

    @property
    def repaired(self) -> bool:
        return len(self.rounds) > 1


def default_follow_up(context: RepairContext) -> str:
    """The repair follow-up: the ``repair`` prompt template around the engine's facts."""
    return repair_prompt(context.render())


def _judge(reply: Reply, state: CycleState, prices: Mapping[str, float], universe: Universe,
           rules: Rules) -> tuple[ParsedAnswer | ParseFailure | None, CycleResult | None]:
    if reply.text is None:
        return None, None
    parsed = parse_answer(reply.text)
    if not parsed.ok:
        return parsed, None
    return parsed, execute_answer(state, parsed.answer, prices, universe, rules)


def echoed(reply: Reply) -> Reply:
    """``reply`` as the repair conversation continues it: its answer, the last assistant message
    of the transcript, cut by :func:`arena.engine.repair.echo`."""
    *before, last = reply.transcript or (None,)
    if reply.text is None or last is None or last.role != "assistant":
        return reply
    cut = echo(last.content)
    return reply if cut == last.content else replace(
        reply, transcript=(*before, Message(last.role, cut)))


def take_turn(contestant: Contestant, briefing: Briefing, state: CycleState,
                         prices: Mapping[str, float], universe: Universe, *,
                         rules: Rules = ARENA_RULES,
                         follow_up: Callable[[RepairContext], str] = default_follow_up
                         ) -> ContestantCycle:
    """Run the round trip for one contestant (see the module docstring)."""
    first = contestant.answer(briefing)
    if first.skipped:
        return ContestantCycle(contestant.name, CycleOutcome.SKIPPED,
                               (Round("answer", first, None, None),), state, None)
    if first.text is None:
        raise ContestantFailed(contestant.name, first)
    parsed, result = _judge(first, state, prices, universe, rules)
    rounds = [Round("answer", first, parsed, result)]
    if result is not None:
        state = result.state
    context = repair_context(state, prices, result=result, rules=rules,
                             parse_error=None if parsed.ok else parsed.reason)
    if context.needed:
        text = follow_up(context)
        second = contestant.repair(briefing, echoed(first), text)
        parsed2, result2 = _judge(second, state, prices, universe, rules)
        rounds.append(Round("repair", second, parsed2, result2, follow_up=text))
        if result2 is not None:
            state = result2.state
    read = [r for r in rounds if r.result is not None]
    status = played(sum(len(r.result.fills) for r in read)) if read else CycleOutcome.FORFEITED
    return ContestantCycle(contestant.name, status, tuple(rounds), state,
                           context if context.needed else None)
