"""One Prefect test server for every flow test (about 15 s to start)."""

import pytest


@pytest.fixture(scope="session")
def prefect_server():
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=60):
        yield


@pytest.fixture
def local_storage(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_LOCAL_STORAGE_PATH", str(tmp_path / "prefect-storage"))
