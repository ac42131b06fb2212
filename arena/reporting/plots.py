"""The season report's charts, drawn with matplotlib and returned as inline SVG strings.

Every function is pure: data in, one ``<svg class="chart" role="img">`` element out, ready to
paste into the report's single offline HTML file (no XML declaration, no DOCTYPE, no metadata, no
reference to anything outside the file). The root keeps its ``viewBox`` but loses matplotlib's
fixed ``width``/``height``, so ``svg.chart {width: 100%; height: auto}`` scales it to the page.

The line charts (equity, drawdown) come as ``<figure class="chart">``: the SVG, then its legend
as the page's own HTML (``<ul class="legend">``, one item per line: a swatch drawn in CSS with
the line's colour, dashes and weight, then the label). A legend drawn into the SVG shrinks with
the image: on a 390 px phone its 9 pt labels became 4-5 px. The HTML legend keeps the page's text
size at every width and wraps into as many columns as fit (report.css), and the plot takes the
whole width of the page.

Only matplotlib's object API is used (``Figure`` + the SVG canvas, never pyplot), and every
setting lives in a ``matplotlib.rc_context`` around the drawing, so importing or calling this
module changes no global state.

Determinism: the same input gives byte-identical SVG, so a rebuilt report diffs cleanly.
* ``svg.hashsalt`` is fixed: clip-path and marker ids are hashes of their content, not uuids.
* ``metadata`` drops the date, the creator and the RDF block (which would also name http URIs).
* Ids nobody references (``figure_1``, ``axes_1``...) are removed: they would repeat on a page
  that holds several charts.

Text stays text (``svg.fonttype: none``): tick labels, legend entries, names and heatmap values
are ``<text>`` elements in the page's DOM, so they can be searched, copied and read back by tests
and screen readers, and the file does not carry font outlines. The font family is a generic
sans-serif list that resolves offline (matplotlib ships DejaVu Sans, which also lays the text out).
Minus signs are ASCII hyphens, so "-5%" typed into the browser's search finds the tick label.

Times are UTC ``pd.Timestamp``s (naive ones are taken as UTC); date ticks read like ``Oct 03``.
Missing values (None, NaN) break a line or leave a heatmap cell grey; no points at all gives a
small "no data" chart instead of an exception.
"""

from __future__ import annotations

import html
import io
import itertools
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import matplotlib
import matplotlib.backends.backend_svg as backend_svg
import matplotlib.colors as mcolors
import matplotlib.dates as mdates
import matplotlib.figure as mfigure
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# a curve: (time, value) points, or a Series of values by time
Points = Sequence[tuple[pd.Timestamp, float]] | pd.Series

# Okabe–Ito (distinguishable with the common colour-vision deficiencies; black and yellow left
# out: black is for benchmarks, yellow is unreadable on white), then four from tab10.
PALETTE = (
    "#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
    "#8C564B", "#9467BD", "#BCBD22", "#17BECF",
)
LINE_DASHES = ("-", "--", ":")  # one per trip through the palette
BENCHMARK_STYLES = (  # (colour, dash): greys and black, never a contestant's colour
    ("#000000", "--"), ("#555555", ":"), ("#888888", "-."), ("#333333", (0, (6, 2, 1, 2, 1, 2))),
)
MISSING_FILL = "#DDDDDD"
HEATMAP_CMAP = "RdBu_r"  # blue below the centre, red above
MAX_ANNOTATED_CELLS = 400
# Every chart is about this many inches (x 72 viewBox units) wide, so text has about the same
# size in every chart once CSS scales them to the same width.
WIDTH = 10.0
KEY_PX = 1.5  # a legend swatch's CSS px per point of its line's width and dashes
EQUITY_TITLE = "Equity after each cycle against the zero-skill band"
DRAWDOWN_TITLE = "Drawdown from peak equity"

RC = {
    "svg.fonttype": "none",
    "svg.hashsalt": "arena-season-report",
    "svg.image_inline": True,
    "font.family": ["sans-serif"],
    "font.sans-serif": ["DejaVu Sans", "Liberation Sans", "Arial"],
    "font.size": 10,
    "axes.unicode_minus": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlelocation": "left",
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.grid": True,
    "grid.color": "#E6E6E6",
    "grid.linewidth": 0.8,
    "axes.axisbelow": True,
    "legend.frameon": False,
    "timezone": "UTC",
    "figure.dpi": 72,  # 1 px = 1 pt, as in the SVG's viewBox
}

_SVG_OPEN = re.compile(r"<svg\b[^>]*>")
_DEFAULT_STYLE = re.compile(r"<defs>\s*<style[^>]*>[^<]*</style>\s*</defs>\s*")
_ID = re.compile(r'\sid="([^"]+)"')
_REFERENCED = re.compile(r'url\(#([^)]+)\)|href="#([^"]+)"')


def series_colours(names: Sequence[str]) -> dict[str, str]:
    """A hex colour per distinct name, assigned in sorted-name order from :data:`PALETTE`
    (cycling after ten), so the same names get the same colours in every chart and table
    whatever order they come in."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(sorted(set(names)))}


@dataclass(frozen=True)
class LegendKey:
    """One entry of a line chart's HTML legend: its label and how its swatch is drawn, the same
    way as its mark in the plot (colour, matplotlib line style and width in points, opacity).
    ``kind``: "line", "point" (a series of one point, drawn as a dot) or "band" (a shaded
    area)."""

    label: str
    colour: str
    style: str | tuple[float, Sequence[float]] = "-"
    width: float = 1.5
    kind: str = "line"
    alpha: float = 1.0


def equity_chart(
    curves: Mapping[str, Points],
    *,
    benchmarks: Mapping[str, Sequence[tuple[pd.Timestamp, float]]],
    band: Sequence[tuple[pd.Timestamp, float, float, float]],
    players: int,
    start_cash: float = 10_000.0,
    title: str = EQUITY_TITLE,
) -> str:
    """Every contestant's equity (USD) over time against benchmarks and the zero-skill band.

    ``curves`` and ``benchmarks`` map a name to (time, equity) points (or a Series of equity
    by time). Contestants take their :func:`series_colours`; benchmarks (e.g. "BTC", "SPY",
    "universe (equal weight)") are grey or black with distinct dashes. ``band`` holds (time,
    q05, q50, q95) rows of the zero-skill players: q05..q95 is shaded, q50 drawn dashed. A thin
    line marks ``start_cash``. A ``<figure>``: the plot, then its HTML legend (contestants,
    benchmarks, the band, its median, the start cash).
    """
    lines = {name: _points(points) for name, points in sorted(curves.items())}
    marks = {name: _points(points) for name, points in benchmarks.items()}
    rows = sorted(
        ((_utc(t), _num(lo), _num(mid), _num(hi)) for t, lo, mid, hi in band), key=lambda r: r[0]
    )
    if not any(_drawable(y) for _, y in [*lines.values(), *marks.values()]) and not any(
        math.isfinite(lo) and math.isfinite(hi) for _, lo, _, hi in rows
    ):
        return _no_data(title)
    with _style():
        fig = mfigure.Figure(figsize=(WIDTH, 4.6))
        ax = fig.add_subplot()
        references: list[LegendKey] = []
        if rows:
            times = _datetimes([r[0] for r in rows])
            lo, mid, hi = (np.array([r[i] for r in rows]) for i in (1, 2, 3))
            shade = LegendKey(f"zero-skill 5–95% ({players:,} players)", "#888888",
                              kind="band", alpha=0.22)
            ax.fill_between(times, lo, hi, color=shade.colour, alpha=shade.alpha, linewidth=0)
            references += [shade, _draw(ax, times, mid, LegendKey(
                "zero-skill median", "#666666", "--", 1.1))]
        cash = LegendKey(f"start cash {start_cash:,.0f}", "#444444", (0, (2, 3)), 0.8)
        ax.axhline(start_cash, color=cash.colour, linewidth=cash.width, linestyle=cash.style)
        held = [_draw(ax, times, ys, LegendKey(name, colour, dash, 1.3)) for (name, (times, ys)),
                (colour, dash) in zip(marks.items(), itertools.cycle(BENCHMARK_STYLES))]
        played = _contestant_lines(ax, lines, 1.8)
        _date_axis(ax)
        ax.yaxis.set_major_locator(mticker.MaxNLocator(nbins=7, integer=True))
        ax.yaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        ax.set_ylabel("equity, USD")
        ax.set_title(title)
        return _figure(_svg(fig, title), [*played, *held, *references, cash])


def drawdown_chart(
    curves: Mapping[str, Points],
    *,
    title: str = DRAWDOWN_TITLE,
) -> str:
    """Each contestant's drawdown from its peak equity over time, drawn downward from 0 %.

    ``curves`` maps a name to (time, drawdown) points; a drawdown is a fraction of the peak
    (0.05 = 5 % below it; the sign is ignored, so -0.05 means the same). Lines take the
    contestants' :func:`series_colours` (no gain/loss colouring: a drawdown is neutral), y ticks
    read as percentages. A ``<figure>``: the plot, then its HTML legend.
    """
    lines = {name: _points(points) for name, points in sorted(curves.items())}
    if not any(_drawable(y) for _, y in lines.values()):
        return _no_data(title)
    with _style():
        fig = mfigure.Figure(figsize=(WIDTH, 3.6))
        ax = fig.add_subplot()
        ax.axhline(0.0, color="#888888", linewidth=0.8)
        below = {name: (times, -np.abs(ys)) for name, (times, ys) in lines.items()}
        keys = _contestant_lines(ax, below, 1.5)
        deepest = max(float(np.nanmax(np.abs(ys))) for _, ys in lines.values() if _drawable(ys))
        ax.set_ylim(-max(deepest * 1.08, 0.01), 0.0)
        _date_axis(ax)
        ax.yaxis.set_major_formatter(mticker.PercentFormatter(1.0))
        ax.set_ylabel("below peak")
        ax.set_title(title)
        return _figure(_svg(fig, title), keys)


def scatter_chart(
    points: Sequence[tuple[str, float, float]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    x_percent: bool = False,
    y_percent: bool = False,
) -> str:
    """One point per contestant, (name, x, y), each labelled with its name.

    Used for "activity is not alpha" (fills against rank score) and "model cost against
    return". Points take :func:`series_colours`; labels go on the side of their point that
    collides least with the labels and points already placed. ``x_percent``/``y_percent``
    read fractions as percentages (0.05 -> 5%). Points with a missing coordinate are left out.
    """
    shown = [(str(n), float(x), float(y)) for n, x, y in _finite_points(points)]
    if not shown:
        return _no_data(title)
    colours = series_colours([n for n, _, _ in shown])
    with _style():
        fig = mfigure.Figure(figsize=(WIDTH, 4.8))
        ax = fig.add_subplot()
        xs = np.array([x for _, x, _ in shown])
        ys = np.array([y for _, _, y in shown])
        ax.scatter(xs, ys, s=42, c=[colours[n] for n, _, _ in shown], edgecolors="white",
                   linewidths=0.8, zorder=3)
        ax.margins(x=0.15, y=0.12)
        ax.autoscale_view()
        for value, line in ((xs, ax.axvline), (ys, ax.axhline)):
            if value.min() < 0 < value.max():
                line(0.0, color="#888888", linewidth=0.8, zorder=1)
        _label_points(ax, shown)
        for percent, axis in ((x_percent, ax.xaxis), (y_percent, ax.yaxis)):
            axis.set_major_formatter(
                mticker.PercentFormatter(1.0) if percent else mticker.FuncFormatter(_plain_number)
            )
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.set_title(title)
        return _svg(fig, title)


def heatmap_chart(
    rows: Sequence[str],
    columns: Sequence[str],
    values: Sequence[Sequence[float | None]],
    *,
    title: str,
    value_format: str = "{:.2f}",
    centre: float = 0.0,
    colorbar_label: str = "",
    limit: float | None = None,
) -> str:
    """A rows x columns grid of values on a diverging scale (blue below ``centre``, red above).

    The scale is symmetric: ``centre ± limit``; ``limit`` defaults to the largest distance of a
    value from the centre (pass 1.0 for correlations). Values beyond it take the end colours.
    None/NaN cells are grey and blank. Up to :data:`MAX_ANNOTATED_CELLS` cells carry their value
    (``value_format``) in black or white, whichever reads on the cell. The figure grows with the
    grid (e.g. 60 assets x 16 rules) so row and column labels stay legible.
    """
    grid = np.array(
        [[_num(v) for v in row] for row in values], dtype=float
    ).reshape(len(values), -1 if values else 0)
    if grid.shape != (len(rows), len(columns)):
        raise ValueError(
            f"heatmap_chart: values are {grid.shape[0]}x{grid.shape[1]} "
            f"but there are {len(rows)} rows and {len(columns)} columns"
        )
    finite = grid[np.isfinite(grid)]
    if not finite.size:
        return _no_data(title)
    span = limit if limit is not None and limit > 0 else float(np.max(np.abs(finite - centre)))
    span = span if span > 0 else 1.0
    norm = mcolors.Normalize(vmin=centre - span, vmax=centre + span, clip=False)
    cmap = matplotlib.colormaps[HEATMAP_CMAP].with_extremes(bad=MISSING_FILL)
    n_rows, n_cols = grid.shape
    annotate = grid.size <= MAX_ANNOTATED_CELLS
    label_size = 9 if max(n_rows, n_cols) <= 30 else 7
    cell_h = (0.4 if n_rows <= 10 else 0.3) if annotate else 0.17
    longest_col = max(len(str(c)) for c in columns)
    rotation = 45 if longest_col > 4 else 0
    # the width is fixed (row labels and colour bar included, see WIDTH), the height grows
    width = WIDTH - 0.08 * label_size / 9 * max(len(str(r)) for r in rows)
    height = max(2.5, n_rows * cell_h + (0.05 * longest_col if rotation else 0.2) + 0.8)
    with _style():
        fig = mfigure.Figure(figsize=(width, height))
        ax = fig.add_subplot()
        ax.grid(False)
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, norm=norm, aspect="auto",
                          interpolation="none")
        ax.set_xticks(range(n_cols), [str(c) for c in columns], rotation=rotation,
                      ha="right" if rotation else "center", rotation_mode="anchor",
                      fontsize=label_size)
        ax.set_yticks(range(n_rows), [str(r) for r in rows], fontsize=label_size)
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        if annotate:
            for (i, j), value in np.ndenumerate(grid):
                if math.isfinite(value):
                    ax.text(j, i, _unsigned_zero(value_format.format(value)), ha="center", va="center",
                            fontsize=8, color=_ink(cmap(norm(value))))
        outside = finite.min() < centre - span or finite.max() > centre + span
        bar = fig.colorbar(image, ax=ax, fraction=0.05, pad=0.02,
                           shrink=min(1.0, 4.0 / height), extend="both" if outside else "neither")
        bar.outline.set_visible(False)
        if colorbar_label:
            bar.set_label(colorbar_label)
        ax.set_title(title)
        return _svg(fig, title)


# ----------------------------------------------------------------------------- helpers


def _unsigned_zero(text: str) -> str:
    """A value that rounds to zero, written without a sign ("0.0", never "-0.0")."""
    return text.lstrip("+-") if not re.search(r"[1-9]", text) else text


@contextmanager
def _style() -> Iterator[None]:
    with matplotlib.rc_context(RC):
        yield


def _svg(fig: Figure, title: str) -> str:
    """The figure as an inline ``<svg class="chart" role="img">`` with a ``<title>``: no prolog,
    no metadata, no fixed size, no unreferenced ids. Call inside :func:`_style`."""
    backend_svg.FigureCanvasSVG(fig)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", pad_inches=0.1,
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buffer.getvalue()
    text = text[text.index("<svg"):]
    # matplotlib's `*{stroke-linejoin...}` stylesheet would apply to the whole HTML page: the
    # same defaults go on the root as inherited presentation attributes instead.
    text = _DEFAULT_STYLE.sub("", text, count=1)
    root = _SVG_OPEN.match(text)
    assert root is not None  # matplotlib always opens with <svg ...>
    view_box = re.search(r'viewBox="([^"]+)"', root.group(0))
    assert view_box is not None
    label = html.escape(title, quote=True)
    opening = (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
        f'version="1.1" viewBox="{view_box.group(1)}" class="chart" role="img" '
        f'aria-label="{label}" stroke-linejoin="round" stroke-linecap="butt">'
        f"\n <title>{html.escape(title, quote=False)}</title>"
    )
    text = opening + text[root.end():]
    used = {a or b for a, b in _REFERENCED.findall(text)}
    text = _ID.sub(lambda m: m.group(0) if m.group(1) in used else "", text)
    return text.strip() + "\n"


def _no_data(title: str) -> str:
    """A small chart that says "no data", for inputs with nothing to draw."""
    with _style():
        fig = mfigure.Figure(figsize=(WIDTH, 1.2))
        ax = fig.add_subplot()
        ax.set_axis_off()
        ax.set_title(title)
        ax.text(0.5, 0.45, "no data", ha="center", va="center", fontsize=11, color="#666666",
                transform=ax.transAxes)
        return _svg(fig, title)


def _num(value: object) -> float:
    """A float, NaN for anything missing or not a finite number."""
    if value is None or value is pd.NA or value is pd.NaT:
        return math.nan
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return number if math.isfinite(number) else math.nan


def _utc(t: object) -> pd.Timestamp:
    stamp = pd.Timestamp(t)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _datetimes(times: Sequence[pd.Timestamp]) -> np.ndarray:
    """UTC times as naive datetime64 (matplotlib's dates are UTC under RC's timezone)."""
    return pd.DatetimeIndex([_utc(t) for t in times]).tz_convert(None).to_numpy()


def _points(points: Points) -> tuple[np.ndarray, np.ndarray]:
    """(times, values) sorted by time; missing values stay as NaN so they break the line. A
    Series (values by time, a year of a contestant's curve) is converted as a whole."""
    if isinstance(points, pd.Series):
        ordered = points.sort_index(kind="stable")
        index = pd.DatetimeIndex(ordered.index)
        index = index.tz_localize("UTC") if index.tz is None else index.tz_convert("UTC")
        return index.tz_convert(None).to_numpy(), ordered.to_numpy(dtype=float, na_value=np.nan)
    pairs = sorted(((_utc(t), _num(y)) for t, y in points), key=lambda p: p[0])
    return _datetimes([t for t, _ in pairs]), np.array([y for _, y in pairs], dtype=float)


def _drawable(values: np.ndarray) -> bool:
    return bool(np.isfinite(values).any())


def _finite_points(points: Sequence[tuple[str, float, float]]) -> list[tuple[str, float, float]]:
    kept = [(name, _num(x), _num(y)) for name, x, y in points]
    return [(n, x, y) for n, x, y in kept if math.isfinite(x) and math.isfinite(y)]


def _date_axis(ax: Axes) -> None:
    """Date ticks like ``Oct 03`` in UTC (with the hour when the data spans under two days)."""
    lo, hi = ax.get_xlim()
    fmt = "%b %d %H:%M" if hi - lo < 2 else "%b %d"
    locator = mdates.AutoDateLocator(minticks=3, maxticks=8, tz="UTC")
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.DateFormatter(fmt, tz="UTC"))
    ax.set_xlabel("UTC")


def _draw(ax: Axes, times: np.ndarray, ys: np.ndarray, key: LegendKey) -> LegendKey:
    """Plot one series as ``key`` says (a lone point as a dot, which a line could not show);
    return the key, as a point when it is one."""
    if len(ys) == 1:
        key = replace(key, kind="point")
    ax.plot(times, ys, color=key.colour, linestyle=key.style, linewidth=key.width,
            alpha=key.alpha, marker="o" if key.kind == "point" else None)
    return key


def _contestant_lines(ax: Axes, lines: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      width: float) -> list[LegendKey]:
    """Each contestant's line in its :func:`series_colours` colour (solid for the first ten,
    then dashed, then dotted); their legend keys in name order."""
    colours = series_colours(list(lines))
    return [_draw(ax, times, ys, LegendKey(
                name, colours[name], LINE_DASHES[(i // len(PALETTE)) % len(LINE_DASHES)], width))
            for i, (name, (times, ys)) in enumerate(sorted(lines.items()))]


def _figure(svg: str, keys: Sequence[LegendKey]) -> str:
    """The chart's SVG and its legend as HTML: a ``<figure class="chart">``."""
    items = "".join(
        f'<li><span class="key {key.kind}" style="{html.escape(_swatch(key), quote=True)}">'
        f"</span>{html.escape(key.label, quote=False)}</li>\n" for key in keys
    )
    return f'<figure class="chart">\n{svg}<ul class="legend">\n{items}</ul>\n</figure>\n'


def _swatch(key: LegendKey) -> str:
    """The inline CSS that draws ``key``'s swatch: a band's or a point's colour, or a strip as
    thick as the line with its dashes (CSS px = :data:`KEY_PX` x points). The thickness is whole
    pixels: the browser snaps a box's edges to pixels, so a fractional one would paint lines of
    one weight 2 px thick in one row of the legend and 3 px in the next."""
    colour = mcolors.to_hex(mcolors.to_rgba(key.colour, key.alpha), keep_alpha=key.alpha < 1)
    if key.kind != "line":
        return f"background: {colour}"
    height = f"height: {max(1, round(key.width * KEY_PX))}px"
    dashes = _dashes(key.style, key.width)
    if not dashes:
        return f"{height}; background: {colour}"
    stops, at = [], 0.0
    for i, length in enumerate(dashes):
        stops.append(f"{colour if i % 2 == 0 else 'transparent'} "
                     f"{_key_px(at)} {_key_px(at + length)}")
        at += length
    return f"{height}; background: repeating-linear-gradient(90deg, {', '.join(stops)})"


def _dashes(style: str | tuple[float, Sequence[float]], width: float) -> tuple[float, ...]:
    """A line style's dashes in points (on, off, on, off...), as matplotlib draws them: its
    named patterns from the rc settings, scaled by the line's width (``lines.scale_dashes``);
    () for a solid line."""
    if isinstance(style, tuple):
        pattern: Sequence[float] = style[1]
    else:
        named = {"--": "lines.dashed_pattern", ":": "lines.dotted_pattern",
                 "-.": "lines.dashdot_pattern"}
        pattern = matplotlib.rcParams[named[style]] if style in named else ()
    scale = width if matplotlib.rcParams["lines.scale_dashes"] else 1.0
    return tuple(float(p) * scale for p in pattern)


def _key_px(points: float) -> str:
    return f"{round(points * KEY_PX, 2):g}px"


def _plain_number(value: float, _pos: object = None) -> str:
    """A tick label without float noise: 1,250 / 0.5 / 0.0025."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.6g}"


def _ink(rgba: tuple[float, float, float, float]) -> str:
    """Black or white text, whichever reads on a cell of colour ``rgba``."""
    r, g, b = mcolors.to_rgb(rgba)
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "#FFFFFF"


# Label placements around a point: (dx, dy) in points and the text's alignment.
_OFFSETS = (
    (6, 3, "left", "bottom"), (-6, 3, "right", "bottom"), (6, -3, "left", "top"),
    (-6, -3, "right", "top"), (0, 8, "center", "bottom"), (0, -8, "center", "top"),
)


def _label_points(ax: Axes, shown: Sequence[tuple[str, float, float]]) -> None:
    """Name each point, choosing per label the placement that overlaps least with the labels
    already placed, the other points and the plot's edge (a greedy pass, points in x order)."""
    size = 9.0
    to_pixels = ax.transData.transform
    centres = [tuple(to_pixels((x, y))) for _, x, y in shown]
    box = ax.get_window_extent()
    dots = [(cx - 4, cy - 4, cx + 4, cy + 4) for cx, cy in centres]
    placed: list[tuple[float, float, float, float]] = []
    for k in sorted(range(len(shown)), key=lambda k: (shown[k][1], shown[k][2], shown[k][0])):
        name = shown[k][0]
        cx, cy = centres[k]
        w, h = 0.6 * size * len(name), 1.2 * size
        best: tuple[float, int, tuple[float, float, float, float]] | None = None
        for index, (dx, dy, ha, va) in enumerate(_OFFSETS):
            x0 = cx + dx - (w if ha == "right" else w / 2 if ha == "center" else 0)
            y0 = cy + dy - (h if va == "top" else 0)
            rect = (x0, y0, x0 + w, y0 + h)
            cost = sum(_overlap(rect, other) for other in placed)
            cost += sum(_overlap(rect, d) for i, d in enumerate(dots) if i != k)
            cost += w * h - _overlap(rect, (box.x0, box.y0, box.x1, box.y1))
            if best is None or cost < best[0]:
                best = (cost, index, rect)
        assert best is not None
        dx, dy, ha, va = _OFFSETS[best[1]]
        placed.append(best[2])
        ax.annotate(name, (shown[k][1], shown[k][2]), xytext=(dx, dy),
                    textcoords="offset points", ha=ha, va=va, fontsize=size,
                    color="#222222", annotation_clip=False)  # dark: the dot has the colour


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w * h if w > 0 and h > 0 else 0.0
