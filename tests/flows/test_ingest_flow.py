"""Smoke tests of the ingest flow under a real (temporary) Prefect server."""


import json

from arena.data.lake import Lake
from tests.conftest import ts
from tests.flows.artifacts import run_artifacts


def test_ingest_flow_publishes_and_reports(prefect_server, local_storage, tmp_path):
    from prefect.client.orchestration import get_client

    from arena.flows.ingest import ingest_flow

    lake_root = tmp_path / "lake"
    state = ingest_flow(source="synthetic", symbols=["ETH", "AAPL"], start="2025-10-06",
                        end="2025-10-20", lake_root=str(lake_root), return_state=True)
    assert state.is_completed()
    manifest = state.result()
    assert manifest["status"] == "published" and manifest["synthetic"]
    assert len(Lake(lake_root).partitions()) == 2 * 5
    assert (lake_root / "validation" / "docs").is_dir()

    with get_client(sync_client=True) as client:
        artifacts = client.read_artifacts()
    keys = {a.key for a in artifacts}
    assert {"ingest-assets", "ingest-report"} <= keys
    # both artifacts of the run say the prices are synthetic
    mine = {a.key: a for a in run_artifacts(state.state_details.flow_run_id)}
    assert "SYNTHETIC market data: not real prices" in mine["ingest-assets"].description
    assert {r["symbol"] for r in json.loads(mine["ingest-assets"].data)} == {"ETH", "AAPL"}
    assert "SYNTHETIC" in mine["ingest-report"].data
    assert all(a.description for a in mine.values())  # every artifact says what it is


def test_a_seasons_ingest_artifacts_carry_its_name(prefect_server, local_storage, tmp_path):
    """Into a synthetic season's lake, a run that names no provider ingests the season's own
    (the synthetic market); its artifacts carry the season's name, and the run is named after
    the season and its time and tagged with the season and the job."""
    from prefect.client.orchestration import get_client

    from arena.flows.ingest import ingest_flow
    from arena.pipeline.season_config import init_season, make_season

    lake = Lake(tmp_path / "lake")
    season = init_season(lake, make_season("2025-10-20", 3, ["ETH", "SPY", "BTC"]))
    state = ingest_flow(start="2025-10-06", end="2025-10-08", lake_root=str(lake.root),
                        now="2025-10-08T00:05:00Z", return_state=True)
    assert state.is_completed(), state
    mine = {a.key: a for a in run_artifacts(state.state_details.flow_run_id)}
    assert set(mine) == {f"2025-10-20-synthetic-{k}"
                         for k in ("ingest-assets", "ingest-report", "validation-report")}
    assert all(f"season {season.id}" in a.description for a in mine.values())
    assert state.result()["provider"] == "synthetic"
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(state.state_details.flow_run_id)
    assert run.name.startswith(f"{season.id} 20") and len(run.name) == len(
        f"{season.id} 2025-10-08 00:05"), run.name
    assert sorted(run.tags) == ["job:ingest", f"season:{season.id}"]


def test_ingest_flow_fails_loudly_and_publishes_nothing(prefect_server, local_storage, tmp_path):
    from arena.flows.ingest import ingest_flow

    drop = tmp_path / "drop" / "1h"
    drop.mkdir(parents=True)
    (drop / "ETH.csv").write_text("<html><body>Please verify you are a human</body></html>")
    lake_root = tmp_path / "lake"
    state = ingest_flow(source="files", drop=str(tmp_path / "drop"), symbols=["ETH"],
                        start="2025-10-06", end="2025-10-20", lake_root=str(lake_root),
                        now=str(ts("2025-10-20 01:00")), return_state=True)
    assert state.is_failed()
    assert Lake(lake_root).partitions() == []
    assert len(Lake(lake_root).manifests()) == 1
    # a real provider's run is not labelled synthetic
    mine = {a.key: a for a in run_artifacts(state.state_details.flow_run_id)}
    assert "Market data: files" in mine["ingest-assets"].description
    assert not any("SYNTHETIC" in f"{a.description}{a.data}" for a in mine.values())


def test_ingest_flow_publishes_the_good_assets_then_fails_naming_the_bad(
        prefect_server, local_storage, tmp_path):
    from arena.core.universe import load_universe
    from arena.data.providers.synthetic import SyntheticProvider
    from arena.flows.ingest import ingest_flow

    drop = tmp_path / "drop" / "1h"
    drop.mkdir(parents=True)
    eth = SyntheticProvider().fetch_bars(load_universe()["ETH"], "1h", ts("2025-10-06"),
                                         ts("2025-10-20"))
    eth.assign(timestamp=eth.timestamp.dt.strftime("%Y-%m-%dT%H:%M:%SZ")).to_csv(
        drop / "ETH.csv", index=False)
    (drop / "SOL.csv").write_text("<html><body>Please verify you are a human</body></html>")
    lake_root = tmp_path / "lake"
    state = ingest_flow(source="files", drop=str(tmp_path / "drop"), symbols=["ETH", "SOL"],
                        start="2025-10-06", end="2025-10-20", lake_root=str(lake_root),
                        now=str(ts("2025-10-20 01:00")), return_state=True)
    assert state.is_failed()
    error = state.result(raise_on_failure=False)
    assert "failed for SOL (published ETH)" in str(error)
    assert {(k.symbol, k.interval) for k in Lake(lake_root).partitions()} == {
        ("ETH", i) for i in ("1h", "4h", "1d", "1w")}
    manifest = json.loads(Lake(lake_root).manifests()[0].read_text())
    assert manifest["status"] == "partial" and manifest["published"] == ["ETH"]
    assert manifest["assets"]["SOL"]["status"] == "fetch_failed"
    mine = {a.key: a for a in run_artifacts(state.state_details.flow_run_id)}
    rows = {r["symbol"]: r for r in json.loads(mine["ingest-assets"].data)}
    assert rows["ETH"]["status"] == "published" and rows["SOL"]["status"] == "fetch_failed"
    assert "Published: ETH" in mine["ingest-report"].data


class _Flaky:
    """A provider that is rate limited twice, then answers; or always refuses the symbol."""

    name = "flaky"
    intervals = frozenset({"1h"})

    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    def supports(self, asset) -> bool:
        return True

    def fetch_bars(self, asset, interval, start, end):
        from arena.data.providers.synthetic import SyntheticProvider

        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return SyntheticProvider().fetch_bars(asset, interval, start, end)

    def fetch_funding(self, asset, start, end):
        from arena.data.errors import UnsupportedError

        raise UnsupportedError("no funding here", provider=self.name)

    def earnings_dates(self, asset, start, end):
        return []

    def fetch_events(self, asset, start, end):
        from arena.data.providers.base import empty_events

        return empty_events()


def test_fetch_retries_only_transient_errors(prefect_server, local_storage):
    """The fetch step's retry policy (rate limits and outages, not a bad symbol) is the task's:
    the command line's runner honours the same one (tests/core/test_runner.py)."""
    from prefect import flow

    from arena.core.universe import load_universe
    from arena.data.errors import BadSymbolError, RateLimitedError
    from arena.data.ingest import fetch, plan_ingest
    from arena.flows.tasks import as_task

    universe = load_universe().select(["ETH"])
    quick = as_task(fetch).with_options(retry_delay_seconds=0)

    @flow
    def one(provider):
        plan = plan_ingest(provider, universe, start=ts("2025-10-06"), end=ts("2025-10-07"),
                           now=ts("2025-10-08"))
        return quick(universe["ETH"], provider, plan, None, return_state=True)

    limited = _Flaky([RateLimitedError("429", provider="flaky"), RateLimitedError("429")])
    state = one(limited)
    assert state.is_completed() and limited.calls == 3
    assert len(state.result().base) == 24

    unknown = _Flaky([BadSymbolError("unknown symbol", provider="flaky")] * 5)
    state = one(unknown, return_state=True)  # the flow fails with its task
    assert state.is_failed() and unknown.calls == 1
