"""A cycle's model calls all start at once: the cycle lasts as long as its slowest call.

The loopback model holds every answer behind a :class:`~tests.agents.openai_stub.Gate` of 64: the
gate opens only when all 64 requests are in the server together, otherwise every request is
refused (400) and no contestant trades. The time each turn waited before its call started is in
the ledger beside the call's latency.
"""

from __future__ import annotations

import gc
import json

import pytest

from arena.agents.llm import LLMContestant
from arena.agents.roster import ContestantSpec, Params
from arena.ledger.store import Ledger
from arena.pipeline.cycle import ProviderSlots, run_cycle
from tests.agents.openai_stub import Gate, OpenAIStub, StubResponse
from tests.conftest import ts
from tests.market_lakes import PROVIDER, market_lakes

MON = ts("2025-11-24 16:00")
ANSWER = json.dumps({"reasoning": "Wait.", "decisions": []})


def _llms(url: str, count: int, model: str = "openai/stub-model") -> list[LLMContestant]:
    return [LLMContestant(ContestantSpec(
        name=f"llm-{i:02d}", kind="llm", model=model, api_base=url,
        params=Params(temperature=0.2, max_tokens=200, timeout=120, num_retries=0)))
        for i in range(count)]


@pytest.mark.slow
def test_64_contestants_call_their_model_at_the_same_time(tmp_path_factory, universe, tmp_path):
    lake = market_lakes(tmp_path_factory, universe).full
    gate = Gate(parties=64, timeout=90)  # 64 requests in flight together, or every one a 400
    with OpenAIStub(default=StubResponse.answer(ANSWER, gate=gate)) as stub:
        outcomes = run_cycle(lake, PROVIDER, universe, _llms(stub.url, 64), MON,
                             ledger=Ledger(tmp_path))
    assert gate.opened and stub.max_in_flight == 64, gate
    assert [o.status for o in outcomes] == ["no_trade"] * 64, {o.error for o in outcomes}
    calls = Ledger(tmp_path).table("calls")
    assert len(calls) == 64
    # the time each turn waited to start is recorded beside its call's latency (what it waited
    # for a slot is pinned by the test below)
    assert calls["queue_s"].notna().all() and (calls["queue_s"] >= 0).all()
    assert sorted(round(o.queue_s, 6) for o in outcomes) == sorted(calls["queue_s"])


def test_the_turns_play_while_the_heap_alive_before_them_is_kept_from_the_collector(
        tmp_path_factory, universe, tmp_path):
    """A full pass of the collector over the process (libraries, price map, market) stops every
    thread for about a quarter of a second, and the fan-out's own allocations trigger one as its
    calls are about to leave: the turns play with the heap frozen, and it is thawed after."""
    lake = market_lakes(tmp_path_factory, universe).full
    frozen: list[int] = []

    def answer(request: object) -> StubResponse:
        frozen.append(gc.get_freeze_count())
        return StubResponse.answer(ANSWER)

    assert gc.get_freeze_count() == 0
    with OpenAIStub(handler=answer) as stub:
        outcomes = run_cycle(lake, PROVIDER, universe, _llms(stub.url, 3), MON,
                             ledger=Ledger(tmp_path))
    assert [o.status for o in outcomes] == ["no_trade"] * 3
    assert len(frozen) == 3 and min(frozen) > 0
    assert gc.get_freeze_count() == 0


def test_a_provider_limit_queues_that_providers_calls_and_records_the_wait(
        tmp_path_factory, universe, tmp_path):
    """Two slots for the loopback provider: three contestants, never more than two calls in
    the server; the third waited about one held answer and says so in its ``queue_s``."""
    lake = market_lakes(tmp_path_factory, universe).full
    with OpenAIStub(default=StubResponse.answer(ANSWER, delay=1.0)) as stub:
        outcomes = run_cycle(lake, PROVIDER, universe, _llms(stub.url, 3), MON,
                             ledger=Ledger(tmp_path), slot=ProviderSlots(2))
    assert stub.max_in_flight == 2 and len(stub.chat_requests) == 3
    waits = sorted(o.queue_s for o in outcomes)
    assert waits[-1] >= 0.9 > waits[1], waits  # the third waited for a held answer to end
    assert sorted(Ledger(tmp_path).table("calls")["queue_s"]) == waits


def test_provider_slots_bound_one_provider_and_never_the_others():
    slots = ProviderSlots(1)
    local, hosted = _llms("http://127.0.0.1:9/v1", 1)[0], _llms(
        "https://api.example.com/v1", 1, model="anthropic/claude")[0]
    with slots(local):
        assert not slots(local).acquire(blocking=False)  # the provider's one slot is taken
        with slots(hosted):  # another provider: its own slot
            pass
    with slots(local):  # released
        pass
    unlimited = ProviderSlots(None)
    with unlimited(local), unlimited(local):
        pass
    with pytest.raises(ValueError, match="at least one slot"):
        ProviderSlots(0)
