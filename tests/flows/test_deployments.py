"""The season's scheduled deployments: what ``arena serve`` registers (names, schedules, tags,
limits), a served run executed under a real Prefect server, and the ledger slot that keeps a
monitor window from writing beside a cycle."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from arena.app.serve import season_jobs
from arena.cli import main
from arena.data.lake import Lake
from arena.flows.tasks import slug
from arena.ledger.store import Ledger
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.season_config import init_season, load_season, make_season, season_contestants
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: random, kind: house, strategy: random}\n")


@pytest.fixture
def two_providers(tmp_path, universe):
    lake = Lake(tmp_path / "lake")
    init_season(lake, make_season("2026-12-01", 5, universe.select(["BTC", "SPY", "AAPL"]).symbols,
                                  providers={"crypto": "ccxt", "stock": "yfinance",
                                             "etf": "yfinance"}))
    return lake


def test_a_season_has_one_deployment_per_job_and_provider(two_providers):
    lake = two_providers
    season = load_season(lake)
    jobs = {j.name.removeprefix(f"{slug(season.id)}-"): j for j in season_jobs(lake, season)}
    assert list(jobs) == ["ingest-ccxt", "ingest-yfinance", "monitor", "cycle", "publish"]
    assert {k: j.cron for k, j in jobs.items()} == {
        "ingest-ccxt": "1 * * * *", "ingest-yfinance": "1 * * * *",
        "monitor": "3-59/15 * * * *", "cycle": "10 16 * * *", "publish": "30 0 * * *"}
    assert jobs["ingest-ccxt"].parameters == {"source": "ccxt", "lake_root": str(lake.root)}
    assert all(j.parameters["lake_root"] == str(lake.root) for j in jobs.values())
    assert jobs["ingest-yfinance"].tags == (f"season:{season.id}", "job:ingest",
                                            "provider:yfinance")
    assert jobs["cycle"].tags == (f"season:{season.id}", "job:cycle", "provider:ccxt",
                                  "provider:yfinance")
    assert {j.concurrency_limit for j in jobs.values()} == {1}
    assert all(j.name == j.name.lower() and " " not in j.name for j in jobs.values())


def test_serve_lists_the_deployments(two_providers, capsys):
    assert main(["serve", "--list", "--json", "--lake", str(two_providers.root)]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [d["cron"] for d in listed] == ["1 * * * *", "1 * * * *", "3-59/15 * * * *",
                                           "10 16 * * *", "30 0 * * *"]
    assert main(["serve", "--list", "--lake", str(two_providers.root / "nowhere")]) == 2


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (got := predicate()) is not None:
            return got
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def test_arena_serve_registers_the_schedules_and_runs_a_deployment(prefect_server, tmp_path,
                                                                   tmp_path_factory, universe):
    """``arena serve`` in a process of its own against the test server: every deployment is
    registered with its schedule, tags and limit, and the season's alerts; a second ``arena
    serve`` on the lake is refused while the first runs; a run of the monitor deployment is
    picked up, executed and named by job and time; SIGTERM stops the server cleanly and pauses
    the schedules (no Late alert for a season stopped on purpose), and registering the
    deployments again, as the next start does, resumes them."""
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL

    from arena.flows.deployments import to_deployments

    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)
    season = load_season(lake)
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(),
           "PREFECT_RUNNER_POLL_FREQUENCY": "1",
           "PREFECT_LOCAL_STORAGE_PATH": str(tmp_path / "prefect-storage")}
    command = [sys.executable, "-m", "arena.cli", "serve", "--lake", str(lake.root),
               "--alert-webhook", "http://127.0.0.1:9/hook"]
    served = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    names = {j.name: j for j in season_jobs(lake, season)}
    try:
        with get_client(sync_client=True) as client:

            def registered():
                found = {d.name: d for d in client.read_deployments()}
                return found if set(names) <= set(found) else None

            found = _wait(registered, 90, "the deployments")
            for name, job in names.items():
                deployment = found[name]
                assert [s.schedule.cron for s in deployment.schedules] == [job.cron]
                assert all(s.schedule.timezone in (None, "UTC") and s.active
                           for s in deployment.schedules)
                assert set(deployment.tags) == set(job.tags)
                assert deployment.global_concurrency_limit.limit == 1
                assert deployment.entrypoint == job.flow.replace(":", ".")
            assert {a.name for a in client.read_automations()} >= {
                f"arena-{slug(season.id)}-run-failed", f"arena-{slug(season.id)}-cycle-overdue"}
            second = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True,
                                    text=True, timeout=120)
            assert second.returncode == 2, second.stderr
            assert "another arena serve runs on" in second.stderr
            assert f"'pid': {served.pid}" in second.stderr and "Traceback" not in second.stderr
            run = run_deployment(f"monitor/{slug(season.id)}-monitor", timeout=0)

            def finished():
                got = client.read_flow_run(run.id)
                return got if got.state.is_final() else None

            state = _wait(finished, 120, "the served monitor run")
            assert state.state.is_completed(), state.state
            assert state.name.startswith(f"{season.id} 20") and len(state.name) == len(
                f"{season.id} 2025-11-24 18:03"), state.name  # the season, the scheduled time
            assert f"season:{season.id}" in state.tags and "job:monitor" in state.tags
    finally:
        served.send_signal(signal.SIGTERM)
        out, _ = served.communicate(timeout=60)
    assert served.returncode in (0, 143), out
    assert "Traceback" not in out, out
    with get_client(sync_client=True) as client:
        left = [d for d in client.read_deployments() if d.name in names]
        assert len(left) == len(names) and all(d.paused for d in left), [
            (d.name, d.paused) for d in left]
        for deployment in to_deployments(list(names.values())):  # what the next start does
            deployment.apply()
        again = [d for d in client.read_deployments() if d.name in names]
        assert not any(d.paused for d in again)
        for d in again:  # the next tests share this server
            client.delete_deployment(d.id)
        for a in client.read_automations():
            if a.name.startswith(f"arena-{slug(season.id)}-"):
                client.delete_automation(a.id)
    assert not (lake.root / "_locks" / "serve.json").exists()  # the lock's holder left with it


def test_a_replayed_or_closed_season_is_never_served(tmp_path, capsys):
    """Nothing is registered for a season that has no schedule left: a replay, or a season
    closed after its last cycle (its deployments would turn Late and alert forever)."""
    replay = tmp_path / "replay"
    assert main(["replay", "--start", "2026-10-01", "--days", "1", "--symbols", "BTC,SPY",
                 "--players", "100", "--lake", str(replay), "--json"]) == 0
    capsys.readouterr()
    assert main(["serve", "--lake", str(replay)]) == 2
    err = capsys.readouterr().err
    assert "is a replay: it has no schedule to serve" in err and "nothing registered" in err
    live = Lake(tmp_path / "live")
    init_season(live, make_season("2026-12-01", 2, ["BTC", "SPY"]))
    (live.root / "season" / "closed.json").write_text(json.dumps(
        {"season": load_season(live).id, "closed_at": "2026-12-03T00:30:00+00:00"}))
    assert main(["serve", "--lake", str(live.root)]) == 2
    assert "was closed at 2026-12-03T00:30:00+00:00" in capsys.readouterr().err


def test_a_monitor_window_waits_while_the_cycle_holds_the_ledger_slot(
        prefect_server, local_storage, tmp_path_factory, tmp_path, universe):
    """The slot a cycle run holds (``ledger-<season>``) keeps a monitor run from watching until
    it is released: the run ends after the release, and what it records is written after it."""
    from arena.flows.monitor import monitor_flow
    from arena.flows.tasks import ledger_slot

    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)
    first = ts("2025-11-24 16:00")
    season = load_season(lake)
    contestants, _ = season_contestants(lake, {})
    play_season_cycle(lake, season, contestants, first, now=first)
    out: dict = {}
    def watch() -> None:
        out.update(monitor_flow(lake_root=str(lake.root), at="2025-11-24T18:10:00Z",
                                now="2025-11-24T18:10:00Z"))
        out["finished"] = time.time()

    monitor = threading.Thread(target=watch)
    with ledger_slot(season.id):  # what the cycle flow holds while it plays
        monitor.start()
        time.sleep(12)  # the monitor alone takes a few seconds
        assert monitor.is_alive() and Ledger(lake).monitor_records() == []
        released = time.time()
    monitor.join(timeout=120)
    assert out["end"] == "2025-11-24T18:00:00+00:00" and out["finished"] >= released
    assert out["contestants"] == ["momentum", "random"]
    windows = Ledger(lake).monitor_records()  # those that closed something
    written = [Ledger(lake).monitor_dir(k.start, k.end, k.contestant).stat().st_mtime
               for k in windows]
    assert all(t >= released for t in written)


def test_the_deploy_step_reads_the_lakes_season_or_refuses_on_one_line(two_providers, tmp_path,
                                                                      monkeypatch, capsys):
    """prefect.yaml's build step: the season of ``$ARENA_LAKE`` (what the deployments are
    templated with), or a refusal on one line with the error family's exit code - a lake
    without a season, a closed season, as ``arena serve`` refuses them."""
    from arena.flows.deployments import deployed_season

    season = load_season(two_providers)
    monkeypatch.setenv("ARENA_LAKE", str(two_providers.root))
    assert deployed_season() == {"id": season.id, "lake": str(two_providers.root.resolve()),
                                 "cycle_hour": 16}
    (two_providers.root / "season" / "closed.json").write_text(json.dumps(
        {"season": season.id, "closed_at": "2026-12-06T00:30:00+00:00"}))
    for lake, said in ((two_providers.root, "was closed at 2026-12-06T00:30:00+00:00"),
                       (tmp_path / "nowhere", "does not exist: start a season there first")):
        monkeypatch.setenv("ARENA_LAKE", str(lake))
        with pytest.raises(SystemExit) as stopped:
            deployed_season()
        assert stopped.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("prefect deploy: ") and said in err and err.count("\n") == 1, err


def _prefect_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    """``prefect deploy --all`` from the repository (its prefect.yaml), as an operator runs it."""
    from pathlib import Path

    import arena

    repo = Path(arena.__file__).resolve().parent.parent
    return subprocess.run([str(Path(sys.executable).parent / "prefect"), "--no-prompt", "deploy",
                           "--all"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)


def test_prefect_yaml_deploys_the_lakes_season_on_a_work_pool(prefect_server, tmp_path):
    """``prefect deploy --all`` with the repository's prefect.yaml (for workers on a pool):
    without ``$ARENA_LAKE`` it refuses on one line naming the variable and registers nothing;
    with it, the lake's season - a synthetic one here, its cycle at 14:00 - is deployed: every
    deployment tagged ``season:<id>`` (never an empty ``season:``), its lake as every run's
    lake, the cycle at the season's own hour, and one ingest deployment naming no provider (the
    flow takes the season's own); the same schedules and limits as ``arena serve``."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.settings import PREFECT_API_URL

    lake = Lake(tmp_path / "lake")
    init_season(lake, make_season("2026-12-01", 5, ["BTC", "SPY", "AAPL"], cycle_hour=14))
    season = load_season(lake)
    with get_client(sync_client=True) as client:
        if not any(p.name == "arena" for p in client.read_work_pools()):
            client.create_work_pool(WorkPoolCreate(name="arena", type="process"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["PREFECT_API_URL"] = PREFECT_API_URL.value()
    refused = _prefect_deploy(env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "prefect deploy: ARENA_LAKE is not set: export ARENA_LAKE=" in refused.stderr
    assert "Traceback" not in refused.stdout + refused.stderr
    with get_client(sync_client=True) as client:
        assert not [d for d in client.read_deployments() if d.work_pool_name == "arena"]

    done = _prefect_deploy({**env, "ARENA_LAKE": str(lake.root)})
    assert done.returncode == 0, done.stdout + done.stderr
    jobs = {j.name.removeprefix(f"{slug(season.id)}-"): j for j in season_jobs(lake, season)}
    expected = {"ingest": jobs["ingest-synthetic"], "monitor": jobs["monitor"],
                "cycle": jobs["cycle"], "publish": jobs["publish"]}
    assert expected["cycle"].cron == "10 14 * * *"
    with get_client(sync_client=True) as client:
        found = {d.name: d for d in client.read_deployments() if d.work_pool_name == "arena"}
    assert set(found) == set(expected)
    for name, job in expected.items():
        deployment = found[name]
        assert [s.schedule.cron for s in deployment.schedules] == [job.cron], name
        assert deployment.parameters == {"lake_root": str(lake.root.resolve())}, name
        assert deployment.global_concurrency_limit.limit == 1
        assert deployment.entrypoint.split(":")[1] == job.flow.split(":")[1]
        assert sorted(deployment.tags) == [f"job:{name}", f"season:{season.id}"], name


def test_two_workers_of_a_pool_run_flows_side_by_side(prefect_server, tmp_path):
    """Two process workers on one pool (as on two machines), one run at a time each: two runs
    that wait for each other at a barrier both complete, so each worker ran one."""
    from pathlib import Path

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.deployments import run_deployment
    from prefect.deployments.runner import EntrypointType
    from prefect.settings import PREFECT_API_URL

    import arena
    from tests.flows.pool_flow import barrier_flow

    repo = Path(arena.__file__).resolve().parent.parent
    pool = f"pool-{tmp_path.name[-10:].lower().replace('_', '-')}"
    with get_client(sync_client=True) as client:
        client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
    barrier_flow.to_deployment(name="barrier", entrypoint_type=EntrypointType.MODULE_PATH,
                               work_pool_name=pool).apply()
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(),
           "PREFECT_WORKER_QUERY_SECONDS": "1", "PREFECT_WORKER_PREFETCH_SECONDS": "1",
           "PYTHONPATH": str(repo)}
    # SIGINT as a shell gives it: a worker stops its flow run's process with SIGINT, and a test
    # run started in the background by a non-interactive shell inherits SIGINT ignored
    workers = [subprocess.Popen([str(Path(sys.executable).parent / "prefect"), "worker", "start",
                                 "--pool", pool, "--limit", "1", "--name", f"worker-{i}"],
                                env=env, cwd=repo, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
               for i in (1, 2)]
    try:
        runs = [run_deployment("pool-barrier/barrier", timeout=0,
                               parameters={"folder": str(tmp_path / "barrier")}) for _ in (1, 2)]
        with get_client(sync_client=True) as client:
            def finished():
                got = [client.read_flow_run(r.id) for r in runs]
                return got if all(r.state.is_final() for r in got) else None

            done = _wait(finished, 180, "both barrier runs")
        assert all(r.state.is_completed() for r in done), [r.state for r in done]
        assert len(list((tmp_path / "barrier").iterdir())) == 2  # two processes arrived
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        logs = [w.communicate(timeout=60)[0] for w in workers]
    for i, log in enumerate(logs, start=1):
        assert f"Worker 'worker-{i}' started!" in log and f"Worker 'worker-{i}' stopped!" in log
