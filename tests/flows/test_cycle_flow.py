"""The cycle flow under a real Prefect server: house agents plus an LLM on a loopback server."""

from __future__ import annotations

import json

import pandas as pd

from arena.data.lake import Lake
from arena.flows.artifacts import artifact_key
from arena.ledger.store import Ledger
from arena.pipeline.season_config import load_season
from tests.agents.openai_stub import Gate, OpenAIStub, StubResponse, unreachable_url
from tests.flows.artifacts import run_artifacts
from tests.market_lakes import season_lake

SENTINEL = "SENTINEL-CYCLE-KEY-3141592653"
ANSWER = json.dumps({"reasoning": "Buy ETH on strength.", "decisions": [
    {"action": "open_long", "symbol": "ETH", "percent_of_equity": 20, "confidence": 0.9,
     "invalidation_price": 1.0, "thesis": "trend", "invalidation": "breaks down"}]})


def test_cycle_flow_plays_house_and_llm_contestants(prefect_server, local_storage, tmp_path,
                                                    tmp_path_factory, universe, monkeypatch):
    from prefect.client.orchestration import get_client

    from arena.flows.cycle import cycle_flow

    monkeypatch.setenv("STUB_LLM_API_KEY", SENTINEL)
    with OpenAIStub(default=StubResponse.answer(ANSWER)) as stub:
        lake_root = season_lake(tmp_path_factory, universe, tmp_path / "lake",
            "contestants:\n"
            "  - {name: momentum, kind: house, strategy: momentum}\n"
            f"  - {{name: stub-llm, kind: llm, model: openai/stub-model, api_base: '{stub.url}',"
            " api_key_env: STUB_LLM_API_KEY, params: {temperature: 0.2, max_tokens: 400,"
            " timeout: 5, num_retries: 1}}\n"
            "  - {name: hosted, kind: llm, model: openai/gpt-4o-mini, api_key_env: NOT_SET_KEY}\n"
        ).root
        rows = cycle_flow(at="2025-11-26T16:00:00Z", lake_root=str(lake_root), publish=False)
        assert all(r.headers["authorization"] == f"Bearer {SENTINEL}" for r in stub.chat_requests)
    by_name = {r["contestant"]: r for r in rows}
    assert by_name["stub-llm"]["status"] == "traded" and by_name["stub-llm"]["fills"] == 1
    assert by_name["stub-llm"]["tokens_in"] > 0 and by_name["momentum"]["recorded"] == "recorded"
    assert (by_name["hosted"]["status"], by_name["hosted"]["recorded"]) == ("skipped", "not recorded")
    assert by_name["hosted"]["error"] == "skipped: NOT_SET_KEY is not set"
    ledger = Ledger(lake_root)
    assert [f.symbol for f in ledger.fills("stub-llm")] == ["ETH"]
    # the key is never written anywhere in the lake
    for path in ledger.dir.rglob("*"):
        if path.is_file():
            assert SENTINEL.encode() not in path.read_bytes(), path
    key = artifact_key(load_season(Lake(lake_root)).id, "cycle-outcomes")
    with get_client(sync_client=True) as client:
        assert key in {a.key for a in client.read_artifacts()}
    [outcomes, *_] = run_artifacts(key=key)  # this run's: the newest
    assert "2025-11-26T16:00:00+00:00" in outcomes.description
    assert "SYNTHETIC market data: not real prices" in outcomes.description
    # its numbers as the report writes them: seconds to the hundredth, no float noise
    shown = {r["contestant"]: r for r in json.loads(outcomes.data)}
    assert shown["stub-llm"]["latency_s"] > 0
    assert all(repr(r[k]) == repr(round(r[k], 2)) for r in shown.values()
               for k in ("latency_s", "queue_s") if r.get(k) is not None), shown
    # re-running the flow for the same cycle executes nothing twice
    again = cycle_flow(at="2025-11-26T16:00:00Z", lake_root=str(lake_root), publish=False)
    assert {r["recorded"] for r in again if r["contestant"] != "hosted"} == {"already recorded"}
    assert len(ledger.fills("stub-llm")) == 1


def test_a_provider_limit_of_one_serialises_its_contestants(prefect_server, local_storage, tmp_path,
                                                            tmp_path_factory, universe,
                                                            monkeypatch):
    from prefect.client.orchestration import get_client

    from arena.flows.cycle import cycle_flow

    monkeypatch.setenv("ARENA_PROVIDER_CONCURRENCY", "1")
    # each answer is held a moment, so overlapping calls would be seen in the server together
    # (test_a_provider_limit_of_two_lets_both_in_together shows the flow can overlap them)
    with OpenAIStub(default=StubResponse.answer(ANSWER, delay=1.0)) as stub:
        lake_root = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                                _two_llms(stub.url)).root
        rows = cycle_flow(at="2025-11-26T16:00:00Z", lake_root=str(lake_root), publish=False)
    assert [r["status"] for r in rows] == ["traded", "traded"]
    assert len(stub.chat_requests) == 2 and stub.max_in_flight == 1  # one at a time
    with get_client(sync_client=True) as client:
        assert client.read_global_concurrency_limit_by_name("model-provider-local").limit == 1


def test_a_provider_limit_of_two_lets_both_in_together(prefect_server, local_storage, tmp_path,
                                                       tmp_path_factory, universe, monkeypatch):
    from arena.flows.cycle import cycle_flow

    monkeypatch.setenv("ARENA_PROVIDER_CONCURRENCY", "2")
    gate = Gate(parties=2, timeout=20)  # one after another: it breaks after 20 s and answers 400
    with OpenAIStub(default=StubResponse.answer(ANSWER, gate=gate)) as stub:
        lake_root = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                                _two_llms(stub.url)).root
        rows = cycle_flow(at="2025-11-26T16:00:00Z", lake_root=str(lake_root), publish=False)
    assert gate.opened and stub.max_in_flight == 2, (gate, rows)
    assert len(stub.chat_requests) == 2
    assert [r["status"] for r in rows] == ["traded", "traded"]


def _two_llms(url: str) -> str:
    """A roster of two LLM contestants on one loopback provider (client timeout above the gate's)."""
    entry = (f"model: openai/stub-model, api_base: '{url}', params: {{temperature: 0.2,"
             " max_tokens: 300, timeout: 60, num_retries: 1}")
    return ("contestants:\n"
            f"  - {{name: first-llm, kind: llm, {entry}}}\n"
            f"  - {{name: second-llm, kind: llm, {entry}}}\n")


def test_a_contestant_that_cannot_be_reached_fails_the_flow_run(prefect_server, local_storage,
                                                                tmp_path, tmp_path_factory,
                                                                universe):
    """An operational failure is never green: the others play, the artifact says who failed,
    nothing is recorded for it, and the flow run ends Failed."""
    import pytest

    from arena.app.cycle import CycleFailed
    from arena.flows.cycle import cycle_flow

    closed = unreachable_url()
    lake_root = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                            "contestants:\n"
                            "  - {name: momentum, kind: house, strategy: momentum}\n"
                            f"  - {{name: gone, kind: llm, model: openai/stub-model, "
                            f"api_base: '{closed}', params: {{timeout: 5, num_retries: 0}}}}\n",
                            cycle_deadline_s=3.0).root  # one round: no retry can finish in time
    with pytest.raises(CycleFailed, match="gone: connection"):
        cycle_flow(at="2025-11-26T16:00:00Z", lake_root=str(lake_root), publish=False)
    [outcomes, *_] = run_artifacts(key=artifact_key(load_season(Lake(lake_root)).id,
                                                    "cycle-outcomes"))
    rows = {r["contestant"]: r for r in json.loads(outcomes.data)}
    assert (rows["gone"]["status"], rows["gone"]["recorded"]) == ("failed", "not recorded")
    assert rows["momentum"]["recorded"] == "recorded"
    assert [k.contestant for k in Ledger(lake_root).records()] == ["momentum"]


def test_a_run_is_named_after_the_cycle_it_plays_and_says_who_played(
        prefect_server, local_storage, tmp_path, tmp_path_factory, universe):
    """A manual run on the morning after plays the previous day's cycle: it is named after its
    season and that cycle, not after the minute it ran, and tagged with the season and the job
    as a deployment's runs are; run again, it says every contestant was recorded already instead
    of claiming they played."""
    import logging

    from prefect.client.orchestration import get_client

    from arena.flows.cycle import cycle_flow

    lake_root = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                            "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
                            "  - {name: random, kind: house, strategy: random}\n").root
    morning = "2025-11-27T13:45:00Z"  # the season's only cycle was 2025-11-26 16:00
    runs = logging.getLogger("prefect.flow_runs")  # the suite's level is WARNING: say INFO
    level = runs.level
    runs.setLevel(logging.INFO)
    try:
        first = cycle_flow(lake_root=str(lake_root), now=morning, publish=False,
                           return_state=True)
        again = cycle_flow(lake_root=str(lake_root), now=morning, publish=False,
                           return_state=True)
    finally:
        runs.setLevel(level)
    season = load_season(Lake(lake_root)).id
    with get_client(sync_client=True) as client:
        runs = [client.read_flow_run(s.state_details.flow_run_id) for s in (first, again)]
    assert [r.name for r in runs] == [f"{season} 2025-11-26"] * 2
    assert all(sorted(r.tags) == ["job:cycle", f"season:{season}"] for r in runs)
    said = [_run_log(s.state_details.flow_run_id, "contestants played") for s in (first, again)]
    assert said[0].endswith("2 contestants played, 0 already recorded, 0 skipped, 0 failed, "
                            "0 automatic closes")
    assert "0 contestants played, 2 already recorded" in said[1]


def _run_log(flow_run_id, needle: str, timeout: float = 30.0) -> str:
    """The line of a flow run's log (as the server keeps it) that holds ``needle``."""
    import time

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    deadline = time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while True:
            logs = client.read_logs(log_filter=LogFilter(
                flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
            found = [log.message for log in logs if needle in log.message]
            if found or time.monotonic() > deadline:
                assert found, f"no log line of run {flow_run_id} holds {needle!r}"
                return found[-1]
            time.sleep(0.5)


def test_a_scheduled_run_plays_the_missed_cycles_first(prefect_server, local_storage, tmp_path,
                                                       tmp_path_factory, universe):
    """The server was down on Monday and Tuesday: Wednesday's scheduled run backfills both, in
    order, then plays Wednesday; the artifact shows every cycle it played."""
    from arena.flows.cycle import cycle_flow

    lake_root = season_lake(tmp_path_factory, universe, tmp_path / "lake",
                            "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n",
                            start="2025-11-24", days=3).root
    rows = cycle_flow(lake_root=str(lake_root), now="2025-11-26T16:10:00Z", publish=False)
    assert [r["cycle_at"][:10] for r in rows] == ["2025-11-26"]
    ledger = Ledger(lake_root)
    assert [k.cycle_at.isoformat()[:10] for k in ledger.records("momentum")] == [
        "2025-11-24", "2025-11-25", "2025-11-26"]
    assert {r["status"] for t in ("2025-11-24", "2025-11-25")
            for r in ledger.record_rows("outcome", pd.Timestamp(f"{t} 16:00", tz="UTC"),
                                        "momentum")} <= {"traded", "no_trade"}
    [outcomes, *_] = run_artifacts(key=artifact_key(load_season(Lake(lake_root)).id,
                                                    "cycle-outcomes"))
    assert [r["cycle_at"][:10] for r in json.loads(outcomes.data)] == [
        "2025-11-24", "2025-11-25", "2025-11-26"]
    assert "decision cycle 2025-11-26T16:00:00+00:00" in outcomes.description
