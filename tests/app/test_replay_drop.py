"""Replays of recorded bars (``--drop``): a files drop folder, as a publisher or an export of a
vendor's history fills it, is replayed as a season and as a league of seasons, open or blind;
a model with a knowledge cutoff after the window is contaminated in the open season and not in
the blind ones, and the league's verdict counts the blind seasons.

The drop holds hourly bars, funding rates and earnings dates written from the synthetic market
(the files provider reads any bars alike; the leak test plays recorded real prices,
``tests/pipeline/test_blind_leaks.py``)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from arena.agents.roster import DEFAULT_ROSTER
from arena.cli import main
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.pipeline.league import read_league
from arena.pipeline.season_config import find_season
from tests.agents.openai_stub import OpenAIStub
from tests.blind_leaks import blind_model

SYMBOLS = ["BTC", "ETH", "SPY", "AAPL"]
FROM, TO = pd.Timestamp("2025-01-01", tz="UTC"), pd.Timestamp("2026-01-10", tz="UTC")
SMALL = ["--days", "1", "--symbols", ",".join(SYMBOLS), "--players", "20"]
LEAGUE = ["--days", "2", "--symbols", ",".join(SYMBOLS), "--players", "20"]


@pytest.fixture(scope="module")
def drop(tmp_path_factory):
    """A files drop folder of hourly bars, funding and earnings of SYMBOLS."""
    root = tmp_path_factory.mktemp("drop")
    (root / "1h").mkdir()
    (root / "funding").mkdir()
    market = SyntheticProvider(seed=21)
    earnings = []
    for asset in load_universe().select(SYMBOLS):
        market.fetch_bars(asset, "1h", FROM, TO).to_csv(root / "1h" / f"{asset.symbol}.csv",
                                                        index=False)
        if asset.is_crypto:
            market.fetch_funding(asset, FROM, TO).to_csv(root / "funding" / f"{asset.symbol}.csv",
                                                         index=False)
        else:
            earnings += [{"symbol": asset.symbol, "date": f"{d:%Y-%m-%d}"}
                         for d in market.earnings_dates(asset, FROM, TO)]
    pd.DataFrame(earnings, columns=["symbol", "date"]).to_csv(root / "earnings.csv", index=False)
    return root


@pytest.fixture(scope="module")
def stub():
    with OpenAIStub(handler=blind_model) as server:
        yield server


@pytest.fixture
def roster(tmp_path, stub, monkeypatch):
    """The house rules and a model whose training data reaches past the window (2027-06)."""
    monkeypatch.setenv("STUB_KEY", "not-a-real-key")
    house = yaml.safe_load(DEFAULT_ROSTER.read_text())["contestants"]
    model = {"name": "model", "kind": "llm", "model": "openai/stub-model", "api_base": stub.url,
             "api_key_env": "STUB_KEY", "knowledge_cutoff": "2027-06",
             "params": {"timeout": 30, "num_retries": 0}}
    path = tmp_path / "roster.yaml"
    path.write_text(yaml.safe_dump({"version": 1, "contestants": [*house, model]}))
    return str(path)


def test_an_open_replay_of_recorded_bars_is_contaminated_for_a_later_model(tmp_path, drop,
                                                                            roster, capsys):
    lake = tmp_path / "open"
    assert main(["replay", "--start", "2026-01-05", *SMALL, "--drop", str(drop), "--roster",
                 roster, "--lake", str(lake)]) == 0
    out = capsys.readouterr().out
    assert f"on recorded bars from {drop}" in out and "SYNTHETIC" not in out.split("\n")[0]
    config = find_season(Lake(lake))
    assert set(config.providers.values()) == {"files"} and not config.synthetic
    board = pd.read_parquet(lake / "marts" / "leaderboard.parquet").set_index("contestant")
    assert board.loc["model", "contaminated"]
    assert board.loc["model", "fills"] > 0  # the model traded the recorded bars


def test_a_blind_league_of_recorded_bars_counts_every_season(tmp_path, drop, roster, capsys):
    league = tmp_path / "league"
    args = ["league", "replay", str(league), "--from", "2026-01-05", "--seasons", "2", *LEAGUE,
            "--drop", str(drop), "--roster", roster, "--blind"]
    assert main(args) == 0
    seasons = read_league(league)
    assert [s.state for s in seasons] == ["replayed", "replayed"]
    assert all(s.config.blind and set(s.config.providers.values()) == {"files"}
               for s in seasons)
    assert seasons[1].config.follows == seasons[0].id
    verdict = pd.read_parquet(league / "marts" / "league_verdict.parquet").set_index("model")
    assert verdict.loc["model", "seasons"] == 2 and verdict.loc["model", "seasons_contaminated"] == 0
    board = pd.read_parquet(seasons[0].folder / "marts" / "leaderboard.parquet")
    assert not board.set_index("contestant").loc["model", "contaminated"]
    capsys.readouterr()
    assert main(["league", "replay", str(league), "--from", "2026-01-05", "--seasons", "3",
                 *LEAGUE, "--roster", roster, "--blind"]) == 2  # the synthetic market now
    assert "resume it on the same market" in capsys.readouterr().err
    assert main(["league", "replay", str(tmp_path / "short"), "--from", "2026-01-05",
                 "--seasons", "2", *SMALL]) == 2
    assert "--days must be at least 2 in a league" in capsys.readouterr().err


def test_a_drop_that_is_not_there_or_a_seed_with_it_is_refused(tmp_path, drop, capsys):
    assert main(["replay", "--start", "2026-01-05", *SMALL, "--drop", str(tmp_path / "nope"),
                 "--lake", str(tmp_path / "a")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["replay", "--start", "2026-01-05", *SMALL, "--drop", str(drop), "--seed", "3",
                 "--lake", str(tmp_path / "b")]) == 2
    assert "has none" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
