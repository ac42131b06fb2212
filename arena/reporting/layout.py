"""The reports' HTML: one self-contained page (no script, no web font, no request outside the
file), its tables and the one way numbers are written in them.

Numbers follow one convention everywhere (:func:`fmt`): percentages and P&L carry a sign and are
red when they lose, green when they gain; a drawdown, a fee, a count or a luck percentile is
neutral; a value that rounds to zero is written without a sign (never "-0.00"); times are UTC,
written without an offset (the column header says UTC). Every numeric cell keeps the exact value
in ``data-value``, so what the page shows can be read back and checked against the marts.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

import pandas as pd

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
    if kind == "text" or isinstance(value, bool) or not isinstance(value, Real):
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


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def cell(value: object, kind: str, *, href: str | None = None, wrap: bool = False,
         tag: str = "td") -> str:
    """One table cell; a number keeps its exact value in ``data-value``."""
    text = esc(fmt(value, kind))
    if href is not None and not missing(value):
        text = f'<a href="{esc(href)}">{text}</a>'
    classes = {"time": ["t"], "date": ["t"], "text": []}.get(kind, ["num"])
    attrs = ""
    if classes == ["num"] and not missing(value) and isinstance(value, Real) \
            and not isinstance(value, bool):
        attrs = f' data-value="{float(value)!r}"'
    if missing(value):
        classes.append("missing")
    elif sign_class(value, kind):
        classes.append(sign_class(value, kind))
    if wrap:
        classes.append("wrap")
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<{tag}{cls}{attrs}>{text}</{tag}>"


def table(rows: Sequence[Mapping[str, object]], columns: Sequence[Column], *,
          caption: str = "", row_id: Callable[[Mapping[str, object]], str] | None = None,
          empty: str = "no rows") -> str:
    """An HTML table; each column a :class:`Column`. A ``row_id`` gives rows an anchor."""
    head = "".join(f'<th scope="col"{" class=num" if c.kind not in ("text", "time", "date") else ""}'
                   f">{esc(c.header)}</th>" for c in columns)
    body = []
    for row in rows:
        rid = f' id="{esc(row_id(row))}"' if row_id is not None else ""
        cells = "".join(cell(row.get(c.key), c.kind, wrap=c.wrap,
                             href=c.href(row) if c.href is not None else None) for c in columns)
        body.append(f"<tr{rid}>{cells}</tr>")
    if not body:
        body.append(f'<tr><td class="empty" colspan="{len(columns)}">{esc(empty)}</td></tr>')
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return (f'<table class="data">{cap}<thead><tr>{head}</tr></thead>\n<tbody>\n'
            + "\n".join(body) + "\n</tbody></table>")


def records(frame: pd.DataFrame) -> list[dict[str, object]]:
    """A frame's rows as dicts, missing values as None."""
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


def slug(text: str) -> str:
    """A URL- and id-safe form of a heading (lower case: two headings may share one)."""
    return re.sub(r"[^a-z0-9]+", "-", str(text).lower()).strip("-") or "x"


def anchor_id(text: str) -> str:
    """An id for ``text`` that no other text shares: letters keep their case, and ``.``, ``_``
    and ``-`` (all a contestant's or a symbol's name may hold) stay; anything else is written
    as ``~<code point>``."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "._-") else f"~{ord(c):x}"
                   for c in str(text)) or "~"


def page(title: str, sections: Sequence[tuple[str, str]], *, subtitle: str = "",
         banner: str = "", links: Sequence[tuple[str, str]] = (), body: str = "") -> str:
    """A complete, self-contained HTML5 document. Each section is (heading, body HTML); the
    heading gets an anchor listed in the contents; ``body`` (HTML) follows the sections as is.
    ``banner``: plain text shown above all; ``links``: (label, href) shown under the title
    (e.g. back to the season report)."""
    anchors, seen = [], set()
    for heading, _ in sections:
        anchor, k = slug(heading), 2
        while anchor in seen:
            anchor, k = f"{slug(heading)}-{k}", k + 1
        seen.add(anchor)
        anchors.append(anchor)
    parts = ["<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
             "<header>"]
    if banner:
        parts.append(f'<p class="banner" role="alert">{esc(banner)}</p>')
    parts.append(f"<h1>{esc(title)}</h1>")
    if subtitle:
        parts.append(f'<p class="subtitle">{esc(subtitle)}</p>')
    if links:
        parts.append('<p class="links">' + " · ".join(
            f'<a href="{esc(href)}">{esc(label)}</a>' for label, href in links) + "</p>")
    if len(sections) > 1:
        toc = "\n".join(f'<li><a href="#{a}">{esc(h)}</a></li>'
                        for a, (h, _) in zip(anchors, sections, strict=True))
        parts.append(f'<nav aria-label="Contents"><p class="toc-title">Contents</p>'
                     f"<ol>\n{toc}\n</ol></nav>")
    parts += ["</header>", "<main>"]
    for anchor, (heading, content) in zip(anchors, sections, strict=True):
        parts.append(f'<section id="{anchor}">\n<h2><a href="#{anchor}">{esc(heading)}</a></h2>'
                     f"\n{content}\n</section>")
    if body:
        parts.append(body)
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


CSS = """
:root { color-scheme: light; --gain: #1B7F3B; --loss: #C0392B; --muted: #5F6670; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 1.5rem 1.5rem 4rem; color: #1A1A1A;
  background: #FFFFFF; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto,
  "Helvetica Neue", Arial, sans-serif; overflow-wrap: break-word; }
h1 { font-size: 1.8rem; line-height: 1.2; margin: 0 0 .25rem; }
h2 { font-size: 1.3rem; margin: 2.4rem 0 .7rem; padding-bottom: .25rem;
  border-bottom: 1px solid #E2E2E2; }
h3 { font-size: 1.08rem; margin: 1.6rem 0 .5rem; }
h2 a { color: inherit; text-decoration: none; }
a { color: #0B5CAD; }
.subtitle, .links { color: var(--muted); margin: 0 0 1rem; }
.banner { background: #FFF4E5; border: 2px solid #B35C00; border-radius: 6px; color: #6B3700;
  font-weight: 700; margin: 0 0 1rem; padding: .6rem 1rem; }
nav { background: #F6F7F9; border: 1px solid #E4E6EA; border-radius: 6px; padding: .5rem 1.2rem; }
nav .toc-title { font-size: .8rem; text-transform: uppercase; letter-spacing: .06em; margin: 0;
  color: var(--muted); }
nav ol { margin: .3rem 0 0; padding-left: 1.2rem; columns: 3; }
svg.chart { display: block; width: 100%; height: auto; margin: .5rem 0 1rem; }
table.data { border-collapse: collapse; font-size: .86rem; margin: .5rem 0 1rem; width: 100%; }
table.data caption { text-align: left; color: var(--muted); padding-bottom: .3rem; }
table.data th, table.data td { padding: .28rem .5rem; border-bottom: 1px solid #E6E6E6;
  text-align: left; vertical-align: top; }
table.data thead th { border-bottom: 2px solid #BBBBBB; font-weight: 600; }
table.data tbody tr:nth-child(even) { background: #FAFAFA; }
table.data .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.data .neg { color: var(--loss); }
table.data .pos { color: var(--gain); }
table.data .missing { color: #999999; }
table.data .wrap { min-width: 14rem; }
table.data td, pre.json, blockquote { overflow-wrap: anywhere; }
table.data .t { white-space: nowrap; }
dl.stats { display: grid; grid-template-columns: repeat(auto-fill, minmax(8.2rem, 1fr));
  gap: .3rem .8rem; margin: .4rem 0 .8rem; }
dl.stats dt { font-size: .78rem; color: var(--muted); }
dl.stats dd { margin: 0; font-variant-numeric: tabular-nums; font-weight: 600; }
dl.stats dd.neg { color: var(--loss); } dl.stats dd.pos { color: var(--gain); }
table.data .empty { color: #777777; font-style: italic; }
table.data tr:target { background: #FFF8C5; }
.note { color: var(--muted); font-size: .9rem; }
.caution { border-left: 4px solid #B35C00; background: #FFF8EE; padding: .4rem .8rem; }
details { margin: .3rem 0; }
details > summary { cursor: pointer; }
pre.json { background: #F6F7F9; padding: .5rem; white-space: pre-wrap; font-size: .8rem;
  margin: .3rem 0; }
blockquote { margin: .3rem 0; padding-left: .8rem; border-left: 3px solid #CCD3DB;
  color: #333333; }
dl.conventions dt { font-weight: 600; margin-top: .5rem; }
dl.conventions dd { margin-left: 1.2rem; }
@media print { nav { display: none; } section { break-inside: avoid; } }
"""
