"""``arena league replay``: historical seasons one after another into a league, each starting
where the last ended, then the verdict; killed with SIGKILL in the middle of its second season,
run again it keeps the first, goes on with the second from its recorded cycles, and leaves the
same books as a run that was never stopped.

The killed league is the issue's own: played **blind**, with a language model over loopback HTTP
(:func:`tests.blind_leaks.blind_model`, which trades the neutral names) beside the house rules.
The two leagues draw the same blinding (``ReplayPlan.blind_seed``: the command line's own is
secret), so their books can be compared; the command line's ``--blind`` is run on its own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from arena.agents.roster import DEFAULT_ROSTER
from arena.pipeline.league import LeagueError, read_league
from tests.agents.openai_stub import OpenAIStub
from tests.blind_leaks import blind_model

ARGS = ["--from", "2026-01-05", "--seasons", "2", "--days", "2", "--symbols",
        "BTC,ETH,SOL,SPY", "--players", "20"]
# the league replay of ARGS, blind, through the job the command runs (with a blinding seed)
JOB = """
import datetime as dt, os, sys
from arena.app.league import LeagueReplayPlan, replay_league
from arena.app.replay import ReplayPlan
step = ReplayPlan(dt.date(2026, 1, 5), 2, sys.argv[2], ["BTC", "ETH", "SOL", "SPY"], None, 20,
                  blind=True, blind_seed=17)
done = replay_league(sys.argv[1], LeagueReplayPlan(step.start, 2, step), env=os.environ)
print(f"{len(done.played)} season(s) replayed now, {len(done.kept)} kept from before")
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return {**env, "STUB_KEY": "not-a-real-key"}


def _replay(league: Path, roster: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", JOB, str(league), str(roster)], env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _roster(path: Path, url: str) -> Path:
    """The house rules and one model, served by the loopback ``url``."""
    house = yaml.safe_load(DEFAULT_ROSTER.read_text())["contestants"]
    model = {"name": "model", "kind": "llm", "model": "openai/stub-model", "api_base": url,
             "api_key_env": "STUB_KEY", "knowledge_cutoff": "2027-06",
             "params": {"timeout": 30, "num_retries": 0}}
    path.write_text(yaml.safe_dump({"version": 1, "contestants": [*house, model]}))
    return path


def _books(league: Path) -> pd.DataFrame:
    """Every season's equity curve, by season and contestant: the books as the marts hold them."""
    frames = [pd.read_parquet(s.folder / "marts" / "equity_daily.parquet").assign(season=s.id)
              for s in read_league(league)]
    return (pd.concat(frames)[["season", "contestant", "cycle_at", "cash", "equity"]]
            .sort_values(["season", "contestant", "cycle_at"]).reset_index(drop=True))


@pytest.mark.slow
def test_a_killed_blind_league_replay_resumes_to_the_same_books(tmp_path):
    with OpenAIStub(handler=blind_model) as stub:
        _killed_and_resumed(tmp_path, _roster(tmp_path / "roster.yaml", stub.url))
        assert stub.requests  # the model played, over HTTP


def _killed_and_resumed(tmp_path: Path, roster: Path) -> None:
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    done, run = _replay(whole, roster), _replay(killed, roster)  # side by side: deterministic
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
    assert all(s.config.blind for s in seasons)
    assert seasons[1].config.follows == seasons[0].id
    assert seasons[1].config.first == seasons[0].config.last  # the windows meet

    again = _replay(killed, roster)
    out, err = again.communicate(timeout=600)
    assert again.returncode == 0, err[-3000:]
    assert "1 season(s) replayed now, 1 kept from before" in out
    books = _books(whole)
    pd.testing.assert_frame_equal(_books(killed), books)
    assert (books.groupby(["season", "contestant"])["cash"].nunique() > 1).any()  # it traded
    assert (books[books["contestant"] == "model"]["cash"] < 10_000).any()  # the model did
    verdict = pd.read_parquet(killed / "marts" / "league_verdict.parquet").set_index("model")
    # blind seasons of the synthetic market: none is contaminated, both count
    assert verdict.loc["model", "seasons"] == 2
    assert verdict.loc["model", "seasons_contaminated"] == 0


def test_the_command_line_replays_a_blind_league(tmp_path, capsys):
    from arena.cli import main

    league = tmp_path / "league"
    assert main(["league", "replay", str(league), "--from", "2026-01-05", "--seasons", "1",
                 "--days", "2", "--symbols", "BTC,ETH,SPY", "--players", "20", "--blind",
                 "--json"]) == 0
    [season] = read_league(league)
    assert season.config.blind and (season.folder / "season" / "blind.json").is_file()
    assert main(["league", "replay", str(league), "--from", "2026-01-05", "--seasons", "1",
                 "--days", "2", "--symbols", "BTC,ETH,SPY", "--players", "20"]) == 2
    assert "resume it with --blind" in capsys.readouterr().err


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
