"""Test helpers that change a lake's bar partitions the way the lake itself would, or the way
a lake published before digests were recorded looks (:mod:`arena.data.digests`).

A test that writes a bar file over a published one now makes it *changed* (damage), and one
that deletes it makes it *missing*: what a test means by "a lake that holds other bars" or "a
lake without that interval" is a publication of those bars, or a partition no record names."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping

import pandas as pd
import pyarrow.parquet as pq

from arena.data.lake import Lake, PartitionKey


def publish_frames(lake: Lake, frames: Mapping[PartitionKey, pd.DataFrame]) -> None:
    """Publish ``frames`` as the lake publishes an asset's files (staged, then moved into
    place under the writer lock, their digests recorded)."""
    run_id = f"test-{uuid.uuid4().hex[:8]}"
    with lake.writer_lock(), lake.run_lock(run_id):
        lake.publish(run_id, lake.stage(run_id, frames))


def forget_digests(lake: Lake, keys: Iterable[PartitionKey]) -> None:
    """Take ``keys`` out of their publications' records, as in a lake published before digests
    were recorded (a file then read as it is, a partition then never held)."""
    lake.market.records.update({k.relative.as_posix(): None for k in keys})
    lake.bar_cache.clear()


def remove_partitions(lake: Lake, keys: Iterable[PartitionKey]) -> None:
    """A lake that never held ``keys``: their files and their records gone."""
    keys = list(keys)
    for key in keys:
        lake.path(key).unlink()
    forget_digests(lake, keys)


def flip_in_a_float(lake: Lake, key: PartitionKey, column: str, row: int
                    ) -> tuple[int, float, float]:
    """Change one byte in the middle of a stored float of ``column``, in place: the value of
    the first row from ``row`` on whose eight bytes occur once in the file (so its offset is
    found by writing the known value). Returns that row, its value before, and the value a
    reader that checks nothing now gets."""
    path = lake.path(key)
    values = pq.read_table(path).column(column).to_pylist()
    body = bytearray(path.read_bytes())
    row = next(r for r in range(row, len(values))
               if body.count(struct.pack("<d", values[r])) == 1)
    at = body.index(struct.pack("<d", values[row])) + 3  # in the mantissa: a nearby price
    body[at] ^= 0x5A
    with open(path, "r+b") as out:  # in place: the same file, one byte changed
        out.write(bytes(body))
    return row, values[row], pq.read_table(path).column(column)[row].as_py()
