"""A blind season (:mod:`arena.market.blind`) on the season report and the site: while it runs,
one line saying it is played blind; once it has ended, its names revealed - which neutral name
stood for which asset, the factor its prices were scaled by and how far the calendar moved -
from the ``blind_names`` mart (no rows before the end: :mod:`arena.pipeline.blind_reveal`).

Whether a season is blind is its config's (``season.json``'s ``blind``), not a mart's: the mart
stays empty until the end, the same as a season that is not blind. The report reads it from its
lake (:func:`played_blind`), the site from the season it serves (``site.Season.blind``). A
publication made before the mart existed lacks it: then there is no section, and the line
only when the config says blind. ``templates/blind.html.j2`` words both.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from arena.data.lake import Lake
from arena.reporting.layout import Column, records

BLIND_NAMES = "blind_names"  # the mart
SECTION = "Blind names revealed"
LINE = ("Played blind: the prompts showed neutral names, a relabelled calendar and rescaled "
        "prices; the names are revealed when the season ends.")
DAYS_PER_YEAR = 365.2425
REVEAL_COLUMNS = [
    Column("neutral_name", "shown as"), Column("symbol", "asset"), Column("name", "name"),
    Column("price_factor", "price factor", "num"), Column("power", "as a power of two"),
]


@dataclass(frozen=True)
class Blind:
    """What a page says of a blind season: the revealed names (none before the end), the
    calendar's shift in weeks and whether the prompts showed sectors (None before the end)."""

    rows: list[dict[str, object]] = field(default_factory=list)
    columns: list[Column] = field(default_factory=list)
    shift_weeks: int | None = None
    sectors_shown: bool | None = None

    line = LINE  # what a page says of it before its end

    @property
    def revealed(self) -> bool:
        return bool(self.rows)

    @property
    def shift_years(self) -> float | None:
        """The calendar's shift in years, to one decimal."""
        if self.shift_weeks is None:
            return None
        return round(self.shift_weeks * 7 / DAYS_PER_YEAR, 1)


def _power(factor: object) -> str | None:
    """A price factor as the power of two it is (``2^-6``), or None when it is none."""
    if factor is None or not isinstance(factor, float | int) or factor <= 0:
        return None
    k = math.log2(float(factor))
    return f"2^{int(k)}" if k == int(k) else None


def blind_view(marts: Mapping[str, pd.DataFrame], blind: bool) -> Blind | None:
    """The blind season a page shows: the names revealed when the ``blind_names`` mart has
    rows; else, when the season is ``blind``, the season still blind (no rows); else None (a
    season played open, or a publication from before blind seasons that says nothing)."""
    frame = marts.get(BLIND_NAMES)
    if frame is not None and len(frame):
        frame = frame.sort_values("neutral_name")
        rows = [{**r, "power": _power(r.get("price_factor"))} for r in records(frame)]
        columns = [c for c in REVEAL_COLUMNS if c.key in frame.columns or c.key == "power"]
        weeks = frame["shift_weeks"].dropna()
        sectors = frame["sectors_shown"].dropna() if "sectors_shown" in frame else []
        return Blind(rows, columns, int(weeks.iloc[0]) if len(weeks) else None,
                     bool(sectors.iloc[0]) if len(sectors) else None)
    return Blind() if blind else None


def played_blind(lake: Lake) -> bool:
    """Whether the season in ``lake`` is blind, from its config (``season/season.json``, read
    as the site's door reads it: the report lies below the pipeline that owns the file); a lake
    without a readable config was not."""
    body: object = None
    with contextlib.suppress(OSError, ValueError):
        body = json.loads((lake.root / "season" / "season.json").read_text(encoding="utf-8"))
    return isinstance(body, dict) and body.get("blind") is True


__all__: Sequence[str] = ("BLIND_NAMES", "LINE", "SECTION", "Blind", "blind_view", "played_blind")
