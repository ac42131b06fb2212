"""An asset the season's luck tables must leave out is said once (issue 46, item 7): to the
build's progress when it has one (the command's own lines), else to the log - never both, as
the first backfill printed each "no luck table" line twice."""

from __future__ import annotations

import logging

from arena.data.lake import Lake
from arena.pipeline.season_tables.build import _asset_tables
from tests.conftest import ts

START, END = ts("2025-11-24 16:00"), ts("2025-11-26 16:00")


def test_an_asset_without_bars_is_said_once(tmp_path, universe, caplog):
    said, progress = [], []
    with caplog.at_level(logging.WARNING):
        _, _, missing = _asset_tables(Lake(tmp_path / "empty"), "synthetic",
                                      universe.select(["ETH", "SOL"]), START, END, players=10,
                                      seed=0, fan_out=None, say=progress.append, warn=said.append)
    assert missing == ["ETH", "SOL"]
    assert [m.split(":")[0] for m in said] == ["no luck table for ETH", "no luck table for SOL"]
    assert not any("no luck table" in m for m in progress) and "no luck table" not in caplog.text
