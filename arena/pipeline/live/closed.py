"""Whether a season is closed: its end is written once, ``<lake>/season/closed.json``, by the final
publication; a closed season takes no further cycle or monitor tick."""

from __future__ import annotations

import json

from arena.data.lake import Lake
from arena.pipeline.season_files import CLOSED as CLOSED  # re-exported
from arena.pipeline.season_files import closed_path


class OffSeason(Exception):
    """Refused because the season has not started yet or is closed: nothing is wrong, there is
    just nothing to do (a scheduled flow completes instead of failing and alerting)."""


def closed_at(lake: Lake) -> str | None:
    """When the lake's season was closed (None: it is open)."""
    path = closed_path(lake)
    if not path.is_file():
        return None
    return str(json.loads(path.read_text(encoding="utf-8")).get("closed_at"))
