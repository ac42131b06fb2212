"""The report's charts open in a real browser: Debian's headless Chromium, fully offline."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from arena.reporting.layout import Column, page, table
from arena.reporting.plots import equity_chart, heatmap_chart, scatter_chart
from tests.browser import chromium_available, launch, load_page, png_size


def sample_report() -> str:
    days = pd.date_range("2026-05-13", periods=120, freq="D", tz="UTC")
    names = ["gpt-5-mini", "claude-sonnet", "gemini-pro", "momentum"]
    series = {
        name: [(t, 10_000 * (1 + 0.002 * k * math.sin(i + k / 9))) for k, t in enumerate(days)]
        for i, name in enumerate(names)
    }
    btc = {"BTC (buy and hold)": [(t, 10_000 + 5.0 * k) for k, t in enumerate(days)]}
    band = [(t, 10_000 - 8 * k, 10_000.0, 10_000 + 8 * k) for k, t in enumerate(days)]
    labels = [f"ASSET{i:02d}" for i in range(20)]
    matrix = [[math.cos(i - j) for j in range(20)] for i in range(20)]
    rows = [{"name": name, "ret": 0.05 - 0.04 * i} for i, name in enumerate(names)]
    return page(
        "Season 1 report",
        [
            ("Equity", equity_chart(series, benchmarks=btc, band=band, players=1000)),
            ("Activity", scatter_chart([(n, 10.0 * i, 0.5 * i) for i, n in enumerate(names)],
                                       title="Fills against rank score", x_label="fills",
                                       y_label="rank score")),
            ("Correlation", heatmap_chart(labels, labels, matrix, title="Correlation")),
            ("Leaderboard", table(rows, [Column("name", "Name"), Column("ret", "Return", "return")])),
        ],
        subtitle="synthetic",
    )  # fmt: skip


def test_sample_report_renders_cleanly(browser, tmp_path):
    report = tmp_path / "report.html"
    report.write_text(sample_report(), encoding="utf-8")
    result = load_page(report, tmp_path / "report.png", context=browser)
    assert result.console_errors == []
    assert result.page_errors == []
    assert result.external_requests == []
    assert result.title == "Season 1 report"
    assert result.svg_count == 3
    assert result.scroll_width <= 1280  # nothing scrolls sideways
    assert result.screenshot.stat().st_size > 20_000
    width, height = png_size(result.screenshot)
    assert width == 1280 and height > 1500  # full page, taller than the viewport


def test_a_long_unbroken_token_wraps_instead_of_scrolling(browser, tmp_path):
    """A model may write a 300-character token (a URL, a hash): its cell wraps, even in a table
    inside an opened <details>; the page never scrolls sideways at 1280 px."""
    token = "https://example.invalid/" + "x" * 300
    rows = [{"who": "momentum", "thesis": token, "ret": 0.01}]
    columns = [Column("who", "contestant"), Column("thesis", "thesis", wrap=True),
               Column("ret", "return", "return")]
    body = table(rows, columns) + f"<details open><summary>more</summary>{table(rows, columns)}" \
        f'<pre class="json">{token}</pre></details>'
    report = tmp_path / "long.html"
    report.write_text(page("long", [("One", body)]), encoding="utf-8")
    result = load_page(report, tmp_path / "long.png", context=browser)
    assert result.scroll_width <= 1280 and result.external_requests == []


def test_the_harness_reports_script_errors_and_network_requests(browser, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text(
        "<!doctype html><title>broken</title>"
        '<img src="https://example.invalid/pixel.png" alt="">'
        "<script>console.error('drawn badly'); undefinedFunction();</script>",
        encoding="utf-8",
    )
    result = load_page(page, tmp_path / "broken.png", context=browser)
    assert result.title == "broken"
    assert "drawn badly" in result.console_errors
    assert "Failed to load resource: net::ERR_FAILED" in result.console_errors  # the blocked image
    assert len(result.page_errors) == 1 and "undefinedFunction" in result.page_errors[0]
    assert result.external_requests == ["https://example.invalid/pixel.png"]
    assert result.svg_count == 0


def test_png_size_reads_the_header(tmp_path):
    not_png = tmp_path / "x.png"
    not_png.write_bytes(b"GIF89a" + bytes(30))
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(not_png)


def test_missing_chromium_is_named(monkeypatch):
    monkeypatch.setattr("tests.browser.CHROMIUM", Path("/nonexistent/chromium"))
    assert not chromium_available()
    with pytest.raises(RuntimeError, match="/usr/bin/chromium is missing"), launch():
        pass


SPLIT_WORDS = """() => {
  const split = [];
  for (const cell of document.querySelectorAll('table.data th, table.data td')) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/[^\\s-]+/g)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
        if (lines.size > 1) split.push(m[0]);
      }
    }
  }
  return split;
}"""


def test_a_wide_table_wraps_between_words_never_inside_one(browser, tmp_path):
    """A table of many columns at 1280 px (a league's): its cells wrap at spaces and hyphens,
    never inside a word ("cont/esta/nt"); only a long-text column breaks a token too long for
    any line (the test above)."""
    headers = ["contestant", "seasons", "positive seasons", "positive share", "mean return",
               "median return", "best season", "worst season", "mean luck percentile",
               "verdict", "skill percentile", "replicates", "outside entrant", "first season"]
    rows = [{h: f"{name} contestant-{i} intermediate" if j == 0 else "considerable" for j, h
             in enumerate(headers)} for i, name in enumerate(["gpt-5-mini", "claude-sonnet"])]
    report = tmp_path / "wide.html"
    report.write_text(page("wide", [("League", table(rows, [Column(h, h) for h in headers]))]),
                      encoding="utf-8")
    result = load_page(report, tmp_path / "wide.png", context=browser, evaluate=SPLIT_WORDS)
    assert result.probe == [] and result.scroll_width <= 1280
