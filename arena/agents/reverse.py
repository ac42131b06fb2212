"""The reverse contestant: does the opposite of another contestant in the same cycle.

"A consistently wrong model is a consistently useful signal." Mirroring: ``open_long`` <->
``open_short``; an invalidation level is reflected around the cycle price
(``level' = 2 x price - level``), so a stop 5% below a long becomes a stop 5% above the short;
closes, holds and adds keep their action (they refer to the mirrored contestant's own
positions, which the reverse holds mirrored). Sizes, confidence and texts are kept. An answer
that does not parse is passed through unchanged, and so is a malformed decision inside one: the
engine judges them like any other.
"""

from __future__ import annotations

from collections.abc import Mapping

from arena.core.text import dumps
from arena.engine.contract import Decision, parse_answer

_FLIP = {"open_long": "open_short", "open_short": "open_long"}


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
            mirrored = 2.0 * price - d.invalidation_price
            decision["invalidation_price"] = mirrored if mirrored > 0 else price * 1e-6
        decisions.append(decision)
    answer["decisions"] = decisions
    answer["reasoning"] = ("Mirror image of another contestant's answer. "
                           + (parsed.answer.reasoning or "")).strip()
    return dumps(answer)
