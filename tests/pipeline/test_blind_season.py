"""A blind season's secret: drawn once when the season is created, sealed in its lake, checked
wherever it is read; a season that needs it and lacks it is refused, never played open; and the
doors a blind season cannot keep closed stay shut (outside entrants, contests)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from arena.agents.roster import load_roster
from arena.app.verify import verify
from arena.cli import main
from arena.data.lake import Lake
from arena.ledger.store import Ledger
from arena.market.blind import BlindingError
from arena.pipeline.contest import finchal
from arena.pipeline.cycle import run_cycle
from arena.pipeline.outside import Arena, OutsideError
from arena.pipeline.season_config import (
    DamagedSeasonFile,
    SeasonConfigError,
    find_season,
    init_season,
    make_season,
    season_blinding,
    season_roster,
)
from arena.pipeline.season_files import blinding_path
from arena.pipeline.season_roster import add_entries
from tests.market_lakes import season_lake

SYMBOLS = ("BTC", "ETH", "SOL", "SPY", "AAPL")


def _blind(lake: Lake, **more):
    return init_season(lake, make_season("2026-12-14", 3, SYMBOLS, blind=True), **more)


def test_the_secret_is_drawn_once_sealed_and_kept_by_a_second_init(tmp_path):
    lake = Lake(tmp_path / "lake")
    config = _blind(lake, sectors=True)
    secret = season_blinding(lake, config)
    assert set(secret.names) == set(SYMBOLS) and secret.sectors
    body = json.loads(blinding_path(lake).read_text())
    assert "sha256" in body  # sealed with its digest, as the season's other files
    assert _blind(lake) == config  # the same season again: a no-op
    assert season_blinding(lake, config) == secret  # the secret is not drawn again
    assert season_blinding(lake, find_season(lake).model_copy(update={"blind": False})) is None


def test_a_blind_season_without_its_secret_is_refused_and_verify_names_a_changed_one(tmp_path):
    lake = Lake(tmp_path / "lake")
    config = _blind(lake)
    path = blinding_path(lake)
    body = json.loads(path.read_text())
    body["shift_weeks"] += 1  # one week less of disguise: not the sealed secret
    path.write_text(json.dumps(body))
    with pytest.raises(DamagedSeasonFile, match=r"blind\.json has changed"):
        season_blinding(lake, config)
    found = verify(lake)
    assert any("blind.json has changed" in f.problem for f in found.findings), found.findings
    path.unlink()
    with pytest.raises(DamagedSeasonFile, match="is blind and is never played open"):
        season_blinding(lake, config)


def test_verify_names_a_missing_secret_and_another_seasons_is_refused(tmp_path):
    lake, other = Lake(tmp_path / "lake"), Lake(tmp_path / "other")
    config = _blind(lake)
    init_season(other, make_season("2026-12-21", 3, SYMBOLS, blind=True))
    shutil.copy(blinding_path(other), blinding_path(lake))  # sealed, whole, but not its own
    with pytest.raises(DamagedSeasonFile, match="is the blinding of season '2026-12-21"):
        season_blinding(lake, config)
    assert any("blinding of season" in f.problem for f in verify(lake).findings)
    blinding_path(lake).unlink()
    assert any("blind.json is missing" in f.problem for f in verify(lake).findings)


def test_a_blind_lake_refuses_a_cycle_played_without_its_blinding(tmp_path, universe):
    lake = Lake(tmp_path / "lake")
    _blind(lake)
    with pytest.raises(BlindingError, match="is blind: its cycle is played under its blinding"):
        run_cycle(lake, "synthetic", universe.select(SYMBOLS), [],
                  pd.Timestamp("2026-12-14 16:00", tz="UTC"))
    assert not (lake.root / "ledger").exists()


def test_outside_entrants_and_contests_cannot_play_blind(tmp_path):
    roster = tmp_path / "roster.yaml"
    roster.write_text("version: 1\ncontestants:\n  - {name: outsider, kind: entrant}\n")
    with pytest.raises(SeasonConfigError, match="cannot hold outsider: outside entrants read"):
        _blind(Lake(tmp_path / "a"), roster=roster)
    assert not (tmp_path / "a" / "season").exists()
    lake = Lake(tmp_path / "c")  # nor can a roster change bring them in, or a replay
    season = _blind(lake)
    for entry in ({"name": "late", "kind": "entrant"},
                  {"name": "again", "kind": "replay", "ledger_source": str(tmp_path)}):
        with pytest.raises(SeasonConfigError, match="a blind season cannot hold"):
            add_entries(lake, season, [entry], pd.Timestamp("2026-12-01", tz="UTC"))
    assert season_roster(lake).names == load_roster().names
    with pytest.raises(SeasonConfigError, match="a contest cannot be played blind"):
        make_season("2026-12-14", 3, ("BTC", "ETH", "SPY"), blind=True,
                    contest=finchal(("BTC", "ETH")))
    lake = Lake(tmp_path / "b")
    with pytest.raises(OutsideError, match="played blind"):
        Arena(lake, _blind(lake))


def test_the_command_line_starts_a_blind_season(tmp_path, capsys):
    lake = tmp_path / "lake"
    assert main(["season", "init", "--lake", str(lake), "--start", "2026-12-14", "--days", "3",
                 "--symbols", ",".join(SYMBOLS), "--blind"]) == 0
    assert "played BLIND (its names are revealed when it ends)" in capsys.readouterr().out
    assert find_season(Lake(lake)).blind and blinding_path(Lake(lake)).is_file()
    assert main(["season", "init", "--lake", str(tmp_path / "other"), "--start", "2026-12-14",
                 "--blind-sectors"]) == 2
    assert "give --blind too" in capsys.readouterr().err


HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: equal-weight, kind: house, strategy: equal_weight}\n")


def test_a_live_blind_cycle_is_played_blind_and_recorded_real(tmp_path_factory, tmp_path,
                                                              universe, capsys):
    """The live path (arena season backfill -> the cycle job): the prompts the ledger keeps are
    blind, the fills real; the report says the season is blind and reveals nothing yet."""
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3, blind=True)
    assert main(["season", "backfill", "2025-11-24", "--lake", str(lake.root)]) == 0
    capsys.readouterr()
    secret = season_blinding(lake, find_season(lake))
    ledger = Ledger(lake)
    fills = [f for name in ("momentum", "equal-weight") for f in ledger.fills(name)]
    assert fills and all(f.symbol in secret.names for f in fills)  # real symbols
    [prompt] = {p.read_text() for p in (ledger.dir / "prompts").glob("*.txt")
                if "Daily review" in p.read_text()} or [""]
    assert "The market is shown BLIND" in prompt
    assert all(secret.name(f.symbol) in prompt for f in fills)
    report = (lake.root / "reports" / "season.html").read_text()
    assert "Played blind" in report and "Blind names revealed" not in report
