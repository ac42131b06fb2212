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
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from markupsafe import Markup

from arena.data.lake import write_text
from arena.reporting.layout import Column, macro, templates_digest

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


def row_key(row: Mapping[str, object], columns: Sequence[Column],
            row_id: Callable[[Mapping[str, object]], str] | None = None, *,
            layout: str | None = None) -> str:
    """The key of one table row: the values its columns show and the links they make
    (``layout``: :func:`columns_layout` of ``columns``, when the caller has it)."""
    shown = [row.get(c.key) for c in columns]
    links = [c.href(row) if c.href is not None else None for c in columns]
    return digest("row", repr(shown), repr(links), "" if row_id is None else row_id(row),
                  columns_layout(columns) if layout is None else layout)


def columns_layout(columns: Sequence[Column]) -> str:
    """What a row's key takes of its table's columns: each one's key, kind and wrapping."""
    return repr([(c.key, c.kind, c.wrap) for c in columns])


def rendered_rows(rows: Iterable[Mapping[str, object]], columns: Sequence[Column],
                  fragments: Fragments,
                  row_id: Callable[[Mapping[str, object]], str] | None = None) -> list[Markup]:
    """Each row as the ``row`` macro renders it (``macros.html.j2``), kept between renderings;
    the ``table`` macro takes them as they are."""
    row = macro("macros.html.j2", "row")
    layout = columns_layout(columns)
    return [fragments.get(row_key(r, columns, row_id, layout=layout),
                          lambda r=r: row(r, columns, row_id)) for r in rows]


__all__: Sequence[str] = ("FRAGMENTS_FILE", "Fragments", "digest", "rendered_rows", "row_key")
