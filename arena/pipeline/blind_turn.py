"""A contestant's turn in a blind season (:mod:`arena.market.blind`).

The contestant is briefed in the blind world (:func:`blind_briefing`: the market, its book, the
cycle's charts and, for a follower, the others' executed decisions, all under the season's
blinding), and the engine judges its answer there too (:func:`blind_turn`): against the blind
universe, at the blind prices, on its book under neutral names, so every rejection and the
repair follow-up speak the contestant's own terms. The cycle then comes back in real terms
(:func:`restored`) before anything is recorded: the fills, levels, decisions and the book after
the turn carry real symbols and price levels. The blinding's factors are powers of two, so the
book that comes back is bit for bit the one the engine would have reached on the real prices.

Only what the contestant read or wrote stays blind in the record: the prompt, the conversation,
the answers, the tool calls, the parse errors and the rejections' messages.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from arena.agents.base import Contestant
from arena.core.types import Briefing, Charts
from arena.core.universe import Universe
from arena.engine.broker import CycleResult
from arena.engine.contract import MalformedDecision, ParsedAnswer, ParseFailure
from arena.engine.rules import ARENA_RULES, CycleState, Rules
from arena.market.blind import Blinding
from arena.market.briefing import build_briefing
from arena.market.sections import DEFAULT_LAYOUT
from arena.market.types import MarketData
from arena.pipeline.turn import ContestantCycle, take_turn


class BlindDecisions(Mapping[str, list[dict[str, Any]]]):
    """The others' executed decisions (:class:`arena.pipeline.cycle.ExecutedDecisions`, read
    in real terms from the ledger) as a follower in a blind season reads them."""

    def __init__(self, real: Mapping[str, Sequence[Mapping[str, Any]]], blinding: Blinding
                 ) -> None:
        self._real, self._blinding = real, blinding

    def __getitem__(self, name: str) -> list[dict[str, Any]]:
        return [self._blinding.decision(d) for d in self._real[name]]

    def __iter__(self) -> Iterator[str]:
        return iter(self._real)

    def __len__(self) -> int:
        return len(self._real)


def blind_briefing(shown: MarketData, contestant: str, snapshot: Mapping[str, Any],
                   blinding: Blinding, *, rules: Rules = ARENA_RULES,
                   candles: str = DEFAULT_LAYOUT, charts: Charts | None = None,
                   earlier: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
                   standings: Mapping[str, float] | None = None) -> Briefing:
    """The briefing of ``contestant`` in a blind season: ``shown`` is the cycle's market under
    the blinding (:meth:`Blinding.market`, made once per cycle), ``snapshot`` its real book
    (:func:`arena.market.briefing.portfolio_snapshot`), ``charts`` and ``earlier`` the real
    ones; the standings are USD equities by contestant and need no blinding."""
    briefing = build_briefing(shown, contestant, blinding.snapshot(snapshot), rules=rules,
                              candles=candles)
    return replace(briefing, charts=None if charts is None else blinding.charts(charts),
                   earlier=BlindDecisions(earlier, blinding) if earlier is not None else {},
                   standings=dict(standings or {}))


def blind_turn(contestant: Contestant, briefing: Briefing, state: CycleState,
               prices: Mapping[str, float], universe: Universe, blinding: Blinding, *,
               rules: Rules = ARENA_RULES) -> ContestantCycle:
    """:func:`arena.pipeline.turn.take_turn` on a blind ``briefing``, judged in the blind world
    (``state``, ``prices`` and ``universe`` are the real ones, mapped here), the cycle returned
    in real terms (:func:`restored`)."""
    cycle = take_turn(contestant, briefing, blinding.state(state), blinding.prices(prices),
                      blinding.universe(universe), rules=rules)
    return restored(cycle, blinding)


def _decision(d: Any, blinding: Blinding) -> Any:
    if isinstance(d, MalformedDecision):  # recorded as sent, but with its symbol's real name
        return replace(d, raw=blinding.real_decision(d.raw)) if isinstance(d.raw, dict) else d
    real = blinding.real_decision(d.as_json())
    if real["symbol"] == d.symbol:
        return d
    return d.model_copy(update={"symbol": real["symbol"],
                                "invalidation_price": real["invalidation_price"]})


def _parsed(parsed: ParsedAnswer | ParseFailure | None, blinding: Blinding
            ) -> ParsedAnswer | ParseFailure | None:
    if not isinstance(parsed, ParsedAnswer):
        return parsed
    decisions = tuple(_decision(d, blinding) for d in parsed.answer.decisions)
    return replace(parsed, answer=replace(parsed.answer, decisions=decisions))


def _result(result: CycleResult | None, blinding: Blinding) -> CycleResult | None:
    if result is None:
        return None
    return replace(result, fills=tuple(blinding.real_fill(f) for f in result.fills),
                   rejections=tuple(blinding.real_rejection(r) for r in result.rejections),
                   levels=tuple(blinding.real_level(m) for m in result.levels),
                   state=blinding.real_state(result.state))


def restored(cycle: ContestantCycle, blinding: Blinding) -> ContestantCycle:
    """A cycle played in the blind world, in real terms: its decisions, fills, levels and
    rejections carry real symbols and price levels, and its book is the real one."""
    rounds = tuple(replace(r, parsed=_parsed(r.parsed, blinding),
                           result=_result(r.result, blinding)) for r in cycle.rounds)
    return replace(cycle, rounds=rounds, state=blinding.real_state(cycle.state))

