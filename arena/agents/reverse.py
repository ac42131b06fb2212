"""The reverse contestant: does the opposite of what another contestant's book did in the same
cycle.

"A consistently wrong model is a consistently useful signal." What is mirrored is what the
target's book **executed**, in both rounds (:attr:`arena.core.types.Briefing.earlier`: its
decisions with a fill or a level move, in the order the engine applied them), never what it
merely said: a decision the engine refused is not mirrored, and a target that traded only in its
repair round is mirrored all the same.

Mirroring: ``open_long`` <-> ``open_short``; an invalidation level is reflected around the cycle
price (``level' = 2 x price - level``), so a stop 5% below a long becomes a stop 5% above the
short; closes, holds and adds keep their action (they refer to the target's own positions, which
the reverse holds mirrored). The mirrored level is rounded once, here, to :data:`LEVEL_DECIMALS`
decimals as the house strategies write theirs: the cycle price it is computed from may differ in
its last bits between CPU families (NumPy's vectorised ``exp``), and a level written in the
answer's text must not. Sizes, confidence and texts are kept.

The target's two rounds become one answer, folded per symbol (:func:`fold`) so that it leaves the
book the two rounds left:

* the level that counts is the last one the target set on the symbol: it is written into the
  symbol's open or add, else into its last hold (the earlier holds are dropped);
* a full close of a position opened this cycle leaves nothing to send (the book ends as it
  began); any other full close is sent alone (what came before it on the symbol is gone too);
* a partial close after an open or an add shrinks that open or add by the part closed; after an
  open it is then dropped (the position did not exist before the cycle).

The engine judges one decision per symbol and answer (a close and then a hold excepted), so a
symbol the target traded in both rounds (two closes, a close and an add, two adds) still leaves
decisions the engine refuses for naming their symbol again (:func:`refused_as_duplicates`). The
reverse's own repair round sends exactly those again, judged after the rest; its other
rejections (a position its own book no longer holds, an add to what is its losing side, too
little cash) are not the target's and cannot be mended by mirroring it, so they stay refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from arena.agents.base import Reply
from arena.agents.roster import MIRROR_WORST, ContestantSpec
from arena.core.text import dumps
from arena.core.types import Briefing, CallRecord, Message
from arena.engine.rules import EXECUTION_ORDER

_FLIP = {"open_long": "open_short", "open_short": "open_long"}
_OPENS = frozenset(_FLIP)
LEVEL_DECIMALS = 8  # as the house strategies round their levels

Decision = dict[str, Any]


def _mirror_level(level: float, price: float) -> float:
    """``level`` reflected around ``price``, rounded once; a level the mirror would put at or
    below zero goes just above zero instead."""
    mirrored = round(2.0 * price - level, LEVEL_DECIMALS)
    return mirrored if mirrored > 0 else max(round(price * 1e-6, LEVEL_DECIMALS),
                                             10.0 ** -LEVEL_DECIMALS)


def mirror_decision(decision: Mapping[str, Any], prices: Mapping[str, float]) -> Decision:
    """The mirror image of one decision of the contract (its unset fields and its ``round``
    left out); a level whose symbol has no cycle price is kept as it is."""
    out = {k: v for k, v in decision.items() if v is not None and k != "round"}
    out["action"] = _FLIP.get(out.get("action"), out.get("action"))
    level, price = out.get("invalidation_price"), prices.get(out.get("symbol"))
    if isinstance(level, (int, float)) and price:
        out["invalidation_price"] = _mirror_level(float(level), price)
    return out


def _closed_share(close: Mapping[str, Any]) -> float:
    """The share of the position a close takes (1.0: all of it)."""
    percent = close.get("percent_of_position")
    return 1.0 if percent is None else min(float(percent), 100.0) / 100.0


def _fold_symbol(steps: list[Decision]) -> list[Decision]:
    """One symbol's executed decisions, in book order, as one answer can send them (module
    docstring)."""
    kept: list[Decision] = []
    level = None
    for step in steps:
        action = step["action"]
        if step.get("invalidation_price") is not None and action != "close":
            level = step["invalidation_price"]
        if action != "close":
            kept.append(dict(step))
            continue
        share = _closed_share(step)
        sized = [d for d in kept if d["action"] in _OPENS or d["action"] == "add"]
        opened = any(d["action"] in _OPENS for d in sized)
        if share >= 1.0:
            kept = [] if opened else [dict(step)]
            continue
        for d in sized:
            d["percent_of_equity"] = float(d["percent_of_equity"]) * (1.0 - share)
        if not opened:
            kept.append(dict(step))
    if any(d["action"] in _OPENS or d["action"] == "add" for d in kept):
        kept = [d for d in kept if d["action"] != "hold"]
        for d in kept:
            if d["action"] != "close" and level is not None:
                d["invalidation_price"] = level
    else:
        holds = [d for d in kept if d["action"] == "hold"]
        kept = [d for d in kept if d["action"] != "hold"] + holds[-1:]
    return kept


def fold(executed: Sequence[Mapping[str, Any]]) -> list[Decision]:
    """The decisions of one answer that do what ``executed`` (a book's decisions over both
    rounds, in the order applied) did, symbol by symbol (module docstring); symbols in the order
    they first appear, their decisions in book order."""
    by_symbol: dict[str, list[Decision]] = {}
    for d in executed:
        by_symbol.setdefault(str(d.get("symbol")), []).append(
            {k: v for k, v in d.items() if k != "round"})
    return [d for steps in by_symbol.values() for d in _fold_symbol(steps)]


def refused_as_duplicates(decisions: Sequence[Mapping[str, Any]]) -> list[int]:
    """The indexes of ``decisions`` (one answer) that the engine refuses for naming a symbol an
    earlier-judged decision of the answer already named: it judges closes, holds, adds, then
    opens, each group in the order sent, and a symbol may come twice only as a close and then a
    hold (:func:`arena.engine.rules.check`, ``duplicate_symbol``)."""
    order = sorted(range(len(decisions)),
                   key=lambda i: EXECUTION_ORDER.get(decisions[i].get("action"), -1))
    named: dict[Any, list[str]] = {}
    refused = []
    for i in order:
        action, before = decisions[i].get("action"), named.setdefault(decisions[i].get("symbol"), [])
        if before and not (action == "hold" and before == ["close"]):
            refused.append(i)
        before.append(action)
    return sorted(refused)


def mirror_executed(executed: Sequence[Mapping[str, Any]], prices: Mapping[str, float]
                    ) -> list[Decision]:
    """The reverse's decisions for a target whose book executed ``executed``: folded into one
    answer (:func:`fold`), then mirrored (:func:`mirror_decision`)."""
    return [mirror_decision(d, prices) for d in fold(executed)]


def _answer_text(reasoning: str, decisions: list[Decision]) -> str:
    return dumps({"reasoning": reasoning,
                  "market_context": {"overall_sentiment": "neutral", "key_factors": []},
                  "decisions": decisions})


class ReverseContestant:
    """Mirrors what another contestant's book executed in the same cycle (no model call). It
    plays after the others (``follows``): its briefing carries what their books executed
    (``earlier``) and, for ``mirror_of: worst``, the standings it picks the worst performer
    from."""

    kind = "reverse"
    follows = True

    def __init__(self, spec: ContestantSpec) -> None:
        self.spec, self.name = spec, spec.name
        self.mirror_of = spec.mirror_of

    def target(self, briefing: Briefing) -> str | None:
        """Whom to mirror: the named contestant, or the one with the lowest equity so far (ties
        by name; ``None`` before anyone has a recorded cycle)."""
        if self.mirror_of != MIRROR_WORST:
            return self.mirror_of
        ranked = sorted((equity, name) for name, equity in briefing.standings.items())
        return ranked[0][1] if ranked else None

    def _record(self, role: str) -> CallRecord:
        return CallRecord(self.name, role, f"reverse/{self.mirror_of}", 0, 0, 0.0, 0.0)

    def answer(self, briefing: Briefing) -> Reply:
        target = self.target(briefing)
        executed = briefing.earlier.get(target) if target is not None else None
        if executed is None:
            return Reply.skip(f"skipped: {self.mirror_of} gave no answer to mirror this cycle")
        prices = {r["symbol"]: r["price"] for r in briefing.data["market"]["table"] if r["price"]}
        decisions = mirror_executed(executed, prices)
        text = _answer_text(f"Mirror image of what {target}'s book executed this cycle, both "
                            "rounds.", decisions)
        return Reply(text, (self._record("decision"),),
                     (*briefing.messages, Message("assistant", text)), extra={"mirrored": target})

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        """Send again the decisions of the first answer the engine refused for naming their
        symbol twice (judged now, after the rest executed); the other rejections stay."""
        try:
            sent = json.loads(previous.text or "")["decisions"]
        except (ValueError, TypeError, KeyError):
            sent = []
        again = [sent[i] for i in refused_as_duplicates(sent)]
        text = _answer_text("Mirror repair: the decisions refused for naming a symbol twice, sent "
                            "again; the other rejections are the mirror's own book and stay.",
                            again)
        return Reply(text, (self._record("repair"),),
                     (*previous.transcript, Message("user", follow_up), Message("assistant", text)))
