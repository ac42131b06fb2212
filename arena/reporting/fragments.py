"""Rendered pieces of a page kept from one rendering to the next.

The season report shows every trade, rejection and decision of the season; rendering them
afresh after every cycle would make each publication cost more than the one before. A piece
(a table row, a cycle's decisions) is rendered once and kept under a key that digests what it
shows - its values, its links and :func:`~arena.reporting.layout.templates_digest` - so a
piece whose rows changed (a trade that closed, a decision added to an old cycle) or that
another version of the reports laid out is rendered again, and the page is the same byte for
byte whether its pieces were kept or not.

The pieces live in one JSON file beside the page (``_fragments.json``); each rendering keeps
only the pieces it used, so the file holds one page's worth. A file that cannot be read is no
error: every piece is rendered again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd
from markupsafe import Markup

from arena.data.lake import write_text
from arena.reporting.layout import Column, macro, records, templates_digest

FRAGMENTS_FILE = "_fragments.json"


def digest(*parts: bytes | str) -> str:
    """A key for a piece made of ``parts`` (and the reports' code): 128 bits of BLAKE2b."""
    h = hashlib.blake2b(templates_digest().encode(), digest_size=16)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


class Fragments:
    """The pieces of one page: those kept by its last rendering (``path``; None keeps
    nothing), and those this rendering used, written back by :meth:`save`."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self.kept: dict[str, str] = {}
        if path is not None:
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                loaded = {}
            if isinstance(loaded, dict):
                self.kept = {k: v for k, v in loaded.items() if isinstance(v, str)}
        self.used: dict[str, str] = {}
        self.rendered = 0  # pieces rendered by this rendering (not kept)

    def get(self, key: str, render: Callable[[], str]) -> Markup:
        """The piece under ``key``: kept, or rendered now by ``render``."""
        html = self.used.get(key)
        if html is None:
            html = self.kept.get(key)
            if html is None:
                html, self.rendered = str(render()), self.rendered + 1
            self.used[key] = html
        return Markup(html)

    def has(self, key: str) -> bool:
        return key in self.used or key in self.kept

    def save(self) -> None:
        """Keep the pieces this rendering used (and only those) for the next one."""
        if self.path is not None and self.used != self.kept:
            write_text(self.path, json.dumps(self.used, separators=(",", ":")))


def shown_values(frame: pd.DataFrame, columns: Sequence[Column]) -> tuple[list[tuple], str]:
    """What each row of ``frame`` shows in ``columns``, as tuples that are cheap to write out
    (a time as its integer count since the epoch, a value as the Python number or string it
    holds, None for a column the frame lacks), and what those values are: the columns' keys,
    kinds, wrapping and the frame's dtypes (a row's key takes both)."""
    values, dtypes = [], []
    for c in columns:
        if c.key not in frame.columns:
            values.append([None] * len(frame))
            dtypes.append(None)
            continue
        column = frame[c.key]
        dtypes.append(str(column.dtype))
        held = column.array
        values.append(held.asi8.tolist() if isinstance(held, pd.arrays.DatetimeArray)
                      else column.tolist())
    layout = repr([(c.key, c.kind, c.wrap) for c in columns]) + repr(dtypes)
    return list(zip(*values, strict=True)) if values else [() for _ in range(len(frame))], \
        layout


def rendered_rows(frame: pd.DataFrame, columns: Sequence[Column], fragments: Fragments,
                  row_id: Callable[[Mapping[str, object]], str] | None = None) -> list[Markup]:
    """Each row of ``frame`` as the ``row`` macro renders it (``macros.html.j2``), kept between
    renderings under a key of the values its columns show (:func:`shown_values`, one pass
    over each column) and the links they make; the ``table`` macro takes them as they are."""
    row = macro("macros.html.j2", "row")
    shown, layout = shown_values(frame, columns)
    linked = [c for c in columns if c.href is not None]
    out = []
    for r, values in zip(records(frame), shown, strict=True):
        key = digest("row", layout, repr((values, [c.href(r) for c in linked],
                                           None if row_id is None else row_id(r))))
        out.append(fragments.get(key, lambda r=r: row(r, columns, row_id)))
    return out


__all__: Sequence[str] = ("FRAGMENTS_FILE", "Fragments", "digest", "rendered_rows",
                           "shown_values")
