"""The line charts' legends read on a phone: in headless Chromium at 390 px (and at 1280 px), every
contestant line of the equity and drawdown charts has its label in the chart's legend, written
at 11 CSS px or more and inside the screen, on the site's leaderboard, on a contestant's page and
in the season report (all rendered from ``tiny_marts``: no replay, milliseconds a page)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.reporting import site
from arena.reporting.plots import DRAWDOWN_TITLE, EQUITY_TITLE
from arena.reporting.season import season_report
from tests.browser import watched_page
from tests.reporting.tiny_marts import tiny_marts

SEASON = site.Season("s1", "Season s1", "SYNTHETIC", "2026-10-01", "2026-10-02", 2, "live")
URLS = site.Urls("s1")
DAYS = ["2026-10-01", "2026-10-02"]
LEGIBLE_PX = 11.0  # the smallest text a phone's reader reads without zooming
PAGES = {  # a page with line charts, and the contestants whose lines each of its charts draws
    "leaderboard": (lambda: site.leaderboard_page(tiny_marts(), SEASON, URLS, DAYS),
                    {"alpha", "momentum"}),
    "contestant": (lambda: site.contestant_page(tiny_marts(), "alpha", SEASON, URLS, DAYS),
                   {"alpha"}),
    "report": (lambda: season_report(tiny_marts()), {"alpha", "momentum"}),
}

# Every text a chart shows (its SVG's and, when the chart is a <figure>, its HTML legend's), with
# its size on screen in CSS px: an HTML text's computed font-size; an SVG text's font-size in
# user units times the scale from the viewBox to the screen (the image shrunk to the page).
CHART_TEXTS = """() => [...document.querySelectorAll("svg.chart")].map((svg) => {
  const box = svg.closest("figure") ?? svg;
  const texts = [];
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    const text = node.textContent.trim();
    if (!text || element.closest("title")) continue;
    let scale = 1;
    if (element instanceof SVGElement) {
      const m = element.getScreenCTM();
      scale = Math.hypot(m.a, m.b);
    }
    const range = document.createRange();
    range.selectNodeContents(node);
    const rect = range.getBoundingClientRect();
    texts.push({text, px: parseFloat(getComputedStyle(element).fontSize) * scale,
                left: rect.left, right: rect.right, height: rect.height});
  }
  return {title: svg.getAttribute("aria-label"), width: svg.getBoundingClientRect().width,
          texts};
})"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """Each page of :data:`PAGES` written once for the module."""
    folder = tmp_path_factory.mktemp("legends")
    written = {}
    for which, (render, _) in PAGES.items():
        written[which] = folder / f"{which}.html"
        written[which].write_text(render(), encoding="utf-8")
    return written


@pytest.mark.parametrize("width", [390, 1280])
@pytest.mark.parametrize("which", list(PAGES))
def test_every_line_is_named_legibly_in_its_charts_legend(browser, pages, which, width):
    """At 390 px the charts shrink to the phone; their legends must not: each contestant's
    label reads at 11 px or more, on screen, and the page does not scroll sideways. At 1280 px
    the same, and the chart still spans the page (no legend squeezes it)."""
    _, contestants = PAGES[which]
    watched = watched_page(browser, width, 900, allowed=lambda url: url.startswith("file:"))
    try:
        watched.page.goto(pages[which].as_uri(), wait_until="load")
        charts, scroll_width = watched.page.evaluate(CHART_TEXTS), watched.scroll_width()
    finally:
        watched.page.close()
    assert watched.errors == [] and watched.external == []
    assert scroll_width <= width
    lines = [c for c in charts if c["title"] in (EQUITY_TITLE, DRAWDOWN_TITLE)]
    assert len(lines) == (1 if which == "leaderboard" else 2)
    for chart in lines:
        legible = {t["text"] for t in chart["texts"] if t["px"] >= LEGIBLE_PX
                   and t["height"] > 0 and t["left"] >= 0 and t["right"] <= width}
        sizes = {t["text"]: round(t["px"], 1) for t in chart["texts"] if t["text"] in contestants}
        assert contestants <= legible, (chart["title"], sizes)
        if width == 1280:
            assert chart["width"] >= 1000, chart["width"]
