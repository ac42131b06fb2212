"""The reports' one way of writing numbers (in Python and as the templates' filters), their
tables and pages, and the one Jinja2 environment that renders them."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from jinja2 import PackageLoader, UndefinedError
from markupsafe import Markup

from arena.reporting.daily import render_daily_html
from arena.reporting.layout import (
    KINDS,
    Column,
    cell,
    environment,
    fmt,
    page,
    records,
    render,
    sign_class,
    table,
)
from arena.reporting.season import PERIODS_PER_YEAR, RISK_FREE_RATE, conventions


@pytest.mark.parametrize(("value", "kind", "text"), [
    (-0.0004, "score", "0.00"),          # never "-0.00"
    (-0.00004, "return", "0.00%"),       # nor "-0.00%" or "+0.00%"
    (0.0123, "return", "+1.23%"),
    (-0.0456, "return", "-4.56%"),
    (0.0456, "drawdown", "4.56%"),       # a drawdown has no sign
    (0.987, "share", "98.7%"),
    (-12.345, "pnl", "-12.35"),
    (1234.5, "pnl", "+1,234.50"),
    (0.001234, "usd", "$0.0012"),
    (12, "int", "12"),
    (1_234_567, "int", "1,234,567"),
    (float("nan"), "return", "–"),
    (None, "pnl", "–"),
    (pd.NaT, "time", "–"),
    (pd.Timestamp("2026-10-03 16:00", tz="UTC"), "time", "2026-10-03 16:00"),  # no "+00:00"
    (pd.Timestamp("2026-10-03 18:00", tz="Europe/Berlin"), "time", "2026-10-03 16:00"),
    (pd.Timestamp("2026-10-03 16:00", tz="UTC"), "date", "2026-10-03"),
    ("ETH", "text", "ETH"),
    (True, "text", "yes"),               # a yes-or-no value is a word, never "True"
    (False, "int", "no"),
    (np.bool_(True), "text", "yes"),     # as pandas hands it over
])
def test_numbers_are_written_one_way(value, kind, text):
    assert fmt(value, kind) == text


FILTERED = [  # (kind, value, text, colour): one of each kind, written by the templates' filters
    ("int", 1234.4, "1,234", ""),
    ("num", 0.000123456789, "0.000123457", ""),
    ("price", 1234.567, "1,234.57", ""),
    ("money", -1234.5, "-1,234.50", ""),           # a balance: signed only when negative, neutral
    ("pnl", -12.345, "-12.35", "neg"),
    ("usd", 0.001234, "$0.0012", ""),
    ("return", 0.0523, "+5.23%", "pos"),
    ("share", 0.797, "79.7%", ""),
    ("drawdown", 0.0345, "3.45%", ""),
    ("score", -0.004, "0.00", ""),                 # rounds to zero: no sign
    ("time", pd.Timestamp("2026-10-03 18:00", tz="Europe/Berlin"), "2026-10-03 16:00", ""),
    ("date", pd.Timestamp("2026-10-03 23:30", tz="UTC"), "2026-10-03", ""),
    ("text", "<b>ETH</b>", "&lt;b&gt;ETH&lt;/b&gt;", ""),  # and escaped
]


@pytest.mark.parametrize(("kind", "value", "text", "colour"), FILTERED)
def test_every_kind_is_a_filter_of_the_templates(kind, value, text, colour):
    template = environment().from_string("{{ v | fmt(k) }}|{{ v | sign_class(k) }}")
    assert template.render(v=value, k=kind) == f"{text}|{colour}"
    assert template.render(v=None, k=kind) == "–|"


def test_the_filters_are_the_one_definition_of_the_formats():
    assert {kind for kind, *_ in FILTERED} == set(KINDS)
    assert environment().filters["fmt"] is fmt and environment().filters["sign_class"] is sign_class


def test_the_environment_escapes_refuses_undefined_names_and_reads_the_package():
    env = environment()
    assert env is environment()  # created once
    assert env.autoescape("page.html.j2") and env.autoescape("macros.html.j2")
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"
    assert env.from_string("{{ x }}").render(x=Markup("<b>")) == "<b>"  # marked safe: as is
    with pytest.raises(UndefinedError, match="title"):
        render("page.html.j2", sections=[])
    assert isinstance(env.loader, PackageLoader)
    # what the environment lists is what the package ships (pyproject's package data globs)
    shipped = sorted(p.name for p in files("arena.reporting").joinpath("templates").iterdir())
    assert env.list_templates() == shipped
    assert all(n.endswith((".html.j2", ".css")) for n in shipped) and "report.css" in shipped


def test_the_page_inlines_the_stylesheet():
    css = files("arena.reporting").joinpath("templates", "report.css").read_text("utf-8")
    html = page("T", [("One", "<p>1</p>")])
    assert css.strip() in html and html.count("<style>") == 1
    assert "<nav" not in html  # one section: no contents


def test_losses_are_red_gains_green_and_drawdowns_and_fees_neutral():
    assert sign_class(-0.05, "return") == "neg" and sign_class(0.05, "return") == "pos"
    assert sign_class(-3.0, "pnl") == "neg"
    assert sign_class(0.2, "drawdown") == "" and sign_class(12.0, "money") == ""
    assert sign_class(-0.00001, "return") == ""  # shown as 0.00%: no colour either
    assert cell(-0.05, "return") == '<td class="num neg" data-value="-0.05">-5.00%</td>'
    assert cell(0.25, "drawdown") == '<td class="num" data-value="0.25">25.00%</td>'
    assert cell(None, "return") == '<td class="num missing">–</td>'


def test_a_table_escapes_links_and_anchors_its_rows():
    rows = [{"who": "<b>x</b>", "ret": 0.1, "id": "r1"}]
    html = table(rows, [Column("who", "who", href=lambda r: "#a&b"), Column("ret", "return",
                                                                            "return")],
                 row_id=lambda r: str(r["id"]))
    assert '<tr id="r1"><td><a href="#a&amp;b">&lt;b&gt;x&lt;/b&gt;</a></td>' in html
    assert 'data-value="0.1">+10.00%</td>' in html
    assert "no rows" in table([], [Column("who", "who")])
    assert isinstance(html, Markup)  # a table is HTML: a page takes it as is, never escaped again
    assert '<td class="empty" colspan="2">nothing &lt;here&gt;</td>' in table(
        [], [Column("who", "who"), Column("ret", "return", "return")], empty="nothing <here>")
    assert '<caption>cap &amp; co</caption>' in table(rows, [Column("who", "who")],
                                                       caption="cap & co")
    assert '<th scope="col" class="num">return</th>' in html  # a number's header aligns with it


def test_a_page_is_self_contained():
    html = page("T", [("One", "<p>1</p>"), ("One", "<p>2</p>")], banner="careful",
                links=[("back", "../season.html")])
    assert html.startswith("<!doctype html>") and '<section id="one-2">' in html
    assert html.count("<p>2</p>") == 1 and html.count("<p>1</p>") == 1  # each section once
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", html)
    assert '<a href="../season.html">back</a>' in html and "@import" not in html


def test_a_daily_report_renders_as_html_linking_back():
    md = ("# Daily report 2026-10-03 16:00 UTC\n\nSYNTHETIC market data\n\n## Standings\n\n"
          "| # | contestant | equity |\n|:--|:--|--:|\n| 1 | momentum | 10,100.00 |\n\n"
          "> **momentum**: <script>alert(1)</script> ![x](https://evil.example/p.png) "
          "[see](https://evil.example/) <https://evil.example/auto>\n")
    html = render_daily_html(md, back="../season.html")
    assert "<title>Daily report 2026-10-03 16:00 UTC</title>" in html
    assert '<table class="data">' in html and '<td style="text-align:left">momentum</td>' in html
    assert "<script>" not in html and "&lt;script&gt;" in html  # the answer's text is text
    # nor does a model's Markdown fetch an image or point anywhere
    assert "<img" not in html and 'href="https://evil' not in html and "evil.example" in html
    assert '<a href="../season.html">Season report</a>' in html


def test_the_conventions_quote_the_warehouse_settings():
    """The Sharpe convention the report states is the one dbt computes with."""
    project = yaml.safe_load((Path(__file__).parents[2] / "dbt_project" / "dbt_project.yml")
                             .read_text())
    assert project["vars"]["periods_per_year"] == PERIODS_PER_YEAR
    assert project["vars"]["risk_free_rate"] == RISK_FREE_RATE
    assert "365 periods a year" in conventions(28) and "caution" not in conventions(28)
    short = conventions(6)
    assert 'class="caution"' in short and "6 cycles, so 5 daily returns" in short


def test_anchors_of_distinct_names_never_collide():
    from arena.reporting.layout import anchor_id
    from arena.reporting.people import contestant_anchor, decision_anchor

    names = ["gpt-4o", "GPT-4o", "gpt_4o", "gpt.4o", "gpt 4o", "gpt/4o"]
    assert len({contestant_anchor(n) for n in names}) == len(names)
    assert len({decision_anchor(n, "2026-10-01 16:00Z", "answer", 0) for n in names}) == len(names)
    assert anchor_id("BRK.B") != anchor_id("BRK-B")
    assert all(re.fullmatch(r"[A-Za-z0-9._~-]+", contestant_anchor(n)) for n in names)


def test_records_are_python_values_with_none_for_every_kind_of_missing():
    """records converts the frame as a whole: the rows equal pandas' own row-by-row
    conversion (to_dict of the frame as objects), value for value and type for type."""
    frame = pd.DataFrame({
        "name": ["a", None, "c"],
        "count": pd.Series([1, 2, 3], dtype="int64"),
        "maybe": pd.Series([1, None, 3], dtype="Int64"),
        "value": [1.5, float("nan"), -0.0],
        "flag": [True, False, True],
        "at": pd.to_datetime(["2026-10-01 16:00", None, "2026-10-03 16:00"], utc=True),
        "symbols": [["BTC", "ETH"], None, []],
    })
    expected = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    got = records(frame)
    assert got == expected
    assert [[type(v) for v in row.values()] for row in got] == \
        [[type(v) for v in row.values()] for row in expected]
    assert got[1] == {"name": None, "count": 2, "maybe": None, "value": None, "flag": False,
                      "at": None, "symbols": None}
    assert type(got[0]["count"]) is int and type(got[0]["value"]) is float
    assert got[0]["at"] == pd.Timestamp("2026-10-01 16:00", tz="UTC")
    assert records(frame.iloc[:0]) == []
