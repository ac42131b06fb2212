"""The reverse contestant: does the opposite of another contestant in the same cycle.

"A consistently wrong model is a consistently useful signal." Mirroring: ``open_long`` <->
``open_short``; an invalidation level is reflected around the cycle price
(``level' = 2 x price - level``), so a stop 5% below a long becomes a stop 5% above the short;
closes, holds and adds keep their action (they refer to the mirrored contestant's own
positions, which the reverse holds mirrored). The mirrored level is rounded once, here, to
:data:`LEVEL_DECIMALS` decimals as the house strategies write theirs: the cycle price it is
computed from may differ in its last bits between CPU families (NumPy's vectorised ``exp``), and
a level written in the answer's text must not. Sizes, confidence and texts are kept. An answer
that does not parse is passed through unchanged, and so is a malformed decision inside one: the
engine judges them like any other.
"""

from __future__ import annotations

from collections.abc import Mapping

from arena.agents.base import Reply
from arena.agents.roster import MIRROR_WORST, ContestantSpec
from arena.core.text import dumps
from arena.core.types import Briefing, CallRecord, Message
from arena.engine.contract import Decision, parse_answer

_FLIP = {"open_long": "open_short", "open_short": "open_long"}
LEVEL_DECIMALS = 8  # as the house strategies round their levels


def mirror_answer(raw: str, prices: Mapping[str, float]) -> str:
    """The mirror image of a raw answer, as JSON text."""
    parsed = parse_answer(raw)
    if not parsed.ok:
        return raw
    answer = parsed.answer.as_json()
    decisions = []
    for d in parsed.answer.decisions:
        if not isinstance(d, Decision):
            decisions.append(d.as_json())
            continue
        decision = {k: v for k, v in d.as_json().items() if v is not None}
        decision["action"] = _FLIP.get(d.action, d.action)
        price = prices.get(d.symbol)
        if d.invalidation_price is not None and price is not None:
            mirrored = round(2.0 * price - d.invalidation_price, LEVEL_DECIMALS)
            # a level the mirror would put at or below zero: just above zero instead
            decision["invalidation_price"] = mirrored if mirrored > 0 else max(
                round(price * 1e-6, LEVEL_DECIMALS), 10.0 ** -LEVEL_DECIMALS)
        decisions.append(decision)
    answer["decisions"] = decisions
    answer["reasoning"] = ("Mirror image of another contestant's answer. "
                           + (parsed.answer.reasoning or "")).strip()
    return dumps(answer)


class ReverseContestant:
    """Mirrors another contestant's first answer of the same cycle (no model call). It plays after
    the others (``follows``): its briefing carries their answers (``earlier``) and, for
    ``mirror_of: worst``, the standings it picks the worst performer from."""

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

    def answer(self, briefing: Briefing) -> Reply:
        target = self.target(briefing)
        source = briefing.earlier.get(target) if target is not None else None
        if source is None:
            return Reply.skip(f"skipped: {self.mirror_of} gave no answer to mirror this cycle")
        prices = {r["symbol"]: r["price"] for r in briefing.data["market"]["table"] if r["price"]}
        text = mirror_answer(source, prices)
        record = CallRecord(self.name, "decision", f"reverse/{self.mirror_of}", 0, 0, 0.0, 0.0)
        return Reply(text, (record,), (*briefing.messages, Message("assistant", text)))

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        """The mirrored answer cannot be reconsidered: the repair holds (an empty answer)."""
        text = '{"reasoning": "mirror: no repair", "decisions": []}'
        return Reply(text, (CallRecord(self.name, "repair", f"reverse/{self.mirror_of}"),),
                     (*previous.transcript, Message("user", follow_up), Message("assistant", text)))
