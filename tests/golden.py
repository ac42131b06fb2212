"""The golden season: a short season recorded once, replayed by every later version.

:func:`season_values` reduces a season's ledger to the values that must never change while the
code around them is reorganised: every contestant's outcomes, decisions, rejections, fills, levels,
responses and equity per cycle, and the monitor's automatic closes. Call records (latencies) and
file layouts are left out: they differ run to run. ``tests/fixtures/golden/season.json`` holds the
values recorded before the stage packages were introduced; ``tests/pipeline/test_golden_season.py``
replays the same season and compares (:func:`assert_same_values`): text, integers and flags
exactly, floats to :data:`REL_TOL` relative (:data:`ABS_TOL` absolute near zero). The synthetic
prices come from NumPy's vectorised ``exp``, whose last bits differ between CPU families (with
AVX-512 and without), and so every price, quantity and fee computed from them; a value the arena
writes as text (a mirrored invalidation level) is rounded once where it is computed.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pandas as pd

from tests.agents.openai_stub import RecordedRequest, StubResponse

CYCLE_TABLES = ("outcome", "decisions", "rejections", "fills", "levels", "responses", "equity")
DROP = {"prompt_sha256", "raw_json", "extra"}  # digests and copies of values compared elsewhere
REL_TOL = ABS_TOL = 1e-9  # far below a cent, a basis point or a share: only the last bits move
GOLDEN_SEASON = {"start": "2025-11-24", "days": 6,
                 "symbols": ["BTC", "ETH", "SOL", "SPY", "AAPL", "MSFT", "NVDA", "ADA"]}


def _value(v: Any) -> Any:
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "tolist"):
        return _value(v.tolist())
    if isinstance(v, list | tuple):
        return [_value(x) for x in v]
    if v is pd.NA or v is None:
        return None
    return v


def _rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    frame = frame.drop(columns=[c for c in frame.columns if c in DROP])
    keys = [c for c in ("cycle_at", "window_start", "contestant", "round", "seq",
                        "decision_index") if c in frame.columns]
    frame = frame.sort_values(keys, kind="stable") if keys else frame
    return [{k: _value(v) for k, v in row.items()} for row in frame.to_dict(orient="records")]


def season_values(ledger) -> dict[str, Any]:
    """The season's values, table by table (see the module docstring)."""
    out: dict[str, Any] = {name: _rows(ledger.table(name)) for name in CYCLE_TABLES}
    out["monitor_fills"] = _rows(ledger.table("fills", monitor=True))
    return json.loads(json.dumps(out, sort_keys=True))


def value_differences(replayed: Any, recorded: Any, path: str = "") -> list[str]:
    """Where ``replayed`` differs from ``recorded`` (see the module docstring), as
    ``path: replayed != recorded`` lines; empty when they are the same values."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        if replayed.keys() != recorded.keys():
            return [f"{path}: keys {sorted(replayed)} != {sorted(recorded)}"]
        return [d for k in recorded for d in value_differences(replayed[k], recorded[k],
                                                                 f"{path}.{k}")]
    if isinstance(recorded, list) and isinstance(replayed, list):
        if len(replayed) != len(recorded):
            return [f"{path}: {len(replayed)} items != {len(recorded)}"]
        return [d for i, (a, b) in enumerate(zip(replayed, recorded, strict=True))
                for d in value_differences(a, b, f"{path}[{i}]")]
    floats = isinstance(recorded, float) or isinstance(replayed, float)
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool)
                  for v in (recorded, replayed))
    if floats and numbers:
        same = math.isclose(replayed, recorded, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    else:
        same = type(replayed) is type(recorded) and replayed == recorded
    return [] if same else [f"{path}: {replayed!r} != {recorded!r}"]


def assert_same_values(replayed: Any, recorded: Any) -> None:
    """Fail naming every difference beyond the stated tolerance (see the module docstring)."""
    differences = value_differences(replayed, recorded)
    assert not differences, f"{len(differences)} value(s) differ:\n" + "\n".join(differences[:20])


OPEN = ('{"reasoning": "scripted", "decisions": [{"action": "open_short", "symbol": "ETH", '
        '"percent_of_equity": 25, "confidence": 0.9, "invalidation_price": LEVEL, '
        '"thesis": "scripted", "invalidation": "scripted"}]}')
CLOSE = '{"reasoning": "scripted repair", "decisions": [{"action": "close", "symbol": "ETH"}]}'


def scripted_model(request: RecordedRequest) -> StubResponse:
    """The golden season's model: a short ETH position with its level 1% above the briefing's
    price (the monitor closes some); when that is refused (already held), the repair closes it."""
    if any(m["role"] == "assistant" for m in request.messages):
        return StubResponse.answer(CLOSE)
    price = float(re.search(r"### ETH price ([0-9.]+)", request.messages[-1]["content"]).group(1))
    return StubResponse.answer(OPEN.replace("LEVEL", f"{price * 1.01:.2f}"))
