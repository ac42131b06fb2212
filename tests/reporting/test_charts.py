"""arena.reporting.charts: SVG structure, scales pinned by hand, escaping and the awkward inputs."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from arena.reporting import charts

SVG = "{http://www.w3.org/2000/svg}"
DAYS = pd.date_range("2026-05-13", periods=30, freq="D", tz="UTC")
EVIL = "<script>alert('x')</script> & co"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root


def parse_html_fragment(fragment: str) -> ET.Element:
    """The fragments html_table writes are well-formed XML too."""
    return ET.fromstring(fragment)


def by_class(root: ET.Element, tag: str, cls: str) -> list[ET.Element]:
    return [e for e in root.iter(f"{SVG}{tag}") if e.get("class") == cls]


def texts(root: ET.Element) -> list[str]:
    return [e.text or "" for e in root.iter(f"{SVG}text")]


def walk(n: int, start: float = 10_000.0, step: float = 25.0) -> list[tuple[pd.Timestamp, float]]:
    return [(t, start + step * k * (-1) ** k) for k, t in enumerate(DAYS[:n])]


def path_points(d: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in re.findall(r"[ML](-?[\d.]+) (-?[\d.]+)", d)]


CHARTS = {
    "line": lambda: charts.line_chart({"a": walk(30), "b": walk(30, 9_000)}, title="Equity"),
    "line, band": lambda: charts.line_chart(
        {"a": walk(30)},
        band=[(t, 9_000.0, 10_000.0, 11_000.0) for t in DAYS],
        title="Equity",
        baseline=10_000,
    ),
    "line, empty": lambda: charts.line_chart({}, title="Equity"),
    "line, all missing": lambda: charts.line_chart({"a": [(DAYS[0], None)]}, title="Equity"),
    "line, one point": lambda: charts.line_chart({"a": [("2026-06-01", 5.0)]}, title="Equity"),
    "bar": lambda: charts.bar_chart(["a", "b", "c"], [1.5, -2.0, None], title="Returns"),
    "bar, empty": lambda: charts.bar_chart([], [], title="Returns"),
    "heatmap": lambda: charts.heatmap(["a", "b"], [[1.0, 0.2], [0.2, 1.0]], title="Correlation"),
    "heatmap, 60": lambda: charts.heatmap(
        [f"S{i}" for i in range(60)], [[0.1] * 60 for _ in range(60)], title="Correlation"
    ),
    "heatmap, empty": lambda: charts.heatmap([], [], title="Correlation"),
}


@pytest.mark.parametrize("build", CHARTS.values(), ids=CHARTS.keys())
def test_every_svg_is_an_accessible_image_with_an_explicit_size(build):
    root = parse(build())
    assert root.get("role") == "img"
    assert root.get("aria-label")
    assert root.find(f"{SVG}title").text == root.get("aria-label")
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {root.get('width')} {root.get('height')}"
    assert width > 0 and height > 0
    assert not re.search(r"\b(nan|inf)\b", ET.tostring(root, encoding="unicode"), re.I)


# Line chart ---------------------------------------------------------------------------------


def test_line_chart_pins_data_to_hand_computed_pixels():
    # y ticks 0, 20, ..., 100 span the plot from y1 = 360 - BOTTOM = 316 up to y0 = TOP = 40.
    # x: left margin 12 + width of the widest tick label "100" (3 chars * 11 px * 0.6 = 19.8)
    # + 10 = 41.8; the legend ("a": 7.2 px + 34) and its 20 px gap end the plot at
    # 900 - 41.2 - 20 = 838.8. The middle day sits halfway: (41.8 + 838.8) / 2 = 440.3.
    svg = charts.line_chart(
        {"a": [(DAYS[0], 0.0), (DAYS[1], 50.0), (DAYS[2], 100.0)]},
        title="t",
        width=900,
        height=360,
    )
    (line,) = by_class(parse(svg), "path", "series")
    assert line.get("d") == "M41.8 316.0 L440.3 178.0 L838.8 40.0"
    assert [t for t in texts(parse(svg)) if t.isdigit()] == ["0", "20", "40", "60", "80", "100"]


def test_line_chart_draws_one_path_per_series_plus_band_and_median():
    svg = charts.line_chart(
        {"a": walk(30), "b": walk(30, 9_500), "c": walk(30, 10_500)},
        band=[(t, 9_000.0, 10_000.0, 11_000.0) for t in DAYS],
        title="Equity",
    )
    root = parse(svg)
    assert len(by_class(root, "path", "series")) == 3
    assert len(by_class(root, "path", "band")) == 1
    assert len(by_class(root, "path", "band-median")) == 1
    assert len(list(root.iter(f"{SVG}path"))) == 5
    assert "zero-skill 5-95%" in texts(root)  # the band's legend entry
    (band,) = by_class(root, "path", "band")
    assert band.get("d").endswith("Z") and len(path_points(band.get("d"))) == 2 * len(DAYS)


def test_missing_values_break_the_line_and_an_isolated_point_becomes_a_dot():
    points = walk(10)
    points[3] = (points[3][0], None)  # break after three points
    points[5] = (points[5][0], float("nan"))  # leaves point 4 alone
    points[6] = (points[6][0], math.inf)
    root = parse(charts.line_chart({"a": points}, title="t"))
    (line,) = by_class(root, "path", "series")
    d = line.get("d")
    assert d.count("M") == 2  # runs 0-2 and 7-9
    assert len(path_points(d)) == 6
    assert len(by_class(root, "circle", "point")) == 1  # point 4


def test_values_that_are_not_numbers_are_refused():
    with pytest.raises(TypeError, match="not str '12'"):
        charts.line_chart({"a": [(DAYS[0], "12")]}, title="t")
    with pytest.raises(TypeError, match="not bool"):
        charts.bar_chart(["a"], [True], title="t")


def test_a_single_point_renders_as_a_dot_with_distinct_tick_labels():
    root = parse(charts.line_chart({"one": [("2026-06-01", 5.0)]}, title="t"))
    assert len(by_class(root, "circle", "point")) == 1
    (line,) = by_class(root, "path", "series")
    assert line.get("d").startswith("M")
    y_labels = [e.text for e in root.iter(f"{SVG}text") if e.get("text-anchor") == "end"]
    assert len(y_labels) == len(set(y_labels)) >= 3


def test_a_flat_series_gets_a_scale_and_sits_mid_plot():
    root = parse(charts.line_chart({"flat": walk(10, 10_000, 0.0)}, title="t", height=360))
    (line,) = by_class(root, "path", "series")
    ys = {y for _, y in path_points(line.get("d"))}
    assert ys == {(charts.TOP + 360 - charts.BOTTOM) / 2}  # 10,000 is the middle tick


@pytest.mark.parametrize(
    "series",
    [{}, {"a": []}, {"a": [(DAYS[0], None), (DAYS[1], float("nan"))]}],
    ids=["no series", "empty series", "only missing values"],
)
def test_no_data_renders_a_placeholder(series):
    root = parse(charts.line_chart(series, title="Equity"))
    assert "no data" in texts(root)
    assert not list(root.iter(f"{SVG}path"))


def test_baseline_is_drawn_inside_the_y_range_even_when_the_data_is_above_it():
    root = parse(charts.line_chart({"a": walk(10, 12_000)}, title="t", baseline=10_000))
    (line,) = by_class(root, "line", "baseline")
    y = float(line.get("y1"))
    assert charts.TOP <= y <= 360 - charts.BOTTOM
    assert "10,000" in texts(root)


def test_dates_get_calendar_ticks():
    ticks = charts.date_ticks(
        pd.Timestamp("2026-05-13", tz="UTC"), pd.Timestamp("2026-11-29", tz="UTC")
    )
    assert [label for _, label in ticks] == [
        "Jun 2026", "Jul 2026", "Aug 2026", "Sep 2026", "Oct 2026", "Nov 2026",
    ]  # fmt: skip
    week = charts.date_ticks(
        pd.Timestamp("2026-06-01", tz="UTC"), pd.Timestamp("2026-06-04", tz="UTC")
    )
    assert [label for _, label in week] == ["1 Jun", "2 Jun", "3 Jun", "4 Jun"]


def test_naive_string_and_aware_times_mix():
    svg = charts.line_chart(
        {"a": [("2026-06-01", 1.0), ("2026-06-02", 2.0)], "b": [(pd.Timestamp("2026-06-03"), 3.0)]},
        band=[(pd.Timestamp("2026-06-01", tz="America/New_York"), 0.0, 1.0, 2.0)],
        title="t",
    )
    assert len(by_class(parse(svg), "path", "series")) == 2


def test_colours_cycle_and_the_second_lap_is_dashed():
    series = {f"s{i}": walk(5, 10_000 + i) for i in range(len(charts.PALETTE) + 1)}
    lines = by_class(parse(charts.line_chart(series, title="t")), "path", "series")
    assert lines[0].get("stroke") == lines[-1].get("stroke") == charts.PALETTE[0]
    assert lines[0].get("stroke-dasharray") is None
    assert lines[-1].get("stroke-dasharray")
    assert len({line.get("stroke") for line in lines}) == len(charts.PALETTE)


def test_nice_ticks():
    assert charts.nice_ticks(0, 100) == [0, 20, 40, 60, 80, 100]
    assert charts.nice_ticks(9_612, 12_480) == [9_000, 10_000, 11_000, 12_000, 13_000]
    assert charts.nice_ticks(9_612, 10_480) == [9_600, 9_800, 10_000, 10_200, 10_400, 10_600]
    assert charts.nice_ticks(-0.031, 0.12) == [-0.05, 0.0, 0.05, 0.1, 0.15]
    assert charts.nice_ticks(0, 0) == [-1, -0.5, 0, 0.5, 1]


def test_linear_scale():
    scale = charts.linear((0, 100), (316, 40))
    assert scale(0) == 316 and scale(100) == 40 and scale(50) == 178
    assert charts.linear((5, 5), (0, 10))(5) == 5  # zero-width domain: the middle


# Bar chart ----------------------------------------------------------------------------------


def test_bar_chart_pins_the_zero_axis_and_bars():
    # Value labels "-1.00"/"3.00": widest 5 chars * 6.6 + 8 = 41 px, reserved on both sides.
    # Labels "a"/"b": 7.2 px. So x0 = 12 + 7.2 + 12 + 41 = 72.2 and x1 = 900 - 12 - 41 = 847;
    # the domain -1..3 puts zero a quarter of the way: 72.2 + 774.8 / 4 = 265.9.
    root = parse(charts.bar_chart(["a", "b"], [-1.0, 3.0], title="t", width=900))
    a, b = by_class(root, "rect", "bar")
    assert (a.get("x"), a.get("width")) == ("72.2", "193.7")
    assert (b.get("x"), b.get("width")) == ("265.9", "581.1")
    assert a.get("fill") == charts.NEGATIVE and b.get("fill") == charts.POSITIVE
    (axis,) = by_class(root, "line", "axis")
    assert axis.get("x1") == "265.9"
    assert root.get("height") == str(charts.TOP + 2 * 26 + 16)


def test_bar_chart_leaves_out_missing_bars_and_labels_every_value():
    root = parse(
        charts.bar_chart(
            ["up", "down", "none", "nan"], [0.25, -0.1, None, float("nan")], title="t",
            value_format="{:+.1%}",
        )
    )  # fmt: skip
    assert len(by_class(root, "rect", "bar")) == 2
    assert len(list(root.iter(f"{SVG}rect"))) == 2
    assert {"+25.0%", "-10.0%", charts.MISSING} <= set(texts(root))


def test_bar_chart_of_zeros_and_of_missing_values_does_not_divide_by_zero():
    root = parse(charts.bar_chart(["a", "b"], [0.0, 0.0], title="t"))
    assert [r.get("width") for r in by_class(root, "rect", "bar")] == ["0.0", "0.0"]
    root = parse(charts.bar_chart(["a"], [None], title="t"))
    assert not by_class(root, "rect", "bar")


def test_bar_chart_refuses_mismatched_lengths():
    with pytest.raises(ValueError, match="2 labels but 1 values"):
        charts.bar_chart(["a", "b"], [1.0], title="t")


# Heatmap ------------------------------------------------------------------------------------


def test_small_heatmap_prints_every_cell():
    labels = ["a", "b", "c"]
    matrix = [[1.0, -1.0, None], [-1.0, 1.0, 0.0], [None, 0.0, 1.0]]
    root = parse(charts.heatmap(labels, matrix, title="t"))
    cells = by_class(root, "rect", "cell")
    assert len(cells) == 9
    assert [c.get("fill") for c in cells[:3]] == [
        charts.DIVERGING[-1], charts.DIVERGING[0], charts.MISSING_FILL,
    ]  # fmt: skip
    assert cells[5].get("fill") == charts.DIVERGING[2]  # 0 is the midpoint: white
    assert texts(root).count("1.00") == 3 + 1  # the diagonal and the legend's top
    assert "a × c: –" in [t.text for t in root.iter(f"{SVG}title")]


def test_heatmap_clamps_values_outside_the_range():
    root = parse(charts.heatmap(["a"], [[7.0]], title="t", vmin=-1, vmax=1))
    assert by_class(root, "rect", "cell")[0].get("fill") == charts.DIVERGING[-1]


def test_large_heatmap_drops_cell_text_and_stays_readable():
    n = 60
    labels = [f"ASSET{i:02d}" for i in range(n)]
    root = parse(charts.heatmap(labels, [[0.5] * n for _ in range(n)], title="t"))
    cells = by_class(root, "rect", "cell")
    assert len(cells) == n * n
    assert cells[0].get("width") == "12"
    assert len(texts(root)) == 1 + 2 * n + 3  # title, row and column labels, legend
    assert all(float(e.get("font-size")) >= 6 for e in root.iter(f"{SVG}text"))
    assert int(root.get("width")) <= 1000  # fits the page without scrolling


def test_heatmap_refuses_a_matrix_that_does_not_match_the_labels():
    with pytest.raises(ValueError, match="2x2"):
        charts.heatmap(["a", "b"], [[1.0, 0.0]], title="t")


# Escaping -----------------------------------------------------------------------------------


def test_text_is_escaped_everywhere():
    outputs = [
        charts.line_chart({EVIL: walk(5)}, band=[(DAYS[0], 1.0, 2.0, 3.0)], band_label=EVIL, title=EVIL, y_label=EVIL),
        charts.line_chart({}, title=EVIL),
        charts.bar_chart([EVIL], [1.0], title=EVIL),
        charts.heatmap([EVIL, "b"], [[1.0, 0.0], [0.0, 1.0]], title=EVIL),
    ]  # fmt: skip
    for svg in outputs:
        root = parse(svg)  # well-formed XML despite the markup in the labels
        assert "<script>" not in svg
        assert root.get("aria-label") == EVIL
    table = charts.html_table([{"name": EVIL}], [("name", EVIL, "")])
    document = charts.page(EVIL, [(EVIL, table)], subtitle=EVIL)
    assert "<script>" not in document
    assert document.count("&lt;script&gt;") == 7  # title, h1, subtitle, contents, h2, th, td
    parse_html_fragment(table)


# Table and page -----------------------------------------------------------------------------


COLUMNS = [("name", "Contestant", ""), ("ret", "Return", "{:+.2%}"), ("n", "Trades", "{:,}")]


def test_html_table_formats_and_classes():
    rows = [
        {"name": "alpha", "ret": 0.1234, "n": 1200},
        {"name": "beta", "ret": -0.05, "n": 0},
        {"name": "gamma", "ret": None, "n": float("nan")},
        {"name": "delta"},
    ]
    table = parse_html_fragment(charts.html_table(rows, COLUMNS))
    headers = table.findall("./thead/tr/th")
    assert [h.text for h in headers] == ["Contestant", "Return", "Trades"]
    assert [h.get("class") for h in headers] == [None, "num", "num"]
    body = [[(td.text, td.get("class")) for td in tr] for tr in table.findall("./tbody/tr")]
    assert body == [
        [("alpha", None), ("+12.34%", "num pos"), ("1,200", "num pos")],
        [("beta", None), ("-5.00%", "num neg"), ("0", "num")],
        [("gamma", None), ("–", "missing"), ("–", "missing")],
        [("delta", None), ("–", "missing"), ("–", "missing")],
    ]


def test_html_table_without_rows_says_so():
    table = parse_html_fragment(charts.html_table([], COLUMNS))
    (cell,) = table.findall("./tbody/tr/td")
    assert cell.text == "no rows" and cell.get("colspan") == "3"


def test_page_is_a_self_contained_document_with_a_table_of_contents():
    body = charts.bar_chart(["a"], [1.0], title="Returns")
    document = charts.page(
        "Season 1", [("Returns", body), ("Returns", "<p>again</p>")], subtitle="s"
    )
    assert document.startswith("<!doctype html>\n")
    assert '<meta charset="utf-8">' in document and "<style>" in document
    assert "<title>Season 1</title>" in document
    assert '<section id="returns">' in document and '<section id="returns-2">' in document
    assert '<a href="#returns">Returns</a>' in document and '<a href="#returns-2">' in document
    assert body in document
    assert "<script" not in document
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", document)  # nothing fetched


def test_page_without_sections_has_no_contents_list():
    document = charts.page("Empty", [])
    assert "<nav" not in document and "<main>" in document
