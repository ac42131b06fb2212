"""``make run`` says nothing of its own once the venv is installed: its output is the demo's, so a
newcomer reads the demo's lines and the command to open next, not make's recipe lines. The
installed venv is stood in for by a folder whose ``arena`` prints its arguments."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _make_run(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "run",
                           f"VENV={venv}", *args], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith("MAKE")})


def _installed_venv(tmp_path: Path) -> Path:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    arena = venv / "bin" / "arena"
    arena.write_text('#!/bin/sh\necho "arena $*"\n')
    arena.chmod(0o755)
    (venv / "bin" / "python").symlink_to("/bin/true")
    (venv / ".installed").touch()  # newer than pyproject.toml: installed
    return venv


def test_make_run_prints_only_the_demos_output(tmp_path):
    done = _make_run(_installed_venv(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["arena demo"] and done.stderr == ""


def test_make_run_passes_the_model_and_its_server_to_the_demo(tmp_path):
    done = _make_run(_installed_venv(tmp_path), "MODEL=openai/m", "API_BASE=http://127.0.0.1:9/v1")
    assert done.stdout.split() == ["arena", "demo", "--model", "openai/m", "--api-base",
                                   "http://127.0.0.1:9/v1"]
