"""Scale-out on Dask: a season whose config names a Dask cluster plays its contestants and
computes its luck tables on the cluster's worker processes (prefect-dask's task runner), with the
same books and tables as the thread runner of the flow's own process."""

from __future__ import annotations

import json
import os
import pickle

import pandas as pd

from arena.data.lake import Lake
from arena.pipeline.season_config import config_path, load_season
from tests.agents.openai_stub import OpenAIStub, StubResponse
from tests.ledger_books import ledger_tables
from tests.market_lakes import season_lake

ANSWER = json.dumps({"reasoning": "Hold.", "decisions": []})
TABLE_SYMBOLS = ["BTC", "ETH", "SOL", "SPY", "AAPL", "MSFT"]  # a few assets: the same either way


def _books(lake: Lake) -> dict[str, pd.DataFrame]:
    books = ledger_tables(lake)
    books.update({f"analytics/{p.stem}": pd.read_parquet(p)
                  for p in sorted((lake.root / "analytics").glob("*.parquet"))})
    return books


def test_a_season_on_a_local_dask_cluster_keeps_the_same_books_as_threads(
        prefect_server, local_storage, tmp_path_factory, tmp_path, universe, monkeypatch):
    """The same cycle played twice, its contestants on threads and on a local Dask cluster (a
    season config naming it), then the season's luck and rules tables computed both ways: the
    same records and the same tables."""
    from prefect import flow

    from arena.flows import tasks
    from arena.flows.cycle import cycle_flow
    from arena.pipeline.season import season_tables

    clusters: list[str] = []  # every fan-out that went to a Dask cluster
    real = tasks.dask_task_runner
    monkeypatch.setattr(tasks, "dask_task_runner",
                        lambda address, items: clusters.append(address) or real(address, items))

    @flow
    def tables(lake_root: str, dask: str | None) -> None:
        lake = Lake(lake_root)
        season = load_season(lake)
        season_tables(lake, "synthetic", season.universe().select(TABLE_SYMBOLS), season.times,
                      players=300, arena_players=100, seed=0, progress=lambda _m: None,
                      runner=tasks.PrefectRunner(dask=dask))

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
                season = load_season(lake).model_copy(update={"dask": "local"})
                config_path(lake).write_text(json.dumps(season.to_json(), indent=2))
            cycle_flow(lake_root=str(lake.root), now="2025-11-24T16:10:00Z", publish=False)
            tables(str(lake.root), load_season(lake).dask)
            lakes[where] = lake
        assert len(stub.chat_requests) == 2  # one call per lake: played once each
    assert load_season(lakes["dask"]).dask == "local" and load_season(lakes["threads"]).dask is None
    assert clusters == ["local"] * 2  # the cycle's contestants, the luck and rules tables
    threads, dask = _books(lakes["threads"]), _books(lakes["dask"])
    assert threads.keys() == dask.keys() and "analytics/luck_ceiling" in threads
    assert len(threads["cycles/outcome"]) == 3 and len(threads["analytics/luck_ceiling"]) > 0
    for key in threads:
        pd.testing.assert_frame_equal(threads[key], dask[key], obj=key)


def test_a_model_contestant_sent_to_a_worker_leaves_its_keys_behind(monkeypatch):
    import cloudpickle

    from arena.agents.factory import build_contestant
    from arena.agents.roster import ContestantSpec

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-leaves-0123456789")
    spec = ContestantSpec(name="gpt", kind="llm", model="openai/gpt-4o-mini",
                          api_key_env="OPENAI_API_KEY")
    for env in ({"OPENAI_API_KEY": "sk-test-never-leaves-0123456789"}, os.environ):
        sent = cloudpickle.dumps(build_contestant(spec, env=env))
        assert b"sk-test-never-leaves" not in sent
        assert pickle.loads(sent).name == "gpt"
