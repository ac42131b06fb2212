"""Where a season lives in its lake: the names of its folder and files, apart from the code
that reads them (:mod:`arena.pipeline.season_config`), so a command can tell a lake without a
season from one with it before importing that code."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.data.lake import Lake

SEASON_DIR = "season"
CONFIG = "season.json"
ROSTER = "roster.yaml"


def config_path(lake: Lake) -> Path:
    """The season's config file in ``lake`` (there or not)."""
    return lake.root / SEASON_DIR / CONFIG


def roster_path(lake: Lake) -> Path:
    """The season's roster copy in ``lake`` (there or not)."""
    return lake.root / SEASON_DIR / ROSTER


__all__: Sequence[str] = ("CONFIG", "ROSTER", "SEASON_DIR", "config_path", "roster_path")
