"""arena.reporting.plots: matplotlib charts as inline SVG: deterministic, self-contained, text
kept as text, and no exception on empty or awkward input."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from arena.reporting import plots

SVG = "{http://www.w3.org/2000/svg}"
DAYS = pd.date_range("2026-10-01", periods=20, freq="D", tz="UTC")
CURVES = {
    "gpt-5": [(t, 10_000.0 + 40 * i) for i, t in enumerate(DAYS)],
    "claude": [(t, 10_000.0 - 25 * i) for i, t in enumerate(DAYS)],
}
BENCHMARKS = {"BTC": [(t, 10_000.0 + 90 * i) for i, t in enumerate(DAYS)],
              "SPY": [(t, 10_000.0 + 5 * i) for i, t in enumerate(DAYS)]}
BAND = [(t, 9_500.0 - 10 * i, 10_000.0, 10_500.0 + 10 * i) for i, t in enumerate(DAYS)]
DRAWDOWNS = {"gpt-5": [(t, 0.01 * (i % 5)) for i, t in enumerate(DAYS)],
             "claude": [(t, 0.02 * i) for i, t in enumerate(DAYS)]}
POINTS = [("gpt-5", 120.0, 1.2), ("claude", 118.0, 1.1), ("gemini", 30.0, -0.2)]
ROWS, COLUMNS = ["BTC", "ETH", "SPY"], ["buy_and_hold", "sma_cross", "rsi_revert"]
VALUES = [[1.25, -0.5, None], [0.0, float("nan"), 2.0], [-1.75, 0.33, 0.1]]


def charts() -> dict[str, str]:
    return {
        "equity": plots.equity_chart(CURVES, benchmarks=BENCHMARKS, band=BAND, players=2000),
        "drawdown": plots.drawdown_chart(DRAWDOWNS),
        "scatter": plots.scatter_chart(POINTS, title="Activity is not alpha", x_label="fills",
                                       y_label="rank score"),
        "heatmap": plots.heatmap_chart(ROWS, COLUMNS, VALUES, title="Reference rules",
                                       colorbar_label="rank score"),
    }


def empty_charts() -> dict[str, str]:
    return {
        "equity": plots.equity_chart({}, benchmarks={}, band=[], players=0),
        "equity-all-missing": plots.equity_chart({"a": [(DAYS[0], None)]}, benchmarks={},
                                                 band=[], players=0),
        "drawdown": plots.drawdown_chart({}),
        "scatter": plots.scatter_chart([("a", float("nan"), 1.0)], title="Cost vs return",
                                       x_label="cost", y_label="return"),
        "heatmap": plots.heatmap_chart([], [], [], title="Correlations"),
        "heatmap-all-missing": plots.heatmap_chart(["a"], ["b"], [[None]], title="Correlations"),
    }


def texts(svg: str) -> list[str]:
    return ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{SVG}text")]


def root_svg(chart: str) -> ET.Element:
    """The chart's <svg>: the markup itself, or the first child of a line chart's <figure>."""
    root = ET.fromstring(chart)
    return root if root.tag == f"{SVG}svg" else root[0]


def legend(chart: str) -> list[tuple[str, str, str]]:
    """A line chart's HTML legend: (label, swatch kind, swatch style) per item, in order."""
    figure = ET.fromstring(chart)
    assert figure.tag == "figure" and figure.get("class") == "chart"
    assert [child.tag for child in figure] == [f"{SVG}svg", "ul"]
    assert figure[1].get("class") == "legend"
    items = []
    for item in figure[1]:
        key = item.find("span")
        assert key is not None and key.get("class", "").startswith("key ")
        items.append((item.text if item.text else key.tail or "", key.get("class")[4:],
                      key.get("style")))
    return items


@pytest.fixture(scope="module")
def drawn() -> dict[str, str]:
    return charts()


def test_same_input_gives_byte_identical_svg(drawn):
    again = charts()
    for name, svg in drawn.items():
        assert again[name] == svg, name
    assert empty_charts() == empty_charts()


@pytest.mark.parametrize("which", ["drawn", "empty"])
def test_root_is_a_scalable_chart_with_a_title(drawn, which):
    for name, svg in (drawn if which == "drawn" else empty_charts()).items():
        lines = which == "drawn" and name in ("equity", "drawdown")  # a <figure>, its legend
        assert svg.startswith('<figure class="chart">\n<svg ' if lines else "<svg "), name
        assert "<?xml" not in svg and "<!DOCTYPE" not in svg and "<!--" not in svg, name
        assert "<metadata" not in svg and "<style" not in svg, name
        root = root_svg(svg)
        assert root.tag == f"{SVG}svg"
        assert root.get("class") == "chart" and root.get("role") == "img"
        assert "width" not in root.attrib and "height" not in root.attrib, name
        x, y, w, h = (float(v) for v in root.get("viewBox", "").split())
        assert (x, y) == (0, 0) and w > 300 and h > 50, name
        title = root.find(f"{SVG}title")
        assert title is not None and title.text, name
        assert root.get("aria-label") == title.text


def test_titles(drawn):
    assert root_svg(drawn["equity"]).get("aria-label") == plots.EQUITY_TITLE
    assert ET.fromstring(drawn["scatter"]).find(f"{SVG}title").text == "Activity is not alpha"
    assert "Activity is not alpha" in texts(drawn["scatter"])  # drawn, not only in <title>


@pytest.mark.parametrize("which", ["drawn", "empty"])
def test_nothing_outside_the_file(drawn, which):
    for name, svg in (drawn if which == "drawn" else empty_charts()).items():
        outside = re.sub(r'xmlns(:xlink)?="http://www\.w3\.org/(2000/svg|1999/xlink)"', "", svg)
        assert "http" not in outside, name
        assert "@import" not in svg and "url(http" not in svg, name
        for element in ET.fromstring(svg).iter():
            for key, value in element.attrib.items():
                if key.endswith("href") or key == "src":
                    assert value.startswith(("#", "data:")), (name, key, value)


def test_unreferenced_ids_are_dropped(drawn):
    svg = drawn["equity"]
    assert 'id="figure_1"' not in svg and 'id="axes_1"' not in svg
    ids = re.findall(r'\sid="([^"]+)"', svg)
    assert ids and len(ids) == len(set(ids))
    for i in ids:  # what stays is used (clip paths, markers)
        assert f"url(#{i})" in svg or f'href="#{i}"' in svg


def test_equity_text_is_searchable(drawn):
    labels = texts(drawn["equity"])
    assert "equity, USD" in labels
    ticks = [t for t in labels if re.fullmatch(r"\d{1,2},\d{3}", t)]
    assert len(ticks) >= 3  # USD ticks with thousands separators
    assert "font-family: 'DejaVu Sans'" in drawn["equity"]


def test_contestants_keep_their_colours(drawn):
    colours = plots.series_colours(list(CURVES))
    for name, colour in colours.items():
        assert f"stroke: {colour.lower()}" in drawn["equity"], name
        assert f"stroke: {colour.lower()}" in drawn["drawdown"], name
    for colour in plots.series_colours([n for n, _, _ in POINTS]).values():
        assert colour.lower() in drawn["scatter"]


@pytest.mark.parametrize("chart", ["equity", "drawdown"])
def test_date_labels_have_no_offset(drawn, chart):
    labels = texts(drawn[chart])
    dates = [t for t in labels if re.fullmatch(r"[A-Z][a-z]{2} \d{2}", t)]
    assert "Oct 01" in dates and len(dates) >= 3
    assert not any("+00:00" in t or "UTC+" in t for t in labels)
    assert "+00:00" not in drawn[chart]


def test_naive_and_aware_times_give_the_same_chart():
    naive = {k: [(t.tz_localize(None), v) for t, v in pts] for k, pts in DRAWDOWNS.items()}
    assert plots.drawdown_chart(naive) == plots.drawdown_chart(DRAWDOWNS)


def test_short_season_labels_carry_the_hour():
    hours = pd.date_range("2026-10-03", periods=12, freq="h", tz="UTC")
    svg = plots.drawdown_chart({"a": [(t, 0.001 * i) for i, t in enumerate(hours)]})
    assert any(re.fullmatch(r"Oct 03 \d{2}:00", t) for t in texts(svg))


def test_drawdown_goes_down_in_percent(drawn):
    labels = texts(drawn["drawdown"])
    assert "0%" in labels or "0.0%" in labels
    negative = [t for t in labels if re.fullmatch(r"-\d+(\.\d+)?%", t)]
    assert len(negative) >= 3  # ASCII minus, searchable
    assert not [t for t in labels if re.fullmatch(r"\d+(\.\d+)?%", t) and float(t[:-1]) > 0]
    # the sign of the input is ignored
    flipped = {k: [(t, -v) for t, v in pts] for k, pts in DRAWDOWNS.items()}
    assert plots.drawdown_chart(flipped) == drawn["drawdown"]


def test_scatter_names_every_point(drawn):
    labels = texts(drawn["scatter"])
    for name, _, _ in POINTS:
        assert labels.count(name) == 1
    assert "fills" in labels and "rank score" in labels


def test_scatter_percent_axes_and_missing_points():
    svg = plots.scatter_chart([("a", 0.01, 0.25), ("b", 0.03, -0.1), ("c", None, 0.2)],
                              title="Model cost vs return", x_label="cost, USD",
                              y_label="return", y_percent=True)
    labels = texts(svg)
    assert "a" in labels and "b" in labels and "c" not in labels
    assert any(re.fullmatch(r"-?\d+(\.\d+)?%", t) for t in labels)


def test_heatmap_cells_carry_their_values(drawn):
    labels = texts(drawn["heatmap"])
    for cell in ("1.25", "-0.50", "0.00", "2.00", "-1.75", "0.33", "0.10"):
        assert cell in labels
    assert "nan" not in " ".join(labels).lower() and "None" not in labels
    for label in [*ROWS, *COLUMNS, "rank score"]:
        assert label in labels
    assert 'style="image-rendering:crisp-edges;image-rendering:pixelated"' in drawn["heatmap"]


def test_heatmap_text_reads_on_its_cell():
    svg = plots.heatmap_chart(["a"], ["lo", "mid", "hi"], [[-1.0, 0.0, 1.0]], title="t",
                              value_format="{:+.1f}")
    fills = {t.text: t.get("style", "") for t in ET.fromstring(svg).iter(f"{SVG}text")
             if "font-size: 8px" in t.get("style", "")}  # the cells, not the colour bar's ticks
    assert set(fills) == {"-1.0", "0.0", "+1.0"}
    assert "fill: #ffffff" in fills["-1.0"] and "fill: #ffffff" in fills["+1.0"]
    assert "fill: #ffffff" not in fills["0.0"]


def test_heatmap_values_outside_the_limit_and_large_grids():
    svg = plots.heatmap_chart(["a", "b"], ["x", "y"], [[5.0, -3.0], [math.inf, 0.2]],
                              title="Correlations", limit=1.0, value_format="{:.1f}")
    labels = texts(svg)
    assert "5.0" in labels and "-3.0" in labels and "0.2" in labels
    big = plots.heatmap_chart([f"S{i}" for i in range(30)], [f"r{j}" for j in range(16)],
                              [[(i - j) / 10 for j in range(16)] for i in range(30)],
                              title="Reference rules")
    labels = texts(big)
    assert "S29" in labels and "r15" in labels
    assert "0.50" not in labels  # 480 cells: too many to annotate


def test_heatmap_shape_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 rows"):
        plots.heatmap_chart(["a", "b"], ["x"], [[1.0]], title="t")


def test_empty_input_says_no_data():
    for name, svg in empty_charts().items():
        assert "no data" in texts(svg), name


def test_series_colours_are_stable():
    colours = plots.series_colours(["zeta", "alpha", "mid"])
    assert colours == plots.series_colours(["mid", "zeta", "alpha", "alpha"])
    assert list(colours) == ["alpha", "mid", "zeta"]
    assert colours["alpha"] == plots.PALETTE[0] and colours["zeta"] == plots.PALETTE[2]
    assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in colours.values())
    many = plots.series_colours([f"p{i:02d}" for i in range(12)])
    assert many["p10"] == plots.PALETTE[0] and len(set(many.values())) == len(plots.PALETTE)


def test_no_global_matplotlib_state_changes():
    import matplotlib

    before = dict(matplotlib.rcParams)
    charts()
    assert dict(matplotlib.rcParams) == before


def test_a_heatmap_cell_that_rounds_to_zero_has_no_sign():
    svg = plots.heatmap_chart(["A"], ["x", "y"], [[-0.0004, 0.5]], title="t",
                              value_format="{:.1f}")
    assert ">-0.0<" not in svg and ">0.0<" in svg and ">0.5<" in svg


def test_the_line_charts_legends_are_html_in_the_charts_order(drawn):
    """The legend is the page's text, not the image's (it must not shrink with the chart on a
    phone): contestants by name, the benchmarks, the band, its median, the start cash; the SVG
    holds no label of a line."""
    assert [label for label, _, _ in legend(drawn["equity"])] == [
        "claude", "gpt-5", "BTC", "SPY", "zero-skill 5–95% (2,000 players)",
        "zero-skill median", "start cash 10,000"]
    assert [label for label, _, _ in legend(drawn["drawdown"])] == ["claude", "gpt-5"]
    for chart in ("equity", "drawdown"):
        assert not {"claude", "gpt-5"} & set(texts(drawn[chart])), chart


def test_a_legend_swatch_is_drawn_like_its_line(drawn):
    """Each swatch has its line's colour, weight and dashes (matplotlib's patterns, scaled by
    the width, 1.5 CSS px a point); the band is its shade, a lone point a dot."""
    keys = {label: (kind, style) for label, kind, style in legend(drawn["equity"])}
    colours = plots.series_colours(list(CURVES))
    assert keys["gpt-5"] == ("line", f"height: 3px; background: {colours['gpt-5'].lower()}")
    assert keys["BTC"] == ("line", "height: 2px; background: repeating-linear-gradient(90deg, "
                                   "#000000 0px 7.22px, transparent 7.22px 10.34px)")
    assert keys["SPY"][1].endswith("#555555 0px 1.95px, transparent 1.95px 5.17px)")  # dotted
    assert keys["zero-skill 5–95% (2,000 players)"] == ("band", "background: #88888838")
    many = {f"p{i:02d}": [(DAYS[0], 0.01), (DAYS[1], 0.02)] for i in range(11)}
    eleventh = legend(plots.drawdown_chart(many))[10]  # the palette's second trip: dashed
    assert eleventh[0] == "p10" and "repeating-linear-gradient(90deg, #0072b2 0px" in eleventh[2]
    lone = plots.equity_chart({"a": [(DAYS[0], 10_100.0)]}, benchmarks={}, band=[], players=0)
    assert legend(lone)[0] == ("a", "point", f"background: {plots.PALETTE[0].lower()}")


def test_a_legend_writes_names_as_text():
    chart = plots.drawdown_chart({'<b onclick="x">&co</b>': [(DAYS[0], 0.0), (DAYS[1], 0.1)]})
    assert '&lt;b onclick="x"&gt;&amp;co&lt;/b&gt;</li>' in chart and "<b " not in chart
    assert legend(chart)[0][0] == '<b onclick="x">&co</b>'
