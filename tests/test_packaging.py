"""The arena installs like a library: a wheel of the checkout, installed (not editable) into a
fresh virtual environment, runs the demo from any directory.

The new environment gets the dependencies of this one through a path file and installs the arena
itself with ``--no-deps --no-build-isolation --no-index``: nothing is downloaded. The folders the
repository keeps at its top (``flows/``, ``models/``, ``dbt_project/``, ``expectations/``) must
land under ``arena.*``, never as bare top-level packages, and dbt must write nothing into the
installed package (its target, logs and user file go to the lake).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP_FOLDERS = ("flows", "models", "dbt_project", "expectations")


def _checkout_copy(dest: Path) -> Path:
    """The repository's files (symbolic links kept) copied to ``dest``: a build never writes into
    the working tree."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.splitlines()
    for name in listed:
        source, target = ROOT / name, dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return dest


def _files(folder: Path) -> set[Path]:
    return {p.relative_to(folder) for p in folder.rglob("*") if "__pycache__" not in p.parts}


@pytest.mark.slow
def test_a_wheel_installed_in_a_fresh_venv_runs_the_demo_from_any_directory(tmp_path):
    source = _checkout_copy(tmp_path / "src")
    venv = tmp_path / "venv"
    base = Path(sys.base_prefix) / "bin" / "python3"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "arena_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps",
                              "--no-build-isolation", "--no-index", str(source)],
                             capture_output=True, text=True, cwd=tmp_path)
    assert install.returncode == 0, install.stderr[-3000:]

    package = site / "arena"
    assert (package / "cli" / "__init__.py").is_file() and not (package / "cli").is_symlink()
    for folder in TOP_FOLDERS:
        assert not (site / folder).exists(), f"a bare top-level {folder!r} was installed"
    for shipped in ("flows/cycle.py", "models/roster.yaml", "models/prompts/system.md",
                    "dbt_project/dbt_project.yml", "dbt_project/seeds/universe.csv",
                    "data/providers/symbols.csv",
                    "data/validation/expectations/candles.py",
                    "reporting/templates/season.html.j2", "reporting/templates/report.css"):
        assert (package / shipped).is_file(), f"{shipped} is missing from the installed package"
    before = _files(package)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ARENA_LAKE")}
    lake = tmp_path / "lake"
    demo = subprocess.run([str(venv / "bin" / "arena"), "demo", "--lake", str(lake), "--days", "2",
                           "--symbols", "BTC,ETH,SPY,AAPL", "--players", "500", "--json"],
                          capture_output=True, text=True, cwd=elsewhere, env=env, timeout=900)
    assert demo.returncode == 0, demo.stderr[-3000:]
    result = json.loads(demo.stdout)
    assert {row["contestant"] for row in result["leaderboard"]} >= {"momentum", "random"}
    assert Path(result["report"]).is_file() and Path(result["warehouse"]).is_file()
    assert _files(package) == before, "the demo wrote into the installed package"
    assert list(elsewhere.iterdir()) == []  # nothing written into the working directory
    where = subprocess.run([str(python), "-c", "import arena; print(arena.__file__)"],
                           capture_output=True, text=True, cwd=elsewhere, env=env, check=True)
    assert Path(where.stdout.strip()).is_relative_to(site)
