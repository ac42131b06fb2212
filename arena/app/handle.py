"""The season handle: what one command or flow run knows of its season, read once.

Every job takes a :class:`SeasonHandle` instead of a lake path and a handful of loose arguments:
the lake, its season config, the ledger and the attempts log (one of each, so their caches serve
the whole run), the season's universe and its roster at a cycle. Opening it reads the season's
config; a lake that does not exist or holds no season is refused there, by name, before any job
starts. The environment (the contestants' keys) is passed in, never read behind the caller's
back, and a clock says what time it is (a rehearsal or a test injects its own).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from arena.agents.base import Contestant
from arena.agents.roster import Roster, Skipped
from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.ledger.attempts import Attempts
from arena.ledger.store import Ledger
from arena.pipeline.live.closed import closed_at
from arena.pipeline.season_config import (
    SeasonConfig,
    find_season,
    load_season,
    season_contestants,
    season_roster,
)
from arena.pipeline.season_files import config_path

Clock = Callable[[], pd.Timestamp]


def wall_clock() -> pd.Timestamp:
    """The real time, UTC."""
    return pd.Timestamp.now(tz="UTC")


def fixed_clock(at: pd.Timestamp) -> Clock:
    """A clock that always says ``at`` (a rehearsal's or a test's "now")."""
    return lambda: at


def as_lake(lake: Lake | str | Path | None) -> Lake:
    """``lake`` as a :class:`Lake` (None: the default root, ``$ARENA_LAKE`` or ``data_lake``)."""
    return lake if isinstance(lake, Lake) else Lake(lake)


@dataclass
class Contestants:
    """The contestants of a cycle that can play, and the roster entries skipped (no key)."""

    playing: list[Contestant]
    skipped: list[Skipped] = field(default_factory=list)


@dataclass
class SeasonHandle:
    """One season, opened once for a command or a flow run (see the module docstring)."""

    lake: Lake
    config: SeasonConfig
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)

    @classmethod
    def open(cls, lake: Lake | str | Path | None = None,
             env: Mapping[str, str] | None = None) -> SeasonHandle:
        """The lake's season; :class:`~arena.pipeline.season_config.SeasonConfigError` (an
        unusable input) saying how to start one when the lake holds none."""
        where = as_lake(lake)
        return cls(where, load_season(where), os.environ if env is None else env)

    @classmethod
    def find(cls, lake: Lake | str | Path | None = None,
             env: Mapping[str, str] | None = None) -> SeasonHandle | None:
        """The lake's season, or None when the lake holds none."""
        where = as_lake(lake)
        if not config_path(where).is_file():
            return None

        config = find_season(where)
        return None if config is None else cls(where, config, os.environ if env is None else env)

    @property
    def id(self) -> str:
        return self.config.id

    @cached_property
    def universe(self) -> Universe:
        return self.config.universe()

    @cached_property
    def secret_names(self) -> frozenset[str]:
        """The environment variables holding the roster's keys: never written anywhere."""
        return frozenset(s.api_key_env for s in self.roster() if s.api_key_env)

    @cached_property
    def ledger(self) -> Ledger:
        return Ledger(self.lake, secret_names=self.secret_names)

    @cached_property
    def attempts(self) -> Attempts:
        return Attempts(self.lake, secret_names=self.secret_names)

    def roster(self, at: pd.Timestamp | None = None) -> Roster:
        """The season's roster at the cycle ``at`` (its whole roster copy when None)."""
        return season_roster(self.lake, at)

    def contestants(self, at: pd.Timestamp) -> Contestants:
        """The contestants of the cycle at ``at`` that can play with the keys in the handle's
        environment, each model call capped by the season's ``call_timeout_s``."""
        playing, skipped = season_contestants(self.lake, self.env, at=at,
                                              call_timeout=self.config.call_timeout_s)
        return Contestants(playing, skipped)

    @property
    def closed_at(self) -> str | None:
        """When the season was closed (None: it is open)."""
        return closed_at(self.lake)
