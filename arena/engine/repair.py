"""The facts a repair follow-up needs: what failed and why, what executed, what budget is left.

The repair round (SPEC §2 step 9) sends exactly one follow-up when an answer did not parse or
had a rejected decision; the repair answer then executes under the same cycle state. The rejected
answer goes back in the conversation once, cut to :data:`ECHO_CHARS` characters
(:func:`echo`), so that a huge answer never makes a huge follow-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from arena.engine.broker import CycleResult
from arena.engine.portfolio import Fill
from arena.engine.rules import ARENA_RULES, CycleState, Rejection, Rules, shorten

ECHO_CHARS = 4_000  # how much of the rejected answer the repair conversation repeats
MAX_REJECTION_LINES = 20  # rejections listed one by one in the follow-up; the rest are counted


def echo(answer: str, limit: int = ECHO_CHARS) -> str:
    """The rejected ``answer`` as the repair conversation repeats it: whole up to ``limit``
    characters, else its first ``limit`` characters and a note saying how much was cut."""
    if len(answer) <= limit:
        return answer
    return (f"{answer[:limit]}\n[... answer cut here: {len(answer) - limit:,} more characters "
            f"not repeated; it was {len(answer):,} characters long]")


@dataclass(frozen=True)
class RepairContext:
    parse_error: str | None
    rejections: tuple[Rejection, ...]
    executed: tuple[Fill, ...]
    new_position_slots: int
    cash: float
    equity: float

    @property
    def needed(self) -> bool:
        """Whether a repair follow-up is due (unparseable answer, or any rejection)."""
        return self.parse_error is not None or bool(self.rejections)

    def as_dict(self) -> dict[str, object]:
        return {"needed": self.needed, "parse_error": self.parse_error,
                "rejections": [r.as_dict() for r in self.rejections],
                "executed": [f.as_dict() for f in self.executed],
                "new_position_slots": self.new_position_slots,
                "cash": round(self.cash, 2), "equity": round(self.equity, 2)}

    def render(self) -> str:
        """Plain lines for the follow-up prompt."""
        lines = []
        if self.parse_error:
            lines.append(f"Your answer could not be read: {self.parse_error}.")
        for r in self.rejections[:MAX_REJECTION_LINES]:
            lines.append(f"Rejected decision {r.decision_index} ({shorten(r.action)} "
                         f"{shorten(r.symbol)}), {r.code}: {r.message}.")
        rest = self.rejections[MAX_REJECTION_LINES:]
        if rest:
            codes = ", ".join(sorted({r.code for r in rest}))
            lines.append(f"... and {len(rest)} more rejected decisions ({codes}).")
        for f in self.executed:
            lines.append(f"Executed: {f.kind} {f.side} {f.symbol} {f.quantity:.6g} at {f.price:g} "
                         f"(${f.notional:,.2f}, fee ${f.fee:,.2f}).")
        if not self.executed:
            lines.append("Nothing executed yet this cycle.")
        lines.append(f"New positions you may still open this cycle: {self.new_position_slots}. "
                     f"Free cash: ${self.cash:,.2f}. Equity: ${self.equity:,.2f}.")
        return "\n".join(lines)


def repair_context(state: CycleState, prices: Mapping[str, float], *,
                   result: CycleResult | None = None, parse_error: str | None = None,
                   rules: Rules = ARENA_RULES) -> RepairContext:
    """Build the context from the cycle state after the first answer (or its parse failure)."""
    portfolio = state.portfolio
    slots = min(rules.max_new_per_cycle - len(state.opened),
                rules.max_positions - len(portfolio.positions))
    return RepairContext(parse_error, result.rejections if result else (),
                         result.fills if result else (), max(slots, 0), portfolio.cash,
                         portfolio.equity(prices))
