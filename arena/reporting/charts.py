"""Charts for the season report as inline SVG and HTML strings, with no dependencies.

Every function is pure: data in, markup out. There is no JavaScript, web font or external
stylesheet, so a report built from these pieces is one HTML file that opens offline. All text
(titles, labels, values, table cells) is escaped with `html.escape`.

Conventions:
* Missing values are None, NaN, infinities and `pd.NA`. A missing value breaks a line, leaves a
  bar out, greys a heatmap cell and shows as "–" in a table.
* x values of a line chart are timestamps (or strings `pd.Timestamp` parses). Naive ones are
  taken as UTC.
* Colours come from the Okabe–Ito palette, which stays distinguishable with the common
  colour-vision deficiencies. After seven series the palette repeats with dashed strokes.
  Positive bars are blue, negative bars vermillion. The heatmap scale runs blue, white, red.
* Coordinates are pixels in the SVG's viewBox, rounded to 0.1 px.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Mapping, Sequence
from numbers import Real

import pandas as pd

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
DASHES = ("", "6 3", "2 2")  # one dash pattern per trip through the palette
POSITIVE, NEGATIVE, MISSING_FILL = "#0072B2", "#D55E00", "#DDDDDD"
DIVERGING = ("#2166AC", "#67A9CF", "#F7F7F7", "#EF8A62", "#B2182B")  # ColorBrewer RdBu, 5 stops
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
MISSING = "–"
_NUM_CLASS = ' class="num"'

# Line-chart frame. A test pins coordinates with these, so change them together with it.
TOP, BOTTOM = 40, 44  # px above and below the plot area
X_TICK_SPACING = 90  # px a date label needs


def line_chart(
    series: Mapping[str, Sequence[tuple[pd.Timestamp | str, float | None]]],
    *,
    band: Sequence[tuple[pd.Timestamp | str, float | None, float | None, float | None]]
    | None = None,
    band_label: str = "zero-skill 5-95%",
    title: str,
    y_label: str = "",
    y_format: str = "{:,.0f}",
    baseline: float | None = None,
    width: int = 900,
    height: int = 360,
) -> str:
    """Named lines over time, e.g. contestants' equity curves, as an SVG string.

    `band` holds (x, lo, mid, hi) rows: the lo..hi range is shaded and mid drawn dashed (rows
    with lo or hi missing are dropped). `baseline` draws a horizontal reference line (e.g. the
    10,000 start cash). `y_format` formats the y tick labels. The legend sits on the right.
    """
    lines = {
        str(name): sorted(((_utc(x), _num(y)) for x, y in points), key=lambda p: p[0])
        for name, points in series.items()
    }
    rows = sorted(
        ((_utc(x), _num(lo), _num(mid), _num(hi)) for x, lo, mid, hi in band or ()),
        key=lambda r: r[0],
    )
    rows = [r for r in rows if r[1] is not None and r[3] is not None]
    xs = [t for points in lines.values() for t, y in points if y is not None] + [r[0] for r in rows]
    ys = [y for points in lines.values() for _, y in points if y is not None]
    ys += [v for r in rows for v in r[1:] if v is not None]
    if not xs:
        return _placeholder(title, width, height)
    base = _num(baseline)
    extent = ys if base is None else [*ys, base]
    y_ticks, y_texts = _labelled_ticks(min(extent), max(extent), y_format)

    legend = [*lines, *([band_label] if rows else [])]
    legend_width = min(220, max(_text_width(s, 12) for s in legend) + 34)
    left = 12 + (20 if y_label else 0) + max(_text_width(s, 11) for s in y_texts) + 10
    x0, x1, y0, y1 = left, width - legend_width - 20, TOP, height - BOTTOM
    t_lo, t_hi = min(xs), max(xs)
    if t_lo == t_hi:
        t_lo, t_hi = t_lo - pd.Timedelta(days=1), t_hi + pd.Timedelta(days=1)
    sx_seconds = linear((t_lo.value / 1e9, t_hi.value / 1e9), (x0, x1))

    def sx(t: pd.Timestamp) -> float:
        return sx_seconds(t.value / 1e9)

    sy = linear((y_ticks[0], y_ticks[-1]), (y1, y0))

    out = [_svg_open(title, width, height), _title_text(title)]
    for value, text in zip(y_ticks, y_texts, strict=True):
        y = sy(value)
        out.append(_line(x0, y, x1, y, "grid", "#E6E6E6"))
        out.append(_text(x0 - 6, y, text, size=11, anchor="end", baseline="middle"))
    for t, text in date_ticks(t_lo, t_hi, max(2, int((x1 - x0) // X_TICK_SPACING))):
        x = sx(t)
        out.append(_line(x, y1, x, y1 + 4, "tick", "#888888"))
        half = _text_width(text, 11) / 2  # keep the end labels inside the SVG
        anchor = "start" if x - half < 2 else "end" if x + half > width - 2 else "middle"
        out.append(_text(x, y1 + 18, text, size=11, anchor=anchor))
    out.append(_line(x0, y1, x1, y1, "axis", "#888888"))
    out.append(_line(x0, y0, x0, y1, "axis", "#888888"))
    if y_label:
        cy = (y0 + y1) / 2
        out.append(_text(14, cy, y_label, size=11, anchor="middle", rotate=(-90, 14, cy)))

    if rows:
        upper = [(sx(t), sy(hi)) for t, _, _, hi in rows]
        lower = [(sx(t), sy(lo)) for t, lo, _, _ in reversed(rows)]
        ring = "M" + " L".join(f"{_f(x)} {_f(y)}" for x, y in upper + lower) + " Z"
        out.append(
            f'<path class="band" d="{ring}" fill="#888888" fill-opacity="0.22" stroke="none">'
        )
        out.append(f"<title>{_esc(band_label)}</title></path>")
        mids = [(sx(t), None if mid is None else sy(mid)) for t, _, mid, _ in rows]
        d, _ = _path_data(mids)
        if d:
            out.append(
                f'<path class="band-median" d="{d}" fill="none" stroke="#666666" '
                f'stroke-width="1.2" stroke-dasharray="5 4"/>'
            )
    if base is not None:
        out.append(_line(x0, sy(base), x1, sy(base), "baseline", "#444444", dash="2 3"))

    for i, (name, points) in enumerate(lines.items()):
        if all(y is None for _, y in points):
            continue
        colour, dash = _style(i)
        d, dots = _path_data([(sx(t), None if y is None else sy(y)) for t, y in points])
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<path class="series" d="{d or _move(*dots[0])}" fill="none" stroke="{colour}" '
            f'stroke-width="1.8" stroke-linejoin="round"{dash_attr}><title>{_esc(name)}</title></path>'
        )
        out.extend(
            f'<circle class="point" cx="{_f(x)}" cy="{_f(y)}" r="2.5" fill="{colour}"/>'
            for x, y in dots
        )
    if base is not None:  # label drawn over the lines
        label = y_format.format(base)
        out.append(_text(x1 - 2, sy(base) - 4, label, size=10, anchor="end", halo=True))

    out.append(_legend(lines, band_label if rows else None, x1 + 20, y0, y1 - y0, legend_width))
    out.append("</svg>")
    return "\n".join(out)


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float | None],
    *,
    title: str,
    value_format: str = "{:,.2f}",
    width: int = 900,
    height: int | None = None,
) -> str:
    """Horizontal bars, one per label, as an SVG string.

    Negative values extend left of the zero axis; each bar carries its formatted value and a
    missing value shows "–" at the axis with no bar. `height` defaults to 26 px a row.
    """
    if len(labels) != len(values):
        raise ValueError(f"bar_chart: {len(labels)} labels but {len(values)} values")
    height = height or TOP + 26 * len(labels) + 16
    if not labels:
        return _placeholder(title, width, height)
    nums = [_num(v) for v in values]
    texts = [MISSING if v is None else value_format.format(v) for v in nums]
    shown = [v for v in nums if v is not None]
    lo, hi = min([0.0, *shown]), max([0.0, *shown])
    if lo == hi:
        hi = 1.0
    label_width = min(max(_text_width(str(s), 12) for s in labels), width * 0.35)
    value_width = max(_text_width(s, 11) for s in texts) + 8
    x0 = 12 + label_width + 12 + (value_width if lo < 0 else 0)
    x1 = width - 12 - value_width
    sx = linear((lo, hi), (x0, x1))
    zero, row = sx(0.0), (height - TOP - 16) / len(labels)

    out = [_svg_open(title, width, height), _title_text(title)]
    for i, (label, value, text) in enumerate(zip(labels, nums, texts, strict=True)):
        top, mid = TOP + i * row, TOP + (i + 0.5) * row
        name = _truncate(str(label), label_width, 12)
        out.append(f"<g><title>{_esc(label)}: {_esc(text)}</title>")
        out.append(_text(12 + label_width, mid, name, size=12, anchor="end", baseline="middle"))
        if value is not None:
            x = sx(value)
            colour = NEGATIVE if value < 0 else POSITIVE
            out.append(
                f'<rect class="bar" x="{_f(min(x, zero))}" y="{_f(top + row * 0.15)}" '
                f'width="{_f(abs(x - zero))}" height="{_f(row * 0.7)}" fill="{colour}"/>'
            )
            tx, anchor = (x - 4, "end") if value < 0 else (x + 4, "start")
        else:
            tx, anchor = zero + 4, "start"
        out.append(_text(tx, mid, text, size=11, anchor=anchor, baseline="middle"))
        out.append("</g>")
    out.append(_line(zero, TOP - 4, zero, height - 12, "axis", "#666666"))
    out.append("</svg>")
    return "\n".join(out)


def heatmap(
    labels: Sequence[str],
    matrix: Sequence[Sequence[float | None]],
    *,
    title: str,
    vmin: float = -1.0,
    vmax: float = 1.0,
    value_format: str = "{:.2f}",
) -> str:
    """A square matrix (e.g. correlations) as coloured cells on a blue-white-red scale.

    Values are clamped to vmin..vmax, whose midpoint is white. Up to 15 labels every cell prints
    its value; beyond that cells get smaller and carry their value only as a tooltip, so ~60
    labels stay legible. The SVG's size follows from the number of labels.
    """
    n = len(labels)
    if len(matrix) != n or any(len(row) != n for row in matrix):
        raise ValueError(f"heatmap: matrix must be {n}x{n} to match the labels")
    if n == 0:
        return _placeholder(title, 480, 200)
    small = n <= 15
    cell = 40 if small else max(6, min(24, 720 // n))
    font = 11 if small else max(6, min(10, cell - 3))
    label_width = min(max(_text_width(str(s), font) for s in labels) + 6, 180)
    left, grid = 12 + label_width, n * cell
    drop = label_width * (0.72 if small else 1.0)  # depth of the rotated x labels
    width = int(left + grid + 24 + 14 + 60)
    height = int(TOP + grid + drop + 16)
    colour = _diverging(vmin, vmax)

    out = [_svg_open(title, width, height), _title_text(title)]
    out.append(f'<g class="cells" stroke="#FFFFFF" stroke-width="{0.5 if small else 0.25}">')
    for i, row_label in enumerate(labels):
        for j, col_label in enumerate(labels):
            value = _num(matrix[i][j])
            text = MISSING if value is None else value_format.format(value)
            fill = MISSING_FILL if value is None else colour(value)
            x, y = left + j * cell, TOP + i * cell
            out.append(
                f'<rect class="cell" x="{_f(x)}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="{fill}"><title>{_esc(row_label)} × {_esc(col_label)}: {_esc(text)}'
                "</title></rect>"
            )
            if small:
                ink = "#FFFFFF" if value is not None and _is_dark(fill) else "#222222"
                out.append(
                    _text(
                        x + cell / 2,
                        y + cell / 2,
                        text,
                        size=10,
                        anchor="middle",
                        baseline="middle",
                        fill=ink,
                    )
                )
    out.append("</g>")
    for i, label in enumerate(labels):
        name = _truncate(str(label), label_width - 6, font)
        centre = TOP + (i + 0.5) * cell
        out.append(_text(left - 4, centre, name, size=font, anchor="end", baseline="middle"))
        cx, ty = left + (i + 0.5) * cell, TOP + grid + 4
        angle = -45 if small else -90
        out.append(
            _text(cx, ty, name, size=font, anchor="end", baseline="middle", rotate=(angle, cx, ty))
        )
    out.append(
        _colour_legend(colour, vmin, vmax, left + grid + 24, TOP, min(grid, 240), value_format)
    )
    out.append("</svg>")
    return "\n".join(out)


def html_table(
    rows: Sequence[Mapping[str, object]], columns: Sequence[tuple[str, str, str]]
) -> str:
    """An HTML table; each column is (key, header, format spec such as "{:+.2%}", or "" for str).

    Missing values (or keys) show "–". Numbers are right-aligned (class `num`); negative numbers
    get class `neg`, positive ones `pos`.
    """
    head = "".join(
        f'<th scope="col"{_NUM_CLASS if spec else ""}>{_esc(header)}</th>'
        for _, header, spec in columns
    )
    body = []
    for row in rows:
        cells = "".join(_cell(row.get(key), spec) for key, _, spec in columns)
        body.append(f"<tr>{cells}</tr>")
    if not body:
        body.append(f'<tr><td class="empty" colspan="{len(columns)}">no rows</td></tr>')
    return (
        f'<table class="data">\n<thead><tr>{head}</tr></thead>\n<tbody>\n'
        + "\n".join(body)
        + "\n</tbody>\n</table>"
    )


def page(title: str, sections: Sequence[tuple[str, str]], *, subtitle: str = "",
         banner: str = "") -> str:
    """A complete, self-contained HTML5 document.

    Each section is (heading, body HTML); the heading is escaped and gets an anchor listed in
    the table of contents, the body is inserted as is (it is the output of the functions above).
    A ``banner`` (plain text) is a warning shown above everything else, title included.
    """
    anchors = _anchors([heading for heading, _ in sections])
    toc = "\n".join(
        f'<li><a href="#{anchor}">{_esc(heading)}</a></li>'
        for anchor, (heading, _) in zip(anchors, sections, strict=True)
    )
    parts = [
        "<!doctype html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
    ]
    if banner:
        parts.append(f'<p class="banner" role="alert">{_esc(banner)}</p>')
    parts.append(f"<h1>{_esc(title)}</h1>")
    if subtitle:
        parts.append(f'<p class="subtitle">{_esc(subtitle)}</p>')
    if sections:
        parts.append(
            f'<nav aria-label="Contents"><p class="toc-title">Contents</p><ol>\n{toc}\n</ol></nav>'
        )
    parts += ["</header>", "<main>"]
    for anchor, (heading, body) in zip(anchors, sections, strict=True):
        parts.append(
            f'<section id="{anchor}">\n<h2><a href="#{anchor}">{_esc(heading)}</a></h2>\n'
            f'<div class="body">\n{body}\n</div>\n</section>'
        )
    parts += ["</main>", "</body>", "</html>", ""]
    return "\n".join(parts)


# Scales and ticks ---------------------------------------------------------------------------


def linear(domain: tuple[float, float], span: tuple[float, float]) -> Callable[[float], float]:
    """Map `domain` linearly onto `span` (pixels); a zero-width domain maps to the middle."""
    (d0, d1), (r0, r1) = domain, span
    if d1 == d0:
        return lambda _: (r0 + r1) / 2
    k = (r1 - r0) / (d1 - d0)
    return lambda v: r0 + (v - d0) * k


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About `count` round values (steps of 1, 2, 2.5 or 5 times a power of ten) covering lo..hi.

    The first tick is <= lo and the last >= hi. Equal bounds are widened by 5% (or by 1 at zero)
    so a flat series still gets a scale.
    """
    if lo == hi:
        pad = abs(lo) * 0.05 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if raw <= m * magnitude * (1 + 1e-9))
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [float(f"{k * step:.12g}") for k in range(first, last + 1)]


def _clock(t: pd.Timestamp) -> str:
    return f"{t:%H:%M}"


def _day_clock(t: pd.Timestamp) -> str:
    return f"{t.day} {t:%b} {t:%H:%M}"


def _day(t: pd.Timestamp) -> str:
    return f"{t.day} {t:%b}"


def _month(t: pd.Timestamp) -> str:
    return f"{t:%b %Y}"


def _year(t: pd.Timestamp) -> str:
    return f"{t:%Y}"


def _labelled_ticks(lo: float, hi: float, fmt: str) -> tuple[list[float], list[str]]:
    """Nice ticks for lo..hi whose labels under `fmt` differ, widening the range until they do.

    A flat series of 5 formatted "{:,.0f}" would otherwise get ticks 4.8, 4.9, ... all shown "5".
    """
    for _ in range(12):
        ticks = nice_ticks(lo, hi)
        texts = [fmt.format(v) for v in ticks]
        if len(set(texts)) == len(texts):
            break
        centre, half = (lo + hi) / 2, max(hi - lo, abs(lo) * 0.01, 1e-9) * 5
        lo, hi = centre - half, centre + half
    return ticks, texts


_HOUR, _DAY = pd.Timedelta(hours=1), pd.Timedelta(days=1)
# (pandas frequency, its rough length, label), finest first
_DATE_STEPS: tuple[tuple[str, pd.Timedelta, Callable[[pd.Timestamp], str]], ...] = (
    *((f"{n}h", n * _HOUR, _clock) for n in (1, 2, 3)),
    *((f"{n}h", n * _HOUR, _day_clock) for n in (6, 12)),
    *((f"{n}D", n * _DAY, _day) for n in (1, 2)),
    *((f"{n}W-MON", 7 * n * _DAY, _day) for n in (1, 2)),
    *((f"{n}MS", 30.44 * n * _DAY, _month) for n in (1, 2, 3, 6)),
    *((f"{n}YS", 365.25 * n * _DAY, _year) for n in (1, 2, 5, 10, 20, 50, 100)),
)


def date_ticks(
    start: pd.Timestamp, end: pd.Timestamp, max_ticks: int = 7
) -> list[tuple[pd.Timestamp, str]]:
    """At least two and at most `max_ticks` calendar-aligned (time, label) ticks in start..end.

    Times of day label only spans under two days. Falls back to the two ends when no calendar
    step fits.
    """
    for freq, length, label in _DATE_STEPS:
        if (end - start) / length > max_ticks + 1 or (length < _DAY and end - start >= 2 * _DAY):
            continue  # far too many ticks, or hours where days read better
        first = start.floor(freq) if freq.endswith(("h", "D")) else start.normalize()
        ticks = [t for t in pd.date_range(first, end, freq=freq) if t >= start]
        if 2 <= len(ticks) <= max_ticks:
            return [(t, label(t)) for t in ticks]
        if len(ticks) < 2:
            break  # coarser steps have no more ticks
    return [(t, f"{t:%Y-%m-%d %H:%M}") for t in (start, end)]


# Helpers ------------------------------------------------------------------------------------


def _num(value: object) -> float | None:
    """The value as a finite float; None for None, NaN, infinities and pd.NA.

    Anything else that is not a number (a string, a bool) is a caller's bug: TypeError.
    """
    if value is None or value is pd.NA:
        return None
    if isinstance(value, bool | str | bytes) or not hasattr(value, "__float__"):
        raise TypeError(f"charts plot numbers, not {type(value).__name__} {value!r}")
    number = float(value)
    return number if math.isfinite(number) else None


def _utc(x: pd.Timestamp | str) -> pd.Timestamp:
    stamp = pd.Timestamp(x)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _f(x: float) -> str:
    return f"{x:.1f}"


def _move(x: float, y: float) -> str:
    return f"M{_f(x)} {_f(y)}"


def _text_width(text: str, size: float) -> float:
    """Rough rendered width of `text` in a sans-serif font of `size` px."""
    return len(text) * size * 0.6


def _truncate(text: str, width: float, size: float) -> str:
    fits = int(width // (size * 0.6))
    return text if len(text) <= fits else text[: max(fits - 1, 1)] + "…"


def _style(index: int) -> tuple[str, str]:
    """Colour and dash pattern of the index-th series."""
    lap, slot = divmod(index, len(PALETTE))
    return PALETTE[slot], DASHES[lap % len(DASHES)]


def _path_data(
    points: Sequence[tuple[float, float | None]],
) -> tuple[str, list[tuple[float, float]]]:
    """SVG path data for points with gaps (y None), and the isolated points a path cannot show."""
    runs: list[list[tuple[float, float]]] = [[]]
    for x, y in points:
        if y is None:
            runs.append([])
        else:
            runs[-1].append((x, y))
    d = " ".join(
        _move(*run[0]) + "".join(f" L{_f(x)} {_f(y)}" for x, y in run[1:])
        for run in runs
        if len(run) > 1
    )
    return d, [run[0] for run in runs if len(run) == 1]


def _svg_open(title: str, width: int, height: int) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{_esc(title)}" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'font-family="{_esc(FONT)}" fill="#222222">\n<title>{_esc(title)}</title>'
    )


def _title_text(title: str) -> str:
    return _text(12, 22, title, size=15, weight="600")


def _placeholder(title: str, width: int, height: int) -> str:
    return "\n".join(
        [
            _svg_open(title, width, height),
            _title_text(title),
            f'<rect class="placeholder" x="1" y="{TOP}" width="{width - 2}" '
            f'height="{max(height - TOP - 1, 1)}" fill="#F5F5F5" stroke="#DDDDDD"/>',
            _text(
                width / 2,
                (TOP + height) / 2,
                "no data",
                size=14,
                anchor="middle",
                baseline="middle",
                fill="#777777",
            ),
            "</svg>",
        ]
    )


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: float,
    anchor: str = "start",
    baseline: str = "auto",
    fill: str = "#222222",
    weight: str = "normal",
    rotate: tuple[float, float, float] | None = None,
    halo: bool = False,
) -> str:
    """A text element; `halo` outlines it in white so it stays legible over lines."""
    extra = f' dominant-baseline="{baseline}"' if baseline != "auto" else ""
    extra += f' font-weight="{weight}"' if weight != "normal" else ""
    extra += ' stroke="#FFFFFF" stroke-width="3" paint-order="stroke"' if halo else ""
    if rotate:
        angle, rx, ry = rotate
        extra += f' transform="rotate({angle} {_f(rx)} {_f(ry)})"'
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="{fill}"{extra}>{_esc(text)}</text>'
    )


def _line(x0: float, y0: float, x1: float, y1: float, cls: str, colour: str, dash: str = "") -> str:
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line class="{cls}" x1="{_f(x0)}" y1="{_f(y0)}" x2="{_f(x1)}" y2="{_f(y1)}" '
        f'stroke="{colour}" stroke-width="1"{dash_attr}/>'
    )


def _legend(
    names: Sequence[str], band_label: str | None, x: float, y: float, room: float, width: float
) -> str:
    """Legend entries stacked down from (x, y), squeezed to fit `room` px."""
    count = len(names) + (1 if band_label else 0)
    step = max(10.0, min(18.0, room / max(count, 1)))
    size = min(12.0, step - 3)
    out = ['<g class="legend">']
    for i, name in enumerate(names):
        colour, dash = _style(i)
        cy = y + (i + 0.5) * step
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(
            f'<line x1="{_f(x)}" y1="{_f(cy)}" x2="{_f(x + 20)}" y2="{_f(cy)}" stroke="{colour}" '
            f'stroke-width="2.5"{dash_attr}/>'
        )
        label = _truncate(name, width - 28, size)
        out.append(f"<g><title>{_esc(name)}</title>")
        out.append(_text(x + 26, cy, label, size=size, baseline="middle") + "</g>")
    if band_label:
        cy = y + (len(names) + 0.5) * step
        out.append(
            f'<rect x="{_f(x)}" y="{_f(cy - 5)}" width="20" height="10" fill="#888888" '
            f'fill-opacity="0.22"/>'
            f'<line x1="{_f(x)}" y1="{_f(cy)}" x2="{_f(x + 20)}" y2="{_f(cy)}" stroke="#666666" '
            f'stroke-width="1.2" stroke-dasharray="5 4"/>'
        )
        out.append(
            _text(x + 26, cy, _truncate(band_label, width - 28, size), size=size, baseline="middle")
        )
    out.append("</g>")
    return "\n".join(out)


def _diverging(vmin: float, vmax: float) -> Callable[[float], str]:
    """Colour of a value on the blue-white-red scale; the midpoint of vmin..vmax is white."""
    stops = [tuple(int(c[k : k + 2], 16) for k in (1, 3, 5)) for c in DIVERGING]
    to_unit = linear((vmin, vmax), (0.0, 1.0))

    def colour(value: float) -> str:
        position = min(max(to_unit(value), 0.0), 1.0) * (len(stops) - 1)
        k = min(int(position), len(stops) - 2)
        a, b, w = stops[k], stops[k + 1], position - k
        return "#" + "".join(f"{round(p + (q - p) * w):02X}" for p, q in zip(a, b, strict=True))

    return colour


def _is_dark(fill: str) -> bool:
    r, g, b = (int(fill[k : k + 2], 16) for k in (1, 3, 5))
    return 0.299 * r + 0.587 * g + 0.114 * b < 140


def _colour_legend(
    colour: Callable[[float], str],
    vmin: float,
    vmax: float,
    x: float,
    y: float,
    height: float,
    value_format: str,
) -> str:
    """A vertical colour bar, vmax at the top, drawn as 40 steps (no gradient ids to collide)."""
    steps = 40
    out = ['<g class="colour-legend">']
    for k in range(steps):
        value = vmax - (vmax - vmin) * (k + 0.5) / steps
        out.append(
            f'<rect class="legend-step" x="{_f(x)}" y="{_f(y + k * height / steps)}" width="14" '
            f'height="{_f(height / steps + 0.5)}" fill="{colour(value)}"/>'
        )
    out.append(
        f'<rect x="{_f(x)}" y="{_f(y)}" width="14" height="{_f(height)}" fill="none" stroke="#999999"/>'
    )
    for value, ty in ((vmax, y), ((vmin + vmax) / 2, y + height / 2), (vmin, y + height)):
        out.append(_text(x + 19, ty, value_format.format(value), size=10, baseline="middle"))
    out.append("</g>")
    return "\n".join(out)


def _cell(value: object, spec: str) -> str:
    if value is None or value is pd.NA or value is pd.NaT:
        return f'<td class="missing">{MISSING}</td>'
    text = spec.format(value) if spec else str(value)
    if isinstance(value, bool) or not isinstance(value, Real):
        return f"<td>{_esc(text)}</td>"
    if math.isnan(value):
        return f'<td class="missing">{MISSING}</td>'
    sign = " neg" if value < 0 else " pos" if value > 0 else ""
    return f'<td class="num{sign}">{_esc(text)}</td>'


def _anchors(headings: Sequence[str]) -> list[str]:
    """Unique, URL-safe ids for the headings."""
    seen: set[str] = set()
    out = []
    for heading in headings:
        base = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"
        anchor, k = base, 2
        while anchor in seen:
            anchor, k = f"{base}-{k}", k + 1
        seen.add(anchor)
        out.append(anchor)
    return out


_CSS = """
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1040px; padding: 2rem 1.5rem 4rem; color: #1A1A1A;
  background: #FFFFFF; font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto,
  "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.9rem; line-height: 1.2; margin: 0 0 .25rem; }
h2 { font-size: 1.35rem; margin: 2.5rem 0 .75rem; padding-bottom: .25rem;
  border-bottom: 1px solid #E2E2E2; }
h2 a { color: inherit; text-decoration: none; }
h2 a:hover { text-decoration: underline; }
.subtitle { color: #555555; margin: 0 0 1.25rem; }
.banner { background: #FFF4E5; border: 2px solid #B35C00; border-radius: 6px; color: #6B3700;
  font-weight: 700; letter-spacing: .02em; margin: 0 0 1rem; padding: .6rem 1rem; }
nav { background: #F6F7F9; border: 1px solid #E4E6EA; border-radius: 6px; padding: .6rem 1.2rem;
  display: inline-block; min-width: 16rem; }
nav .toc-title { font-size: .8rem; text-transform: uppercase; letter-spacing: .06em; margin: 0;
  color: #666666; }
nav ol { margin: .3rem 0 0; padding-left: 1.2rem; }
nav a { color: #0B5CAD; text-decoration: none; }
nav a:hover { text-decoration: underline; }
.body { overflow-x: auto; }
svg { display: block; max-width: 100%; height: auto; margin: .5rem 0 1rem; }
table.data { border-collapse: collapse; font-size: .9rem; margin: .5rem 0 1rem; }
table.data th, table.data td { padding: .3rem .7rem; border-bottom: 1px solid #E6E6E6;
  text-align: left; white-space: nowrap; }
table.data thead th { border-bottom: 2px solid #BBBBBB; font-weight: 600; }
table.data tbody tr:nth-child(even) { background: #FAFAFA; }
table.data .num { text-align: right; font-variant-numeric: tabular-nums; }
table.data .neg { color: #B8400B; }
table.data .pos { color: #0B5CAD; }
table.data .missing { text-align: right; color: #999999; }
table.data .empty { color: #777777; font-style: italic; }
@media print { nav { display: none; } section { break-inside: avoid; } }
"""
