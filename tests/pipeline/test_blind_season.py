"""A blind season's secret: drawn once when the season is created, sealed in its lake, checked
wherever it is read; a season that needs it and lacks it is refused, never played open; and the
doors a blind season cannot keep closed stay shut (outside entrants, contests)."""

from __future__ import annotations

import json

import pytest

from arena.app.verify import verify
from arena.cli import main
from arena.data.lake import Lake
from arena.pipeline.contest import finchal
from arena.pipeline.outside import Arena, OutsideError
from arena.pipeline.season_config import (
    DamagedSeasonFile,
    SeasonConfigError,
    find_season,
    init_season,
    make_season,
    season_blinding,
)
from arena.pipeline.season_files import blinding_path

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


def test_outside_entrants_and_contests_cannot_play_blind(tmp_path):
    roster = tmp_path / "roster.yaml"
    roster.write_text("version: 1\ncontestants:\n  - {name: outsider, kind: entrant}\n")
    with pytest.raises(SeasonConfigError, match="cannot hold outside entrants \\(outsider\\)"):
        _blind(Lake(tmp_path / "a"), roster=roster)
    assert not (tmp_path / "a" / "season").exists()
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
