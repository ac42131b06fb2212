"""What a contestant or a model writes is text on the reports' pages, whatever it holds: the
templates escape every value (a contestant named like a script tag, a reasoning holding an image
with an onerror handler), and no tag or handler of theirs reaches the page."""

from __future__ import annotations

from html.parser import HTMLParser

from arena.reporting.daily import render_daily_html
from arena.reporting.season import season_report
from tests.reporting.tiny_marts import tiny_marts

NAME = "<script>alert(1)</script>"
REASONING = "<img src=x onerror=alert(document.cookie)> ETH keeps trending"
THESIS = '<a href="https://evil.example/">click</a> & "quotes"'


class _Page(HTMLParser):
    """Every start tag with its attributes, and the page's text as a browser reads it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _read(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _assert_inert(html: str) -> _Page:
    page = _read(html)
    names = {tag for tag, _ in page.tags}
    assert not names & {"script", "img", "iframe", "object", "embed"}, names
    handlers = [(tag, a) for tag, attrs in page.tags for a in attrs if a.lower().startswith("on")]
    assert handlers == []
    assert not any("evil.example" in (v or "") for _, attrs in page.tags for v in attrs.values())
    return page


def test_the_season_report_writes_names_reasoning_and_theses_as_text():
    html = season_report(tiny_marts(NAME, REASONING, thesis=THESIS))
    page = _assert_inert(html)
    text = "".join(page.text)
    assert text.count(NAME) >= 5  # summary, leaderboard, trades, section heading, model calls...
    assert REASONING in text and THESIS in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(document.cookie)&gt;" in html
    # the contestant's anchor and the links to it stay ids, whatever the name holds
    anchors = [attrs["id"] for _, attrs in page.tags if attrs.get("id", "").startswith("contest")]
    assert anchors == ["contestants", "contestant-~3cscript~3ealert~281~29~3c~2fscript~3e",
                       "contestant-momentum"]
    assert f'href="#{anchors[1]}"' in html


def test_the_daily_page_writes_names_and_reasoning_as_text():
    md = ("# Daily report 2026-10-02 16:00 UTC\n\n> **SYNTHETIC market data: not real prices**\n\n"
          "## Standings\n\n| # | contestant | equity |\n|:--|:--|--:|\n"
          f"| 1 | {NAME} | 10,523.00 |\n\n## From the reasoning\n\n> **{NAME}**: {REASONING}\n")
    html = render_daily_html(md, back="../season.html")
    page = _assert_inert(html)
    text = "".join(page.text)
    assert text.count(NAME) == 2 and REASONING in text
    assert ("td", {"style": "text-align:left"}) in page.tags  # the Markdown's table is a table
    assert '<a href="../season.html">Season report</a>' in html


def test_a_title_and_a_back_link_are_escaped_too():
    html = render_daily_html(f"# Daily {NAME}\n\ntext\n", back='x.html" onclick="alert(1)')
    page = _assert_inert(html)
    assert ("a", {"href": 'x.html" onclick="alert(1)'}) in page.tags
    assert f"Daily {NAME}" in "".join(page.text)
