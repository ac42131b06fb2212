"""The reverse contestant: does the opposite of another contestant in the same cycle.

"A consistently wrong model is a consistently useful signal." Mirroring: ``open_long`` <->
``open_short``; an invalidation level is reflected around the cycle price
(``level' = 2 x price - level``), so a stop 5% below a long becomes a stop 5% above the short;
closes, holds and adds keep their action (they refer to the mirrored contestant's own
positions, which the reverse holds mirrored). Sizes, confidence and texts are kept. An answer
that does not parse is passed through unchanged: the engine judges it like any other.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from arena.engine.contract import parse_answer

_FLIP = {"open_long": "open_short", "open_short": "open_long"}


def mirror_answer(raw: str, prices: Mapping[str, float]) -> str:
    """The mirror image of a raw answer, as JSON text."""
    parsed = parse_answer(raw)
    if not parsed.ok:
        return raw
    answer = parsed.answer.model_dump(exclude_none=True)
    for decision in answer["decisions"]:
        decision["action"] = _FLIP.get(decision["action"], decision["action"])
        price = prices.get(decision["symbol"])
        level = decision.get("invalidation_price")
        if level is not None and price is not None:
            mirrored = 2.0 * price - level
            decision["invalidation_price"] = mirrored if mirrored > 0 else price * 1e-6
    answer["reasoning"] = f"Mirror image of another contestant's answer. {answer['reasoning']}"
    return json.dumps(answer)
