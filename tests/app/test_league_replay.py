"""``arena league replay``: historical seasons one after another into a league, each starting
where the last ended, then the verdict; killed with SIGKILL in the middle of its second season,
run again it keeps the first, goes on with the second from its recorded cycles, and leaves the
same books as a run that was never stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from arena.pipeline.league import LeagueError, read_league

ARGS = ["--from", "2026-01-05", "--seasons", "2", "--days", "2", "--symbols",
        "BTC,ETH,SOL,SPY", "--players", "20"]


def _replay(league: Path, *extra: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return subprocess.Popen([sys.executable, "-m", "arena.cli", "league", "replay", str(league),
                             *ARGS, *extra], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _books(league: Path) -> pd.DataFrame:
    """Every season's equity curve, by season and contestant: the books as the marts hold them."""
    frames = [pd.read_parquet(s.folder / "marts" / "equity_daily.parquet").assign(season=s.id)
              for s in read_league(league)]
    return (pd.concat(frames)[["season", "contestant", "cycle_at", "cash", "equity"]]
            .sort_values(["season", "contestant", "cycle_at"]).reset_index(drop=True))


@pytest.mark.slow
def test_a_killed_league_replay_resumes_to_the_same_books(tmp_path):
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    done, run = _replay(whole), _replay(killed)  # side by side: the books are deterministic
    second = None
    deadline = time.monotonic() + 300
    while second is None or not (second.is_dir() and any(second.rglob("*.parquet"))):
        assert run.poll() is None, run.communicate()[1][-3000:]  # killed inside season 2
        assert time.monotonic() < deadline, "the second season never started"
        try:  # a season's folder is there a moment before its season.json
            held = read_league(killed) if killed.is_dir() else []
        except LeagueError:
            held = []
        if len(held) == 2:
            second = held[1].folder / "ledger"
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=60)
    assert [s.state for s in read_league(killed)][1] == "replaying"
    out, err = done.communicate(timeout=600)
    assert done.returncode == 0, err[-3000:]
    assert "2 season(s) replayed now, 0 kept from before" in out
    seasons = read_league(whole)
    assert [s.state for s in seasons] == ["replayed", "replayed"]
    assert seasons[1].config.follows == seasons[0].id
    assert seasons[1].config.first == seasons[0].config.last  # the windows meet
    assert "seasons read: every counted season" in out

    again = _replay(killed)
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    assert "1 season(s) replayed now, 1 kept from before" in out
    books = _books(whole)
    pd.testing.assert_frame_equal(_books(killed), books)
    assert (books.groupby(["season", "contestant"])["cash"].nunique() > 1).any()  # it traded


def test_a_league_that_starts_elsewhere_or_holds_a_live_season_is_refused(tmp_path, capsys):
    from arena.cli import main

    league = tmp_path / "league"
    assert main(["season", "init", "--league", str(league), "--start", "2026-01-05", "--days",
                 "2"]) == 0
    capsys.readouterr()
    assert main(["league", "replay", str(league), "--from", "2026-02-01", "--seasons", "1"]) == 2
    assert "starts 2026-01-05, not 2026-02-01" in capsys.readouterr().err
    assert main(["league", "replay", str(league), "--from", "2026-01-05", "--seasons", "1"]) == 2
    assert "holds the live season" in capsys.readouterr().err
    assert main(["league", "replay", str(league), "--from", "2026-01-05", "--seasons", "0"]) == 2
    assert "--seasons must be at least 1" in capsys.readouterr().err
