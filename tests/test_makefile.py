"""``make ui`` and ``make serve`` on another port than 4200: the UI's own API URL follows the
port (so the UI reaches its server), and the season's deployments are registered there."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from arena.app.serve import season_jobs
from arena.pipeline.season_config import load_season
from tests.market_lakes import season_lake

ROOT = Path(__file__).resolve().parents[1]
HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float) -> object:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as answer:
                return json.loads(answer.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _make(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(["make", "--no-print-directory", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _stop(process: subprocess.Popen) -> str:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        out, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, _ = process.communicate()
    return out


@pytest.mark.slow
def test_make_ui_and_make_serve_work_on_another_port(tmp_path, tmp_path_factory, universe):
    if not (ROOT / ".venv" / ".installed").is_file():
        pytest.fail("make ui and make serve run from the checkout's .venv (make run creates it)")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_API", "ARENA_"))}
    env.update(PREFECT_HOME=str(tmp_path / "prefect"), PREFECT_SERVER_ANALYTICS_ENABLED="false")
    ui = _make("ui", f"PORT={port}", env=env)
    serve = None
    try:
        settings = _get(f"http://127.0.0.1:{port}/ui-settings", timeout=120)
        assert settings["api_url"] == f"http://127.0.0.1:{port}/api"
        lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE)
        serve = _make("serve", f"PORT={port}", f"LAKE={lake.root}", env=env)
        wanted = {j.name for j in season_jobs(lake, load_season(lake))}
        deadline = time.monotonic() + 120
        while True:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/deployments/filter", data=b"{}",
                headers={"Content-Type": "application/json"}, method="POST")
            with urllib.request.urlopen(request, timeout=10) as answer:
                found = {d["name"] for d in json.loads(answer.read())}
            if wanted <= found:
                break
            assert time.monotonic() < deadline, f"not registered on port {port}: {found}"
            assert serve.poll() is None, serve.communicate()[0]
            time.sleep(1)
    finally:
        if serve is not None:
            _stop(serve)
        _stop(ui)
