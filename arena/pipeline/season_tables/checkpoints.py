"""The checkpoints a build of the tables that grow with the season leaves and continues from
(:mod:`arena.pipeline.season_state`): the cycle counts it keeps one at, and how the reason a
stored checkpoint is not used names a cycle and the assets whose inputs changed."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def checkpoint_counts(count: int) -> list[int]:
    """The cycle counts a build keeps a checkpoint at: the last cycle and the one before."""
    return [n for n in (count - 1, count) if n >= 1]


def minute(t: pd.Timestamp) -> str:
    """``t`` to the minute, as a reason names a cycle."""
    return f"{t:%Y-%m-%d %H:%M}"


def and_others(changed: Sequence[str]) -> str:
    """What a reason that names the first of ``changed`` adds for the others (nothing for one)."""
    return f" (and those of {len(changed) - 1} more assets)" if len(changed) > 1 else ""
