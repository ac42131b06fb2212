"""Scale-out on Dask: a season whose config names a Dask cluster plays its contestants and
computes its luck tables on the cluster's worker processes (prefect-dask's task runner), with the
same books and tables as the thread runner of the flow's own process."""

from __future__ import annotations

import dataclasses
import json

import pandas as pd

from arena.data.lake import Lake
from arena.ledger.records import MONITOR_SCHEMAS, SCHEMAS
from arena.ledger.store import Ledger
from arena.pipeline.season_config import config_path, load_season
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.market_lakes import season_lake

ANSWER = json.dumps({"reasoning": "Hold.", "decisions": []})


def _books(lake: Lake) -> dict[str, pd.DataFrame]:
    ledger = Ledger(lake)
    books = {f"{kind}/{name}": ledger.table(name, monitor=kind == "monitor").drop(
        columns=["latency_s"], errors="ignore")
        for kind, schemas in (("cycles", SCHEMAS), ("monitor", MONITOR_SCHEMAS))
        for name in schemas}
    books.update({f"analytics/{p.stem}": pd.read_parquet(p)
                  for p in sorted((lake.root / "analytics").glob("*.parquet"))})
    return books


def test_a_season_on_a_local_dask_cluster_keeps_the_same_books_as_threads(
        prefect_server, local_storage, tmp_path_factory, tmp_path, universe, monkeypatch):
    from arena.flows import tasks
    from arena.flows.cycle import cycle_flow
    from arena.flows.publish import publish_flow

    clusters: list[str] = []  # every fan-out that went to a Dask cluster
    real = tasks.dask_task_runner
    monkeypatch.setattr(tasks, "dask_task_runner",
                        lambda address: clusters.append(address) or real(address))

    with OpenAIStub(default=StubResponse.answer(ANSWER)) as stub:
        roster = ("contestants:\n"
                  "  - {name: momentum, kind: house, strategy: momentum}\n"
                  "  - {name: random, kind: house, strategy: random}\n"
                  f"  - {{name: stub-llm, kind: llm, model: openai/stub-model, api_base: "
                  f"'{stub.url}', params: {{timeout: 20, num_retries: 0}}}}\n")
        lakes = {}
        for where in ("threads", "dask"):
            lake = season_lake(tmp_path_factory, universe, tmp_path / where, roster,
                               start="2025-11-24", days=2)
            if where == "dask":  # the season config names the cluster
                season = dataclasses.replace(load_season(lake), dask="local")
                config_path(lake).write_text(json.dumps(season.to_json(), indent=2))
            for now in ("2025-11-24T16:10:00Z", "2025-11-25T16:10:00Z"):
                cycle_flow(lake_root=str(lake.root), now=now, publish=False)
            publish_flow(lake_root=str(lake.root), players=300)
            lakes[where] = lake
        assert len(stub.chat_requests) == 4  # one call per cycle per lake: played once each
    assert load_season(lakes["dask"]).dask == "local" and load_season(lakes["threads"]).dask is None
    assert clusters == ["local"] * 3  # the two cycles' contestants, the publication's luck tables
    threads, dask = _books(lakes["threads"]), _books(lakes["dask"])
    assert threads.keys() == dask.keys() and "analytics/luck_ceiling" in threads
    assert len(threads["cycles/outcome"]) == 6 and len(threads["analytics/luck_ceiling"]) > 0
    for key in threads:
        pd.testing.assert_frame_equal(threads[key], dask[key], obj=key)
