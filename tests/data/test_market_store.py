"""The market data on object storage: an S3-compatible server on 127.0.0.1 (moto) holds the bars,
funding and earnings of a lake whose everything else stays on local disk."""

from __future__ import annotations

import json
import pickle

import boto3
import pandas as pd
import pytest

import arena.data.market_store as market_store
from arena.cli import main
from arena.data.ingest import IngestError, run_ingest
from arena.data.lake import Lake, PartitionKey, TableKey
from arena.data.market_store import POINTER, MarketError, ObjectMarket, set_market
from arena.pipeline.warehouse import bars_dir, dbt_args, open_built, snapshot_market
from tests.conftest import ts

START, END = ts("2025-10-06"), ts("2025-10-20")
SYMBOLS = ["ETH", "AAPL"]


def _objects(bucket: str, prefix: str = "") -> list[str]:
    """The bucket's objects under ``prefix``, without the empty folder markers Arrow leaves."""
    listing = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return sorted(o["Key"] for o in listing.get("Contents", []) if not o["Key"].endswith("/"))


def _remote(tmp_path, bucket: str, name: str = "remote") -> Lake:
    root = tmp_path / name
    set_market(root, f"s3://{bucket}/market")
    return Lake(root)


def _stored(lake: Lake) -> dict[str, pd.DataFrame]:
    out = {str(k): lake.read_bars(k) for k in lake.partitions()}
    out.update({str(k): lake.read_table(k) for k in (TableKey("funding", "synthetic", "ETH"),
                                                     TableKey("earnings", "synthetic"))})
    return out


def _assert_same(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    assert sorted(a) == sorted(b)
    for key in a:
        pd.testing.assert_frame_equal(a[key], b[key], obj=key)


def test_an_ingest_on_object_storage_reads_back_as_on_local_disk(tmp_path, universe, synthetic,
                                                                  s3_bucket):
    local, remote = Lake(tmp_path / "local"), _remote(tmp_path, s3_bucket)
    sub = universe.select(SYMBOLS)
    for lake in (local, remote):
        run_ingest(synthetic, sub, start=START, end=END, lake=lake)
    _assert_same(_stored(remote), _stored(local))
    assert len(remote.partitions()) == 10 and not (remote.root / "bars").exists()
    assert not (remote.root / "funding").exists() and not (remote.root / "earnings").exists()
    # the lake's own records stay on its disk, and name where the bars went
    manifest = json.loads(remote.manifests()[-1].read_text())
    assert manifest["market"] == f"s3://{s3_bucket}/market"
    # one pointer, and one version of each key it names
    pointer = json.loads(boto3.client("s3").get_object(
        Bucket=s3_bucket, Key=f"market/{POINTER}")["Body"].read())["files"]
    assert sorted(pointer) == sorted([k.relative.as_posix() for k in remote.partitions()]
                                     + ["earnings/provider=synthetic/data.parquet",
                                        "funding/provider=synthetic/symbol=ETH/data.parquet"])
    data = [o for o in _objects(s3_bucket) if not o.startswith("market/_pointers/")]
    assert data == sorted([f"market/{POINTER}", *(f"market/{v}" for v in pointer.values())])

    # an incremental run: still the same data as on disk; the previous version is kept
    for lake in (local, remote):
        run_ingest(synthetic, sub, start=START, end=ts("2025-10-27"), lake=lake)
    _assert_same(_stored(remote), _stored(local))
    hourly = "market/bars/provider=synthetic/interval=1h/symbol=ETH/"
    assert len(_objects(s3_bucket, hourly)) == 2


def test_a_failed_or_interrupted_publication_shows_nothing_and_leaves_no_object(
        tmp_path, monkeypatch, universe, synthetic, s3_bucket):
    remote = _remote(tmp_path, s3_bucket)
    sub = universe.select(["ETH"])
    run_ingest(synthetic, sub, start=START, end=END, lake=remote)
    before, objects = _stored(remote), _objects(s3_bucket)

    real_put = ObjectMarket._put

    def refused(self, relative, body):
        if relative == POINTER:
            raise OSError("When uploading part for key 'market/_current.json': connection reset")
        real_put(self, relative, body)

    with monkeypatch.context() as m:  # the pointer (the step that publishes) cannot be written
        m.setattr(ObjectMarket, "_put", refused)
        with pytest.raises(IngestError, match="connection reset") as err:
            run_ingest(synthetic, sub, start=START, end=ts("2025-10-27"), lake=remote)
    assert err.value.manifest["assets"]["ETH"]["status"] != "published"
    _assert_same(_stored(remote), before)
    assert _objects(s3_bucket) == objects  # the new versions were taken back

    real_upload, calls = market_store._upload, []

    def interrupted(fs, src, dst):
        calls.append(dst)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real_upload(fs, src, dst)

    with monkeypatch.context() as m:  # Ctrl-C between two uploads of one asset
        m.setattr(market_store, "_upload", interrupted)
        with pytest.raises(KeyboardInterrupt):
            run_ingest(synthetic, sub, start=START, end=ts("2025-10-27"), lake=remote)
    _assert_same(_stored(remote), before)
    assert _objects(s3_bucket) == objects
    # and the next run publishes as if nothing had happened
    run_ingest(synthetic, sub, start=START, end=ts("2025-10-27"), lake=remote)
    assert remote.read_bars(PartitionKey("synthetic", "1h", "ETH")).timestamp.iloc[-1] \
        == ts("2025-10-26 23:00")


def test_a_reader_of_the_previous_pointer_can_finish(tmp_path, s3_bucket):
    """A publication keeps the previous version of each key (a reader that read the pointer
    just before can still open it); the one before that goes."""
    market = ObjectMarket(f"s3://{s3_bucket}/m")
    key = "bars/provider=x/interval=1d/symbol=A/data.parquet"
    versions = []
    for n in range(3):
        staged = tmp_path / f"staged-{n}.parquet"
        staged.write_bytes(f"version {n}".encode())
        market.publish({key: staged}, tmp_path)
        versions.append(market.current()[key])
        assert market.open(key).read() == f"version {n}".encode()
    assert len(set(versions)) == 3
    kept = {o.removeprefix("m/") for o in _objects(s3_bucket, "m/bars/")}
    assert kept == set(versions[1:])  # current and previous


def test_dbt_reads_the_bars_of_an_object_store_market(tmp_path, universe, synthetic, s3_bucket):
    from dbt.cli.main import dbtRunner

    remote = _remote(tmp_path, s3_bucket)
    run_ingest(synthetic, universe.select(SYMBOLS), start=START, end=END, lake=remote)
    assert snapshot_market(remote) == 10
    assert bars_dir(remote) == remote.root.resolve() / "dbt" / "market" / "bars"
    result = dbtRunner().invoke(dbt_args(remote, "run", "--select", "stg_lake__bars", "--quiet"))
    assert result.success, result.exception
    with open_built(remote.root / "dbt" / "warehouse.duckdb") as con:
        rows = con.execute("select bar_interval, symbol, count(*) from staging.stg_lake__bars "
                           "group by all order by all").fetchall()
    assert rows == sorted((k.interval, k.symbol, len(remote.read_bars(k)))
                          for k in remote.partitions())


def test_a_lake_with_its_market_on_a_uri_travels_to_a_worker(tmp_path, universe, synthetic,
                                                             s3_bucket):
    remote = _remote(tmp_path, s3_bucket)
    run_ingest(synthetic, universe.select(["ETH"]), start=START, end=END, lake=remote)
    remote.read_bars(PartitionKey("synthetic", "1d", "ETH"))  # the connection is open
    copy = pickle.loads(pickle.dumps(remote))
    assert copy.market.uri == remote.market.uri
    pd.testing.assert_frame_equal(copy.read_bars(PartitionKey("synthetic", "1d", "ETH")),
                                  remote.read_bars(PartitionKey("synthetic", "1d", "ETH")))
    # a process that opens the lake by its path alone finds the same market
    assert Lake(str(remote.root)).market.describe() == f"s3://{s3_bucket}/market"


def test_the_market_command_shows_sets_and_refuses(tmp_path, universe, synthetic, s3_bucket,
                                                   capsys):
    root = tmp_path / "lake"
    assert main(["lake", "market", "--lake", str(root), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"lake": str(root), "market": str(root),
                                                   "partitions": 0}
    for uri, why in ((f"s3://key:secret@{s3_bucket}/m", "credentials"),
                     (f"s3://{s3_bucket}/m?secret_key=abc", "secret_key"),
                     ("s3://no-such-bucket/m", "no bucket 'no-such-bucket'"),
                     ("s3://", "names no bucket")):
        assert main(["lake", "market", uri, "--lake", str(root)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("arena lake market: ") and why in err, err
        assert not (root / "ops" / "market.json").exists()
    assert main(["lake", "market", f"s3://{s3_bucket}/m", "--lake", str(root)]) == 0
    assert f"lives at s3://{s3_bucket}/m" in capsys.readouterr().out
    run_ingest(synthetic, universe.select(["ETH"]), start=START, end=END, lake=Lake(root))
    assert main(["lake", "market", "--lake", str(root)]) == 0
    assert f"market data at s3://{s3_bucket}/m (5 bar partitions)" in capsys.readouterr().out
    # a market holding data never moves under its lake
    assert main(["lake", "market", str(tmp_path / "elsewhere"), "--lake", str(root)]) == 2
    assert "already holds market data" in capsys.readouterr().err
    with pytest.raises(MarketError, match="already holds market data"):
        set_market(root, str(root))
    # a damaged record is named, not a traceback
    (root / "ops" / "market.json").write_text("{not json")
    assert main(["lake", "market", "--lake", str(root)]) == 2
    assert "market.json is not a market record" in capsys.readouterr().err


def test_a_market_on_another_local_path_publishes_by_rename(tmp_path, universe, synthetic):
    """A path (a shared filesystem's mount) is the local store: plain files, atomic renames."""
    root, shared = tmp_path / "lake", tmp_path / "shared" / "market"
    set_market(root, str(shared))
    lake = Lake(root)
    run_ingest(synthetic, universe.select(["ETH"]), start=START, end=END, lake=lake)
    key = PartitionKey("synthetic", "1h", "ETH")
    assert lake.path(key) == shared / key.relative and lake.path(key).is_file()
    assert not (root / "bars").exists() and bars_dir(lake) == shared / "bars"
    assert snapshot_market(lake) == 0  # dbt reads it in place


def _publish(market: ObjectMarket, key: str, body: bytes, tmp_path) -> None:
    staged = tmp_path / "staged.parquet"
    staged.write_bytes(body)
    market.publish({key: staged}, tmp_path)


KEY = "bars/provider=x/interval=1d/symbol=A/data.parquet"


def test_a_pointer_write_cut_or_failed_late_never_loses_the_market(tmp_path, monkeypatch,
                                                                    s3_bucket):
    """A store commits an object when its stream closes: an interrupt mid-write can leave
    ``_current.json`` empty. Readers then fall back to the last whole pointer, and the rollback
    takes back the new versions. A write that fails after the store committed it (the reply
    lost) is a publication made: nothing it names is deleted."""
    market = ObjectMarket(f"s3://{s3_bucket}/m")
    _publish(market, KEY, b"one", tmp_path)
    real_put = ObjectMarket._put

    def cut(self, relative, body):
        if relative == POINTER:
            real_put(self, relative, b"")  # committed empty
            raise KeyboardInterrupt
        real_put(self, relative, body)

    with monkeypatch.context() as m:
        m.setattr(ObjectMarket, "_put", cut)
        with pytest.raises(KeyboardInterrupt):
            _publish(market, KEY, b"two", tmp_path)
    assert boto3.client("s3").get_object(Bucket=s3_bucket, Key=f"m/{POINTER}")["Body"].read() \
        == b""
    assert market.open(KEY).read() == b"one"  # through the last whole pointer
    assert len(_objects(s3_bucket, "m/bars/")) == 1 and len(_objects(s3_bucket, "m/_pointers/")) == 1

    def late(self, relative, body):
        real_put(self, relative, body)
        if relative == POINTER:
            raise OSError("AWS Error NETWORK_CONNECTION during CompleteMultipartUpload")

    with monkeypatch.context() as m:
        m.setattr(ObjectMarket, "_put", late)
        _publish(market, KEY, b"three", tmp_path)  # committed: published, not an error
    assert market.open(KEY).read() == b"three"
    # and a publication over the damaged pointer mends it
    _publish(market, KEY, b"four", tmp_path)
    assert market.open(KEY).read() == b"four"
    assert json.loads(boto3.client("s3").get_object(Bucket=s3_bucket, Key=f"m/{POINTER}")
                      ["Body"].read())["files"][KEY] == market.current()[KEY]


def test_a_reader_on_the_old_pointer_reads_the_old_version(tmp_path, s3_bucket):
    market = ObjectMarket(f"s3://{s3_bucket}/m")
    _publish(market, KEY, b"old", tmp_path)
    old = market.current()
    _publish(market, KEY, b"new", tmp_path)
    assert market.open_version(KEY, old[KEY]).read() == b"old"
    assert market.open(KEY).read() == b"new"


def test_a_version_the_pointer_names_but_the_store_lost_is_an_error_not_an_empty_series(
        tmp_path, universe, synthetic, s3_bucket):
    remote = _remote(tmp_path, s3_bucket)
    run_ingest(synthetic, universe.select(["ETH"]), start=START, end=END, lake=remote)
    key = PartitionKey("synthetic", "1d", "ETH")
    version = remote.market.current()[key.relative.as_posix()]
    boto3.client("s3").delete_object(Bucket=s3_bucket, Key=f"market/{version}")
    assert remote.has(key)
    with pytest.raises(MarketError, match="no such object"):
        remote.read_bars(key)


def test_two_lakes_never_share_a_market_and_secrets_never_enter_the_record(
        tmp_path, universe, synthetic, s3_bucket):
    first = _remote(tmp_path, s3_bucket, "first")
    run_ingest(synthetic, universe.select(["ETH"]), start=START, end=END, lake=first)
    with pytest.raises(MarketError, match="already holds market data"):
        set_market(tmp_path / "second", f"s3://{s3_bucket}/market")
    # the same location named another way is no move
    assert Lake(tmp_path / "first").set_market(f"s3://{s3_bucket}/market").describe() \
        == f"s3://{s3_bucket}/market"
    local = Lake(tmp_path / "local")
    run_ingest(synthetic, universe.select(["ETH"]), start=START, end=END, lake=local)
    assert local.set_market(str(tmp_path / "local" / "." / "")).describe() == str(local.root)
    for uri in ("abfss://box@acct.dfs.core.windows.net/m?client_id=a&client_secret=S3CRET",
                "gs://b/m?access_token=abc", "s3://b/m?session_token=abc"):
        with pytest.raises(MarketError, match="credentials come from the environment"):
            set_market(tmp_path / "third", uri)


def test_a_market_on_another_filesystem_publishes_by_copy_then_rename(tmp_path, universe,
                                                                      synthetic):
    """The lake's staging and the market on different filesystems (a shared mount): a rename
    cannot cross them, so each file is copied beside its place, then renamed in."""
    import os
    import shutil
    import uuid
    from pathlib import Path

    shm = Path("/dev/shm")
    if not shm.is_dir() or os.stat(shm).st_dev == os.stat(tmp_path).st_dev:
        pytest.fail("the test needs /dev/shm on a filesystem of its own (tmpfs)")
    shared = shm / f"arena-market-{uuid.uuid4().hex[:8]}"
    try:
        lake = Lake(tmp_path / "lake")
        lake.set_market(str(shared))
        sub = universe.select(["ETH"])
        run_ingest(synthetic, sub, start=START, end=END, lake=lake)
        run_ingest(synthetic, sub, start=START, end=ts("2025-10-27"), lake=lake)
        reference = Lake(tmp_path / "reference")
        run_ingest(synthetic, sub, start=START, end=ts("2025-10-27"), lake=reference)
        _assert_same({str(k): lake.read_bars(k) for k in lake.partitions()},
                     {str(k): reference.read_bars(k) for k in reference.partitions()})
        assert not list(shared.rglob("*.tmp"))
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_an_unreachable_store_is_one_clear_line(tmp_path, monkeypatch, capsys, s3_bucket):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    assert main(["lake", "market", f"s3://{s3_bucket}/m", "--lake", str(tmp_path / "l")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena lake market: cannot reach the market at s3://") \
        and "AWS_ENDPOINT_URL" in err and "Traceback" not in err
