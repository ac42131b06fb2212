"""Every flow module run as ``python -m`` does (runpy, as ``__main__``): ``--help`` lists its
options and exits 0 without running anything (``python -m flows.season --help`` started a whole
season before), and an option or a value it does not take is refused (exit 2) before anything
runs."""

from __future__ import annotations

import os
import runpy
import sys
import warnings
from pathlib import Path

import pytest

import arena

FLOWS = Path(arena.__file__).resolve().parent.parent / "flows"
STARTED_BY_SERVE = {"persistence"}  # the storage check: arena serve runs it at every start


def _modules() -> list[str]:
    return sorted(p.stem for p in FLOWS.glob("*.py") if p.stem != "__init__")


def _run_module(module: str, argv: list[str]) -> int:
    """``python -m arena.flows.<module> ARGV`` in this process; its exit code (0: it returned)."""
    old = sys.argv
    sys.argv = [module, *argv]
    try:
        with warnings.catch_warnings():  # the module is imported already: run again as __main__
            warnings.simplefilter("ignore", RuntimeWarning)
            runpy.run_module(f"arena.flows.{module}", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        sys.argv = old
    return 0


def test_every_flow_module_answers_help_without_running(tmp_path, monkeypatch, capsys):
    lake = tmp_path / "lake"
    monkeypatch.setenv("ARENA_LAKE", str(lake))
    monkeypatch.chdir(tmp_path)
    runnable = {m for m in _modules() if 'if __name__ == "__main__":' in
                (FLOWS / f"{m}.py").read_text(encoding="utf-8")}
    with_flows = {m for m in _modules() if "@flow(" in (FLOWS / f"{m}.py").read_text("utf-8")}
    assert runnable == with_flows - STARTED_BY_SERVE and runnable  # every job's flow
    for module in _modules():
        assert _run_module(module, ["--help"]) == 0, module
        out = capsys.readouterr().out
        if module in runnable:
            assert out.startswith(f"usage: python -m arena.flows.{module} "), out
            assert "--lake-root LAKE_ROOT" in out, out
        else:
            assert out == "", module
        assert _run_module(module, ["--no-such-option"]) == (2 if module in runnable else 0)
        err = capsys.readouterr().err
        assert module not in runnable or "unrecognized arguments: --no-such-option" in err
    assert sorted(os.listdir(tmp_path)) == []  # no lake, no demo lake: nothing ran


@pytest.mark.parametrize("argv, exit_code", [(["--days", "two"], 2), (["--ingest", "hourly"], 2)])
def test_a_value_the_flow_cannot_take_is_refused_before_it_runs(argv, exit_code, tmp_path,
                                                                monkeypatch, capsys):
    monkeypatch.setenv("ARENA_LAKE", str(tmp_path / "lake"))
    assert _run_module("season", argv) == exit_code
    assert "error: argument" in capsys.readouterr().err
    assert not (tmp_path / "lake").exists()
