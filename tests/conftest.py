"""Shared fixtures. Tests reach no network except loopback."""

from __future__ import annotations

import os

# Before anything imports Prefect: no telemetry, no stray API, quiet logs.
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("DO_NOT_TRACK", "1")

import pandas as pd
import pytest

from arena.core.settings import prepare_process
from arena.core.universe import Universe, load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider

prepare_process()  # the test session is a process edge, as the arena command and the flows are


@pytest.fixture(scope="session")
def universe() -> Universe:
    """The default season's assets (GLD and USO, a contest's, only where a test names them)."""
    return load_universe().select(None)


@pytest.fixture(scope="session")
def synthetic() -> SyntheticProvider:
    return SyntheticProvider()


@pytest.fixture
def lake(tmp_path) -> Lake:
    return Lake(tmp_path / "lake")


def ts(value: str) -> pd.Timestamp:
    return pd.Timestamp(value, tz="UTC")


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module. Missing Chromium fails the tests; it never skips them."""
    from tests.browser import MISSING_CHROMIUM, chromium_available, launch

    if not chromium_available():
        pytest.fail(MISSING_CHROMIUM, pytrace=False)
    with launch() as context:
        yield context


@pytest.fixture(scope="session")
def s3_server():
    """An S3-compatible server on 127.0.0.1 (moto), for the market on object storage; its
    endpoint URL."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_bucket(s3_server, monkeypatch) -> str:
    """A new, empty bucket on :func:`s3_server`, with the environment a deployment gives the
    arena (credentials and endpoint, never in a URI); its name."""
    import uuid

    import boto3

    for name, value in {"AWS_ACCESS_KEY_ID": "arena-test", "AWS_SECRET_ACCESS_KEY": "arena-test",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": s3_server}.items():
        monkeypatch.setenv(name, value)
    bucket = f"arena-{uuid.uuid4().hex[:12]}"
    boto3.client("s3").create_bucket(Bucket=bucket)
    return bucket
