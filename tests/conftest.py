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
    return load_universe()


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
