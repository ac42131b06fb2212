"""The boot counter against a real Prefect server: the lake's count and the server variable's
give the three verdicts, shown as an artifact, in ``arena season status`` and in the report."""

from __future__ import annotations

import json
import shutil

import pytest

from arena.cli import main
from arena.data.lake import Lake
from arena.flows.tasks import slug
from arena.pipeline.season_config import init_season, make_season


def test_the_boot_counter_confirms_doubts_and_catches_a_wiped_lake(prefect_server, tmp_path,
                                                                   universe, capsys):
    from prefect.client.orchestration import get_client

    from arena.flows.persistence import StorageVolatile, boots_variable, check_persistence

    lake = Lake(tmp_path / "lake")
    season = make_season("2026-12-01", 5, universe.select(["BTC", "SPY"]).symbols,
                         season_id=f"boots-{tmp_path.name[-12:].lower()}")
    init_season(lake, season)
    assert check_persistence(lake, season.id).verdict == "unknown"  # the first start
    assert check_persistence(lake, season.id).verdict == "confirmed"
    shutil.rmtree(lake.root / "ops")  # the lake's disk lost what it was given
    with pytest.raises(StorageVolatile) as caught:  # the run fails: the season's alert fires
        check_persistence(lake, season.id)
    boot = caught.value.boot
    assert (boot.verdict, boot.count, boot.lake_count, boot.store_count) == ("volatile", 3, None, 2)
    with get_client(sync_client=True) as client:
        assert client.read_variable_by_name(boots_variable(season.id)).value == 3
        [artifact] = [a for a in client.read_latest_artifacts()
                      if a.key == f"storage-{slug(season.id)}"]
        assert "volatile" in artifact.data and "lost boots" in artifact.data
    assert main(["season", "status", "--json", "--lake", str(lake.root)]) == 0
    assert json.loads(capsys.readouterr().out)["storage"]["verdict"] == "volatile"
    assert main(["season", "status", "--lake", str(lake.root)]) == 0
    assert "storage volatile at boot 3" in capsys.readouterr().out


def test_the_nightly_publish_copies_the_lake_to_its_mirror_unless_a_restore_failed(
        prefect_server, local_storage, tmp_path, universe):
    from arena.data.persistence import OPS_DIR, RESTORE_FAILED, MirrorError
    from arena.flows.publish import publish_flow

    lake, mirror = Lake(tmp_path / "lake"), tmp_path / "mirror"
    init_season(lake, make_season("2026-12-01", 5, universe.select(["BTC", "SPY"]).symbols))
    out = publish_flow(lake_root=str(lake.root), mirror=str(mirror))
    assert not out["published"] and "no recorded cycle yet" in out["reason"]
    assert out["mirrored"] == ["season"]
    assert (mirror / "season" / "season.json").read_bytes() == \
        (lake.root / "season" / "season.json").read_bytes()
    (lake.root / OPS_DIR).mkdir()
    (lake.root / OPS_DIR / RESTORE_FAILED).write_text(json.dumps(
        {"mirror": str(mirror), "at": "2026-12-02T00:00:00+00:00", "restored": [],
         "error": "OSError: disk gone"}))
    (lake.root / "reports").mkdir()
    (lake.root / "reports" / "half.html").write_text("<p>")  # what a broken lake would upload
    with pytest.raises(MirrorError, match="refusing to upload"):
        publish_flow(lake_root=str(lake.root), mirror=str(mirror))
    assert sorted(p.name for p in mirror.iterdir()) == ["season"]


def test_serve_says_why_it_cannot_restore_an_empty_lake(tmp_path, capsys):
    assert main(["serve", "--lake", str(tmp_path / "lake"), "--mirror",
                 str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert "restore from" in err and "no mirror at" in err
    assert "uploads to the mirror are refused" in err


def test_serve_never_runs_a_lake_whose_restore_failed(tmp_path, universe, capsys):
    from arena.data.persistence import OPS_DIR, RESTORE_FAILED

    lake = Lake(tmp_path / "lake")
    init_season(lake, make_season("2026-12-01", 5, universe.select(["BTC", "SPY"]).symbols))
    (lake.root / OPS_DIR).mkdir()
    (lake.root / OPS_DIR / RESTORE_FAILED).write_text(json.dumps(
        {"mirror": "/mnt/mirror", "at": "2026-12-02T00:00:00+00:00", "restored": ["ledger"],
         "error": "OSError: cut"}))
    assert main(["serve", "--lake", str(lake.root)]) == 1
    err = capsys.readouterr().err
    assert "restore of 2026-12-02" in err and "move the lake aside" in err
