"""The NYSE schedule kept between processes (core.sessions.schedule_file): read back it is the
schedule exchange-calendars builds, session by session; another version of the library is
never answered from an older file; a damaged or unwritable file costs a rebuild, nothing else."""

from __future__ import annotations

import importlib.metadata
import io

import exchange_calendars as xcals
import numpy as np
import pandas as pd
import pytest

from arena.core import sessions

NY = "America/New_York"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, and a count of the calendars built from the library."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = []
    xnys = sessions._xnys

    def counted():
        built.append(1)
        return xnys()

    monkeypatch.setattr(sessions, "_xnys", counted)
    sessions._schedule.cache_clear()
    yield built
    sessions._schedule.cache_clear()


def _library_schedule() -> pd.DataFrame:
    """The oracle: exchange-calendars' own XNYS schedule, converted by hand."""
    raw = xcals.get_calendar("XNYS", start="1990-01-02", end="2035-12-31").schedule
    close_ny = raw["close"].dt.tz_convert(NY)
    return pd.DataFrame({"open": raw["open"].dt.tz_convert("UTC"),
                         "close": raw["close"].dt.tz_convert("UTC"),
                         "early_close": close_ny.dt.hour * 60 + close_ny.dt.minute < 16 * 60},
                        index=pd.DatetimeIndex(raw.index, freq=None))


def test_the_schedule_read_back_is_the_librarys(cache, monkeypatch):
    built = sessions._schedule()
    assert cache == [1] and sessions.schedule_file().exists()
    version = importlib.metadata.version("exchange-calendars")
    assert sessions.schedule_file().name == f"xnys-{version}-1990-01-02-2035-12-31-v1.npy"
    sessions._schedule.cache_clear()
    monkeypatch.setattr(sessions, "_xnys", lambda: pytest.fail("built again"))
    read = sessions._schedule()
    expected = _library_schedule()
    for frame in (built, read):
        pd.testing.assert_frame_equal(frame, expected)
    assert len(read) > 11_000 and read["early_close"].sum() > 50
    assert read.loc["2024-07-03", "close"] == pd.Timestamp("2024-07-03 17:00", tz="UTC")
    assert read.loc["2024-12-24", "early_close"] and "2025-01-09" not in read.index


def test_another_version_of_the_library_builds_its_own(cache, monkeypatch):
    sessions._schedule()
    first = sessions.schedule_file()
    sessions._schedule.cache_clear()
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "99.0.0")
    sessions._schedule()
    assert cache == [1, 1] and sessions.schedule_file() != first
    assert sessions.schedule_file().name.startswith("xnys-99.0.0-") and first.exists()


def test_a_damaged_file_is_built_again(cache):
    sessions._schedule()
    path = sessions.schedule_file()
    good = path.read_bytes()
    other = io.BytesIO()
    np.save(other, np.zeros((2, 3), dtype=np.int64))  # a readable file of another layout
    for damage in (good[: len(good) // 2], b"", np.zeros((2, 3)).tobytes(), other.getvalue()):
        path.write_bytes(damage)
        sessions._schedule.cache_clear()
        pd.testing.assert_frame_equal(sessions._schedule(), _library_schedule())
        assert path.read_bytes() == good
    assert len(cache) == 5


def test_an_unwritable_cache_only_costs_the_build(cache, tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    pd.testing.assert_frame_equal(sessions._schedule(), _library_schedule())
    sessions._schedule.cache_clear()
    sessions._schedule()
    assert cache == [1, 1] and list(tmp_path.glob("**/*.tmp")) == []
