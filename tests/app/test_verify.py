"""Damage an operator meets, end to end through the ``arena`` command: a deleted ledger record
refuses its contestant's next cycle by name (no fresh book), ``arena season verify`` names every
damaged record and partition and how to restore it, and ``--restore-from`` the mirror puts the
season back so the contestant plays on from its real book."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from arena.cli import main
from arena.data.lake import Lake, PartitionKey
from arena.data.persistence import upload_lake
from arena.ledger import verified
from arena.ledger.chain import read_link
from arena.ledger.store import Ledger
from tests.conftest import ts
from tests.market_lakes import season_lake

HOUSE = ("contestants:\n"
         "  - {name: momentum, kind: house, strategy: momentum}\n"
         "  - {name: equal-weight, kind: house, strategy: equal_weight}\n")
DAY1, DAY2, DAY3 = "2025-11-24", "2025-11-25", "2025-11-26"


@pytest.fixture(scope="module")
def played_once(tmp_path_factory, universe):
    """A season of three days whose first two are played, mirrored after the second."""
    root = tmp_path_factory.mktemp("played")
    lake = season_lake(tmp_path_factory, universe, root / "lake", HOUSE, start=DAY1, days=3)
    for day in (DAY1, DAY2):
        assert main(["season", "backfill", day, "--no-publish", "--lake", str(lake.root)]) == 0
    upload_lake(lake, str(root / "mirror"))
    return root


@pytest.fixture
def played(played_once, tmp_path, capsys):
    """A copy of :func:`played_once`'s lake and mirror for one test to damage."""
    for name in ("lake", "mirror"):
        shutil.copytree(played_once / name, tmp_path / name, symlinks=True)
    capsys.readouterr()
    return Lake(tmp_path / "lake"), tmp_path / "mirror"


def _verify(lake, capsys, *extra):
    code = main(["season", "verify", "--lake", str(lake.root), *extra])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def test_a_whole_season_verifies(played, capsys):
    lake, _ = played
    ledger = Ledger(lake)
    records = sum(len(ledger.chain_keys(n)) for n in ("momentum", "equal-weight"))
    # two cycles each, and the monitor window between them of whoever's level was reached
    assert records == 4 + len(ledger.monitor_records())
    code, out, _ = _verify(lake, capsys)
    assert code == 0
    assert f"whole: 2 contestants ({records} chained records), " in out
    code = main(["season", "verify", "--lake", str(lake.root), "--json"])
    got = json.loads(capsys.readouterr().out)
    assert code == 0 and got["whole"] and got["records"] == records and got["findings"] == []
    assert got["partitions"] == len(lake.partitions()) > 0


def test_a_deleted_record_refuses_its_contestant_until_it_is_restored(played, capsys):
    lake, mirror = played
    ledger = Ledger(lake)
    book = ledger.portfolio("momentum")
    deleted = ledger.record_dir(ts(f"{DAY2} 16:00"), "momentum")
    shutil.rmtree(deleted)

    # the next cycle refuses momentum by name, records the other, exits 1
    assert main(["cycle", "--no-publish", "--json", "--lake", str(lake.root)]) == 1  # DAY3
    out, err = capsys.readouterr()
    assert f"{deleted} is missing: it is momentum's last record" in out
    assert "Traceback" not in out + err
    at = ts(f"{DAY3} 16:00")
    assert Ledger(lake).has(at, "equal-weight") and not Ledger(lake).has(at, "momentum")

    code, out, err = _verify(lake, capsys)
    assert code == 1
    assert f"ledger: {deleted} is missing" in out
    assert f"copy <mirror>/ledger/{deleted.relative_to(lake.root / 'ledger')} back" in out
    assert "1 damaged in" in err

    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and "restored from" in out and "whole:" in out
    assert Ledger(lake).portfolio("momentum") == book  # the real book, not $10,000

    assert main(["cycle", "--no-publish", "--lake", str(lake.root)]) == 0
    capsys.readouterr()
    assert Ledger(lake).has(at, "momentum")
    assert _verify(lake, capsys)[0] == 0


def test_a_changed_ledger_file_is_named_and_restored_from_the_mirror(played, capsys):
    lake, mirror = played
    fills = Ledger(lake).record_dir(ts(f"{DAY1} 16:00"), "momentum") / "fills.parquet"
    fills.write_bytes(b"")
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and f"ledger: {fills} has changed since it was recorded" in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0
    quarantined = list((lake.root / "quarantine").glob("verify-*/ledger/cycles/*/*/fills.parquet"))
    assert [q.stat().st_size for q in quarantined] == [0]  # the damaged copy is kept aside


def test_a_damaged_bar_partition_is_named_and_restored(played, capsys):
    lake, mirror = played
    key = PartitionKey("synthetic", "1d", "SOL")
    path = lake.root / key.relative
    good = path.read_bytes()
    rng = np.random.default_rng(7)
    body = bytearray(good)
    middle = len(body) // 2
    body[middle:middle + 64] = rng.integers(0, 256, 64, dtype=np.uint8).tobytes()
    path.write_bytes(bytes(body))
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and f"bars: {path} is damaged" in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and path.read_bytes() == good


def test_one_flipped_byte_in_a_daily_file_is_named_and_restored(played, capsys):
    """The break found on the landed product: one byte of a 1d partition changed a low in its
    ninth digit, and verify said the lake was whole."""
    lake, mirror = played
    path = lake.root / PartitionKey("synthetic", "1d", "BTC").relative
    good = path.read_bytes()
    table = Lake(lake.root).read_bar_table(PartitionKey("synthetic", "1d", "BTC"))
    low = np.float64(table.column("low")[3].as_py()).tobytes()
    at = good.find(low)
    assert at > 0  # the plain-encoded low is in the file: flip its lowest mantissa byte
    body = bytearray(good)
    body[at] ^= 0x01
    path.write_bytes(bytes(body))
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and f"bars: {path}" in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and path.read_bytes() == good


def test_a_deleted_15m_partition_is_named_and_restored(played, capsys):
    lake, mirror = played
    key = next(k for k in sorted(lake.partitions()) if k.interval == "15m")
    path = lake.root / key.relative
    good = path.read_bytes()
    path.unlink()
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and "bars: " in out and "missing file" in out and str(key) in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and path.read_bytes() == good
    code, out, _ = _verify(lake, capsys)
    assert code == 0


def test_a_mirror_without_a_good_copy_restores_nothing(played, capsys, tmp_path):
    lake, _ = played
    deleted = Ledger(lake).record_dir(ts(f"{DAY1} 16:00"), "equal-weight")
    shutil.rmtree(deleted)
    empty = tmp_path / "empty-mirror"
    empty.mkdir()
    code, out, _ = _verify(lake, capsys, "--restore-from", str(empty))
    assert code == 1 and f"ledger: {deleted} is missing" in out
    assert not deleted.exists()


# ------------------------------------------------------------- an older record, by the cycle
def _cycle_refuses_momentum(lake, capsys, damaged) -> None:
    """The next cycle (DAY3) refuses momentum naming ``damaged`` and the repair, records
    equal-weight, and exits 1."""
    assert main(["cycle", "--no-publish", "--json", "--lake", str(lake.root)]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert str(damaged) in out and "arena season verify --restore-from" in out
    at = ts(f"{DAY3} 16:00")
    assert Ledger(lake).has(at, "equal-weight") and not Ledger(lake).has(at, "momentum")


def test_a_deleted_older_record_refuses_the_next_cycle_until_it_is_restored(played, capsys):
    """The break found on the landed product: day 1's record of momentum deleted, the cycle of
    day 3 played momentum from a book without it (it bought ETH again), exit 0."""
    lake, mirror = played
    book = Ledger(lake).portfolio("momentum")
    first = Ledger(lake).record_dir(ts(f"{DAY1} 16:00"), "momentum")
    shutil.rmtree(first)
    _cycle_refuses_momentum(lake, capsys, first)
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and f"ledger: {first} is missing" in out and "restored from" in out
    assert Ledger(lake).portfolio("momentum") == book  # the real book, not a fold around it
    assert main(["cycle", "--no-publish", "--lake", str(lake.root)]) == 0
    capsys.readouterr()
    assert Ledger(lake).has(ts(f"{DAY3} 16:00"), "momentum")


@pytest.mark.parametrize(("name", "how"), [("fills.parquet", "changed"),
                                           ("equity.parquet", "emptied"),
                                           ("messages.parquet", "deleted"),
                                           ("chain.json", "changed")])
def test_a_damaged_file_of_an_older_record_refuses_the_next_cycle(played, capsys, name, how,
                                                                   monkeypatch):
    """Deleted: at the next cycle. Emptied or changed in place (its folder does not move): at
    the contestant's next sweep, which this cycle is made to be."""
    lake, _ = played
    path = Ledger(lake).record_dir(ts(f"{DAY1} 16:00"), "momentum") / name
    if how == "deleted":
        path.unlink()
    else:
        if how == "emptied":
            path.write_bytes(b"")
        else:
            _flip(path)
        monkeypatch.setattr(verified, "SWEEP_EVERY", 1)
    _cycle_refuses_momentum(lake, capsys, path)


# --------------------------------------------------------------- what else the season wrote
def test_a_changed_season_file_is_named_and_restored(played, capsys):
    lake, mirror = played
    config = lake.root / "season" / "season.json"
    config.write_text(config.read_text().replace('"days": 3', '"days": 30'))
    roster = lake.root / "season" / "roster.yaml"
    roster.write_text(roster.read_text().replace("momentum", "momentum-x"))
    code, out, _ = _verify(lake, capsys)
    assert code == 1
    assert f"season: {config} has changed since it was written" in out
    assert f"season: {roster} has changed since it was written" in out
    assert "copy <mirror>/season/season.json back" in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and out.count("restored from") == 2
    assert '"days": 3,' in config.read_text()


def test_a_roster_without_its_seal_is_damage_in_a_sealed_season(played, capsys):
    lake, _ = played
    roster = lake.root / "season" / "roster.yaml"
    lines = roster.read_text().splitlines(keepends=True)
    assert lines[-1].startswith("# sha256 ")
    roster.write_text("".join(lines[:-1]))
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and f"season: {roster} carries no digest" in out


def test_a_changed_or_missing_prompt_is_named_and_restored(played, capsys):
    lake, mirror = played
    prompts = sorted((lake.root / "ledger" / "prompts").glob("*.txt"))
    assert prompts
    changed, gone = prompts[0], prompts[-1]
    changed.write_text(changed.read_text() + " ")
    gone.unlink()
    code, out, _ = _verify(lake, capsys)
    assert code == 1
    assert f"prompts: {changed} has changed since it was stored" in out
    assert f"prompts: {gone} is missing: the record cycles/cycle=" in out
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and gone.is_file()


def test_a_last_record_deleted_with_its_head_is_found_by_the_verified_point(played, capsys):
    """Without the head, the chain one record shorter holds together; the verified point
    remembers the record, so verify names it (and the next cycle refuses the contestant)."""
    lake, mirror = played
    ledger = Ledger(lake)
    last = ledger.record_dir(ts(f"{DAY2} 16:00"), "momentum")
    shutil.rmtree(last)
    (ledger.dir / "_heads" / "contestant=momentum.json").unlink()
    code, out, _ = _verify(lake, capsys)
    assert code == 1 and f"ledger: {last} is missing: it was proven part of momentum's" in out
    _cycle_refuses_momentum(lake, capsys, last)
    code, out, _ = _verify(lake, capsys, "--restore-from", str(mirror))
    assert code == 0 and "restored from" in out and "healed: written again" in out


def test_a_head_one_record_behind_is_healed_not_damage(played, capsys):
    """A run stopped between a record's rename and its head's write: verify rolls the head
    forward and says so; nothing was lost, so the lake is whole (exit 0)."""
    lake, _ = played
    ledger = Ledger(lake)
    keys = ledger.chain_keys("momentum")
    head = ledger.dir / "_heads" / "contestant=momentum.json"
    before = read_link(ledger.dir / keys[-2])
    head.write_text(json.dumps({"key": before.key, "digest": before.digest}))
    code, out, _ = _verify(lake, capsys)
    assert code == 0 and "healed: rolled forward" in out and "whole:" in out
    assert json.loads(head.read_text())["key"] == keys[-1]
    assert _verify(lake, capsys)[1].count("healed") == 0


def test_a_head_missing_after_the_first_record_is_healed_not_damage(tmp_path, capsys,
                                                                     played):
    lake, _ = played
    ledger = Ledger(lake)
    for name in ("momentum", "equal-weight"):  # a season killed after its first record
        for key in ledger.chain_keys(name)[1:]:
            shutil.rmtree(ledger.dir / key)
        (ledger.dir / "_heads" / f"contestant={name}.json").unlink()
    shutil.rmtree(ledger.dir / "_verified")  # its first commit was the one killed
    code, out, _ = _verify(lake, capsys)
    assert code == 0 and out.count("healed: written again from the whole chain") == 2
    assert (ledger.dir / "_heads" / "contestant=momentum.json").is_file()


# ------------------------------------------------------------------------------ the warehouse
@pytest.fixture(scope="module")
def published_once(played_once, tmp_path_factory):
    """:func:`played_once`'s lake, published (its marts and warehouse with their digests)."""
    root = tmp_path_factory.mktemp("published")
    shutil.copytree(played_once / "lake", root / "lake", symlinks=True)
    assert main(["season", "publish", "--players", "100", "--lake", str(root / "lake")]) == 0
    return root / "lake"


@pytest.fixture
def published(published_once, tmp_path, capsys):
    shutil.copytree(published_once, tmp_path / "lake", symlinks=True)
    capsys.readouterr()
    return Lake(tmp_path / "lake")


def test_a_published_lake_verifies_and_a_changed_mart_or_warehouse_is_named(published,
                                                                            capsys):
    lake = published
    code, out, _ = _verify(lake, capsys)
    assert code == 0 and "warehouse:" not in out
    mart = lake.root / "marts" / "leaderboard.parquet"
    mart.write_bytes(mart.read_bytes()[:-8])
    warehouse = lake.root / "warehouse.duckdb"
    body = bytearray(warehouse.read_bytes())
    body[len(body) // 2] ^= 0x01
    warehouse.write_bytes(bytes(body))
    code, out, _ = _verify(lake, capsys)
    assert code == 1
    assert f"warehouse: {mart} has changed since it was published" in out
    assert f"warehouse: {warehouse} has changed since it was published" in out
    assert "to restore: arena season publish" in out


def test_a_warehouse_one_publication_behind_is_healed(published, capsys):
    """A publication stopped after swapping its marts in, before replacing the warehouse: the
    warehouse is the previous publication's, and dbt's database still the one the marts name."""
    from arena.ledger.chain import file_sha256
    from arena.pipeline.season_files import sealed_json

    lake = published
    warehouse = lake.root / "warehouse.duckdb"
    good = warehouse.read_bytes()
    body = bytearray(good)
    body[len(body) // 2] ^= 0x01
    warehouse.write_bytes(bytes(body))  # stands for the previous publication's warehouse
    previous = lake.root / ".marts.v-00000000000000000001"
    previous.mkdir()
    (previous / "_digests.json").write_text(sealed_json(
        {"marts": {}, "warehouse": file_sha256(warehouse)}))
    code, out, _ = _verify(lake, capsys)
    assert code == 0 and "warehouse: " in out and "healed: copied again" in out
    assert warehouse.read_bytes() == good


# ------------------------------------------------------------- the runbook's damage list, walked
RUNBOOK = Path(__file__).resolve().parents[2] / "docs" / "guides" / "runbook.md"
_FOUND = re.compile(r"`(arena [a-z ]+)` (\d)")


def _damage_list() -> list[tuple[str, list[tuple[str, int]]]]:
    """The rows of the runbook's damage list: each damage and its commands' exit codes."""
    text = RUNBOOK.read_text(encoding="utf-8")
    table = text.split("<!-- damage-list -->")[1].split("<!-- /damage-list -->")[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in table.strip().splitlines()[2:]]
    return [(damage, [(cmd, int(code)) for cmd, code in _FOUND.findall(found)])
            for damage, found, _what in rows]


def _flip(path: Path) -> None:
    body = bytearray(path.read_bytes())
    body[len(body) // 2] ^= 0x01
    path.write_bytes(bytes(body))


def _replace(path: Path) -> None:
    """``path`` replaced by a changed copy (a new file renamed over it, as editors save)."""
    copy = path.with_name(path.name + ".new")
    copy.write_bytes(path.read_bytes()[:-1] + b"\0")
    copy.replace(path)


def _record(lake: Lake, day: str, name: str = "momentum") -> Path:
    return Ledger(lake).record_dir(ts(f"{day} 16:00"), name)


def _held_15m(lake: Lake) -> Path:
    held = sorted(Ledger(lake).portfolio("momentum").positions)
    assert held, "momentum holds nothing after the second day"
    return lake.root / PartitionKey("synthetic", "15m", held[0]).relative


def _head_behind(lake: Lake) -> None:
    keys = Ledger(lake).chain_keys("momentum")
    before = read_link(Ledger(lake).dir / keys[-2])
    head = Ledger(lake).dir / "_heads" / "contestant=momentum.json"
    head.write_text(json.dumps({"key": before.key, "digest": before.digest}))


def _newest_and_head(lake: Lake) -> None:
    shutil.rmtree(Ledger(lake).dir / Ledger(lake).chain_keys("momentum")[-1])
    (Ledger(lake).dir / "_heads" / "contestant=momentum.json").unlink()


def _prompt(lake: Lake) -> None:
    prompts = sorted((lake.root / "ledger" / "prompts").glob("*.txt"))
    assert prompts, "the season stored no prompt text"
    _flip(prompts[0])


def _digest_record(lake: Lake) -> None:
    record = lake.root / "digests" / "bars" / "provider=synthetic" / "symbol=SOL.json"
    record.write_text("{not json")


DAMAGE = {
    "an older ledger record deleted": lambda lake: shutil.rmtree(_record(lake, DAY1)),
    "a file of an older ledger record deleted or replaced (copied or saved over)":
        lambda lake: _replace(_record(lake, DAY1) / "fills.parquet"),
    "a file of an older ledger record written over in place":
        lambda lake: _flip(_record(lake, DAY1) / "fills.parquet"),
    "a contestant's newest record deleted with its head": _newest_and_head,
    "a head one record behind (a run killed between a record and its head)": _head_behind,
    "a bar file of a traded asset changed or deleted":
        lambda lake: _flip(lake.root / PartitionKey("synthetic", "1d", "SOL").relative),
    "a benchmark's bar file changed or deleted":
        lambda lake: (lake.root / PartitionKey("synthetic", "1d", "BTC").relative).unlink(),
    "a held asset's 15-minute file changed or deleted": lambda lake: _held_15m(lake).unlink(),
    "a bar series' digest record unreadable": _digest_record,
    "`season.json`, the roster copy or its change log changed":
        lambda lake: (lake.root / "season" / "roster.yaml").write_text(
            (lake.root / "season" / "roster.yaml").read_text() + "# edited\n"),
    "a stored prompt changed or deleted": _prompt,
    "a published mart or `warehouse.duckdb` changed":
        lambda lake: _flip(lake.root / "warehouse.duckdb"),
}
COMMANDS = {  # each command of the list as the walk runs it on the damaged lake
    "arena cycle": ["cycle", "--no-publish"],
    "arena monitor": ["monitor", "--no-ingest", "--at", f"{DAY2}T19:00:00Z"],
    "arena season verify": ["season", "verify"],
}


def test_the_damage_list_names_every_walked_damage():
    rows = _damage_list()
    assert [damage for damage, _ in rows] == list(DAMAGE)
    assert all(found for _, found in rows) and {c for _, f in rows for c, _ in f} <= set(COMMANDS)


@pytest.mark.parametrize(("damage", "found"), _damage_list(), ids=[d for d, _ in _damage_list()])
def test_each_damage_of_the_list_is_found_as_it_says(damage, found, played_once, tmp_path,
                                                     capsys, request):
    """Each row on a fresh copy of the played season (the published one for the marts) per
    command: the damage done, the command run, its exit code the one the runbook gives."""
    source = (request.getfixturevalue("published_once") if "warehouse" in damage
              else played_once / "lake")
    for n, (command, code) in enumerate(found):
        lake = Lake(tmp_path / f"lake-{n}")
        shutil.copytree(source, lake.root, symlinks=True)
        DAMAGE[damage](lake)
        capsys.readouterr()
        got = main([*COMMANDS[command], "--lake", str(lake.root)])
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err
        assert got == code, f"{command} on {damage!r}: exit {got}, not {code}\n{out}\n{err}"
