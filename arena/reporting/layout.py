"""The reports' HTML: one self-contained page (no script, no web font, no request outside the
file), its tables and the one way numbers are written in them.

The pages are Jinja2 templates (``templates/``: ``page.html.j2`` the page every report extends,
``macros.html.j2`` its tables, cells and stats lists, ``report.css`` its stylesheet inlined
into the page), rendered by one :func:`environment` that escapes every value it writes: a
contestant's name, a model's reasoning or a vendor's note is text, whatever it holds. HTML that
is already safe (the charts' SVG, the daily report's Markdown rendered) is marked so with
``markupsafe.Markup`` where it is made, once.

Numbers follow one convention everywhere (:func:`fmt`, the templates' ``fmt`` filter):
percentages and P&L carry a sign and are red when they lose, green when they gain
(:func:`sign_class`); a drawdown, a fee, a count or a luck percentile is neutral; a value that
rounds to zero is written without a sign (never "-0.00"); times are UTC, written without an
offset (the column header says UTC); a yes-or-no value is a word, yes or no. Every numeric cell
keeps the exact value in ``data-value`` (:func:`exact`), so what the page shows can be read back
and checked against the marts.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from numbers import Real
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

MISSING = "–"
# kind -> (format, colour by sign)
KINDS: dict[str, tuple[str, bool]] = {
    "int": ("{:,.0f}", False),
    "num": ("{:,.6g}", False),
    "price": ("{:,.2f}", False),
    "money": ("{:,.2f}", False),
    "pnl": ("{:+,.2f}", True),          # USD, signed, red when it loses
    "usd": ("${:,.4f}", False),          # model-call costs: fractions of a cent matter
    "return": ("{:+.2%}", True),         # a return or an excess return
    "share": ("{:.1%}", False),          # a percentile, a win rate: no sign, no colour
    "drawdown": ("{:.2%}", False),       # a loss from the peak, neutral by design
    "score": ("{:.2f}", False),          # rank score, Sharpe
    "time": ("%Y-%m-%d %H:%M", False),   # UTC, no offset
    "date": ("%Y-%m-%d", False),
    "text": ("", False),
}


@dataclass(frozen=True)
class Column:
    """One table column: the row key, its header, the kind of value (a key of :data:`KINDS`)
    and optionally a link for the cell (``href(row)`` -> URL or None)."""

    key: str
    header: str
    kind: str = "text"
    href: Callable[[Mapping[str, object]], str | None] | None = None
    wrap: bool = False  # long text: wraps inside the cell instead of widening the table


def missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and not math.isfinite(value)


def fmt(value: object, kind: str) -> str:
    """``value`` written the report's way (see the module's docstring)."""
    if missing(value):
        return MISSING
    spec, _ = KINDS[kind]
    if kind in ("time", "date"):
        stamp = pd.Timestamp(value)
        stamp = stamp.tz_convert("UTC") if stamp.tzinfo is not None else stamp
        return stamp.strftime(spec)
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if kind == "text" or not isinstance(value, Real):
        return str(value)
    text = spec.format(float(value))
    if not re.search(r"[1-9]", text):  # rounds to zero: no sign ("0.00", not "-0.00")
        text = text.replace("-", "", 1).replace("+", "", 1)
    return text


def sign_class(value: object, kind: str) -> str:
    """``pos``/``neg`` for a coloured kind whose value does not round to zero, else ''."""
    if missing(value) or not KINDS[kind][1] or not isinstance(value, Real):
        return ""
    if not re.search(r"[1-9]", fmt(value, kind)):
        return ""
    return "pos" if float(value) > 0 else "neg" if float(value) < 0 else ""


def kind_class(kind: str) -> str:
    """How a column of ``kind`` aligns: ``num`` (right, tabular figures), ``t`` (a time, never
    broken) or '' (text)."""
    if kind not in KINDS:
        raise KeyError(f"{kind!r} is not a kind of number (layout.KINDS)")
    return {"time": "t", "date": "t", "text": ""}.get(kind, "num")


def exact(value: object) -> str | None:
    """A number's exact value for ``data-value`` (Python's shortest round-trip repr), or None
    for a missing value or one that is not a number."""
    if missing(value) or isinstance(value, bool) or not isinstance(value, Real):
        return None
    return repr(float(value))


def records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """A frame's rows as dicts of Python values (a Timestamp for a time), missing values as
    None: the frame is converted once as a whole, not a row or a column at a time."""
    values = frame.astype(object).to_numpy()
    missing_values = frame.isna().to_numpy()
    if missing_values.any():
        values[missing_values] = None
    names = list(frame.columns)
    return [dict(zip(names, row, strict=True)) for row in values.tolist()]


def slug(text: str) -> str:
    """A URL- and id-safe form of a heading (lower case: two headings may share one)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def anchor_id(text: str) -> str:
    """An id for ``text`` that no other text shares: letters keep their case, and ``.``, ``_``
    and ``-`` (all a contestant's or a symbol's name may hold) stay; anything else is written
    as ``~<code point>``."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "._-") else f"~{ord(c):x}"
                   for c in str(text)) or "~"


@dataclass(frozen=True)
class Section:
    """A section of a page: its heading, its anchor (unique in the page) and its body, a
    callable returning HTML (a template's macro)."""

    heading: str
    anchor: str
    body: Callable[[], Markup]


def contents(sections: Sequence[tuple[str, Callable[[], Markup]]]) -> list[Section]:
    """``(heading, body)`` pairs as :class:`Section` s; a heading's anchor is its :func:`slug`,
    numbered from 2 when an earlier heading has it."""
    out, seen = [], set()
    for heading, body in sections:
        anchor, k = slug(heading), 2
        while anchor in seen:
            anchor, k = f"{slug(heading)}-{k}", k + 1
        seen.add(anchor)
        out.append(Section(heading, anchor, body))
    return out


@cache
def environment() -> Environment:
    """The reports' one Jinja2 environment: templates from the package (so an installed arena
    finds them), every value escaped, an undefined name an error, the formats as filters."""
    env = Environment(loader=PackageLoader("arena.reporting", "templates"),
                      autoescape=select_autoescape(("html", "j2")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters.update(fmt=fmt, sign_class=sign_class, kind_class=kind_class, exact=exact,
                       anchor_id=anchor_id, contents=contents)
    env.tests["missing"] = missing
    return env


@cache
def templates_digest() -> str:
    """A digest of the templates, the stylesheet and the code that fills them: a page written
    under another digest was laid out by another version of the reports."""
    here = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted([*(here / "templates").iterdir(), *here.glob("*.py")]):
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def render(template: str, **context: object) -> str:
    """A template of ``templates/`` rendered with ``context``."""
    return environment().get_template(template).render(**context)


def macro(template: str, name: str) -> Callable[..., Markup]:
    """A macro of a macros-only template, callable from Python (it returns escaped HTML)."""
    return getattr(environment().get_template(template).module, name)


def cell(value: object, kind: str, *, href: str | None = None, wrap: bool = False,
         tag: str = "td") -> Markup:
    """One table cell; a number keeps its exact value in ``data-value``."""
    return macro("macros.html.j2", "cell")(value, kind, href=href, wrap=wrap, tag=tag)


def table(rows: Sequence[Mapping[str, object]], columns: Sequence[Column], *,
          caption: str = "", row_id: Callable[[Mapping[str, object]], str] | None = None,
          empty: str = "no rows") -> Markup:
    """An HTML table; each column a :class:`Column`. A ``row_id`` gives rows an anchor."""
    return macro("macros.html.j2", "table")(rows, columns, caption=caption, row_id=row_id,
                                            empty=empty)


def page(title: str, sections: Sequence[tuple[str, str]], *, subtitle: str = "",
         banner: str = "", links: Sequence[tuple[str, str]] = ()) -> str:
    """A complete, self-contained HTML5 document (``page.html.j2``). Each section is
    (heading, body HTML: taken as is); the heading gets an anchor listed in the contents.
    ``banner``: plain text shown above all; ``links``: (label, href) shown under the title
    (e.g. back to the season report)."""
    # the caller's HTML (a table, a chart) is trusted here, as this function's contract says
    bodies = [(heading, partial(Markup, html)) for heading, html in sections]
    return render("page.html.j2", title=title, subtitle=subtitle, banner=banner, links=links,
                  sections=bodies)
