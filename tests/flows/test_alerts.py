"""Alerts end to end: the season's automations on a real Prefect server post to a webhook
receiver on loopback when a season run fails and when a cycle runs past its deadline; the
message names the flow, the season, the run (job and time) and the reason."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from arena.pipeline.season_config import load_season
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.market_lakes import season_lake

HOLD = json.dumps({"reasoning": "Nothing to do.", "decisions": []})


class Receiver:
    """A webhook receiver on 127.0.0.1: keeps every JSON body POSTed to it."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", 0))
                received.append(json.loads(self.rfile.read(size) or b"{}"))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait_for(self, words: str, timeout: float = 90.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for body in self.bodies:
                if words in body.get("subject", ""):
                    return body
            time.sleep(0.5)
        raise AssertionError(f"no alert with {words!r} within {timeout:.0f} s: {self.bodies}")


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.server.shutdown()


def test_a_failed_run_and_an_overdue_cycle_are_posted_to_the_webhook(
        prefect_server, local_storage, tmp_path_factory, tmp_path, universe, receiver):
    from prefect import tags

    from arena.flows.alerts import install_alerts
    from arena.flows.cycle import cycle_flow

    with OpenAIStub(default=StubResponse.answer(HOLD, delay=25.0)) as stub:
        roster = ("contestants:\n"
                  f"  - {{name: slow-llm, kind: llm, model: openai/stub-model, api_base: "
                  f"'{stub.url}', params: {{timeout: 40, num_retries: 0}}}}\n")
        lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", roster,
                           start="2025-11-24", days=3)
        season = load_season(lake)
        install_alerts(season.id, receiver.url, cycle_deadline_s=0.0, margin_s=12.0)
        with tags(f"season:{season.id}"):
            # before the season: nothing to do, the run completes (no alert every day)
            assert cycle_flow(lake_root=str(lake.root), now="2025-11-20T16:10:00Z",
                              publish=False) == []
            with pytest.raises(Exception, match="is not a cycle time"):  # an operator's typo
                cycle_flow(lake_root=str(lake.root), at="2025-11-24T17:00:00Z",
                           now="2025-11-24T17:10:00Z", publish=False)
            failed = receiver.wait_for("cycle Failed")
            # the model takes 25 s: the cycle is still running 12 s after it started
            rows = cycle_flow(lake_root=str(lake.root), now="2025-11-24T16:10:00Z",
                              publish=False)
        assert [r["status"] for r in rows] == ["no_trade"]
        overdue = receiver.wait_for("cycle overdue")
    assert f"season {season.id} did not succeed: Failed" in failed["text"]
    # the run is named after its season and the cycle it was asked for
    assert f"cycle run '{season.id} 2025-11-24' of season" in failed["text"]
    assert "is not a cycle time" in failed["text"]
    assert len([b for b in receiver.bodies if "Failed" in b["subject"]]) == 1
    assert f"of season {season.id} not finished within 12 s" in overdue["text"]
    assert f"cycle run '{season.id} 2025-11-24' of season" in overdue["text"]
