"""Two runs of one cycle (or of one backfill) at the same time - two operators, a scheduled run
and a manual one - call each model at most once: the ledger records each (cycle, contestant)
once, and the second run finds it recorded (a request count proves it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from arena.ledger.store import Ledger
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.conftest import ts
from tests.market_lakes import season_lake

HOLD = json.dumps({"reasoning": "nothing to do", "decisions": []})


def _roster(url: str) -> str:
    entry = (f"kind: llm, model: openai/stub-model, api_base: '{url}', "
             "params: {timeout: 30, num_retries: 0}")
    return ("contestants:\n"
            f"  - {{name: first-llm, {entry}}}\n"
            f"  - {{name: second-llm, {entry}}}\n"
            "  - {name: momentum, kind: house, strategy: momentum}\n")


@pytest.mark.parametrize("command", [["cycle"], ["season", "backfill", "2025-11-25"]],
                         ids=["cycle", "backfill"])
def test_two_runs_of_one_cycle_call_each_model_once(tmp_path_factory, tmp_path, universe,
                                                    command):
    # every answer takes a second: the two runs are in flight together
    with OpenAIStub(default=StubResponse.answer(HOLD, delay=1.0)) as stub:
        days = 1 if command == ["cycle"] else 2  # the backfill: Tuesday, while Wednesday waits
        lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", _roster(stub.url),
                           start="2025-11-26" if days == 1 else "2025-11-25", days=days)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        args = [sys.executable, "-m", "arena.cli", *command, "--no-publish", "--json",
                "--lake", str(lake.root)]
        runs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [r.communicate(timeout=300) for r in runs]
        assert [r.returncode for r in runs] == [0, 0], [err for _, err in outs]
        assert len(stub.chat_requests) == 2  # one call per model, not one per run
    at = ts("2025-11-26 16:00") if days == 1 else ts("2025-11-25 16:00")
    recorded = {}
    for out, _ in outs:
        for o in json.loads(out)["outcomes"]:
            recorded.setdefault(o["contestant"], []).append(o["recorded"])
    assert {name: sorted(r) for name, r in recorded.items()} == {
        name: ["already recorded", "recorded"] for name in ("first-llm", "second-llm", "momentum")}
    assert sorted(k.contestant for k in Ledger(lake).records() if k.cycle_at == at) == [
        "first-llm", "momentum", "second-llm"]
