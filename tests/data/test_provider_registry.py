"""The providers are named once (arena.data.providers.PROVIDERS): each builds by its name with
the options it takes, carries that name, says whether its series come from coarser bars; the
command line's choices and the season config's sources are the registry's; importing the
registry loads no provider's module (the command line reads it at start-up)."""

from __future__ import annotations

import subprocess
import sys
import typing

import pytest

from arena.core.errors import BadArgument
from arena.data.providers import (
    FILES,
    PROVIDERS,
    SOURCES,
    STAND_INS,
    make_provider,
    series_base,
)


def test_every_provider_builds_by_its_name_and_carries_it(tmp_path):
    assert SOURCES == ("synthetic", "yfinance", "ccxt", "files")
    assert STAND_INS == ("synthetic", "yfinance", "ccxt")
    assert [p.name for p in PROVIDERS if p.vendor] == ["yfinance", "ccxt"]
    for kind in PROVIDERS:
        built = make_provider(kind.name, drop=tmp_path, seed=7)
        assert type(built) is kind.load() and built.name == kind.name
    assert make_provider("synthetic", seed=7).seed == 7
    standing = make_provider(FILES, drop=tmp_path, drop_interval="15m", instead_of="yfinance")
    assert (standing.name, standing.stands_in_for, standing.base) == ("yfinance", "yfinance", "1h")
    assert (series_base("yfinance"), series_base("ccxt"), series_base("synthetic"),
            series_base("nobody")) == ("1h", None, None, None)


def test_a_source_or_stand_in_outside_the_registry_is_refused(tmp_path, monkeypatch):
    with pytest.raises(BadArgument, match=r"unknown source 'bloomberg'.*synthetic, yfinance"):
        make_provider("bloomberg")
    with pytest.raises(BadArgument, match="cannot stand in for 'files'"):
        make_provider(FILES, drop=tmp_path, instead_of=FILES)
    with pytest.raises(ValueError, match="only the files source stands in"):
        make_provider("ccxt", instead_of="yfinance")
    monkeypatch.delenv("ARENA_DROP_DIR", raising=False)
    with pytest.raises(BadArgument, match="needs a drop folder"):
        make_provider(FILES)


def test_the_command_lines_choices_are_the_registrys():
    from arena.cli._options import Source, StandIn

    assert typing.get_args(Source) == SOURCES and typing.get_args(StandIn) == STAND_INS
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, arena.data.providers; print(sorted(m for m in "
         "sys.modules if m.startswith(('arena.data.providers.', 'pandas', 'numpy'))))"],
        capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
