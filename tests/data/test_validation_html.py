"""Validation pages an operator reads offline: one per run, an index of the runs, written by
``ValidationReport.write``; opened in a real (headless, network-blocked) Chromium."""

import json
import logging
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from arena.data.ingest import run_ingest
from arena.data.lake import Lake
from arena.data.validation.checks import CheckResult, ValidationReport
from arena.data.validation.html import PAGE, RESULTS, SUMMARY, write_index
from tests.browser import load_page
from tests.conftest import ts

EVIL = "<script>alert('x')</script>"
OLD, NEW = "20261027T160000-synthetic-0a0a0a", "20261028T160000-yahoo-09b76f"
EARLIER = "20251019T160000-files-0b0b0b"  # before the ingest of the real path


def report(*failures: CheckResult, passes: int = 3) -> ValidationReport:
    """A run of ``passes`` passing checks on ETH 1h, then ``failures`` (listed last)."""
    ok = [CheckResult("ETH", "1h", check, True) for check in
          ("bar_count", "ohlc", "unique_timestamps", "splice")[:passes]]
    results = (*ok, *failures)
    return ValidationReport(success=not failures, results=results,
                            as_of=ts("2026-10-28 16:00"), bars=1234, seconds=0.5)


def hrefs(page: Path) -> list[str]:
    return re.findall(r'href="([^"]+)"', page.read_text())


@pytest.fixture
def root(tmp_path) -> Path:
    return tmp_path / "lake" / "validation"


def test_a_failed_run_has_its_page_failures_first(root):
    failed = CheckResult("AAPL", "1d", "staleness", False, {"last": "2026-10-20"},
                         "AAPL 1d: the last bar is 8 days old")
    suspect = CheckResult("BTC", "1h", "splice", False, {"since": "2026-10-28"},
                          "BTC 1h: 1 bar jumps at the newest bar", suspect=True)
    report(failed, suspect).write(root / NEW)
    page = (root / NEW / PAGE).read_text()
    assert "<title>Candle validation 20261028T160000-yahoo-09b76f</title>" in page
    assert "yahoo" in page and "2026-10-28 16:00:00" in page and "1,234" in page
    assert page.count('<tr class="fail">') == 1 and page.count('<tr class="suspect">') == 1
    rows = re.findall(r"<tr( class=\"\w+\")?><td>(.*?)</td><td>(\w+)</td>", page)
    assert [r[2] for r in rows] == ["AAPL", "BTC", "ETH", "ETH", "ETH"]  # failed first
    assert "AAPL 1d: the last bar is 8 days old" in page and "SUSPECT" in page
    assert json.loads((root / NEW / SUMMARY).read_text()) == {
        "run_id": NEW, "provider": "yahoo", "started": "2026-10-28 16:00:00",
        "as_of": "2026-10-28T16:00:00+00:00", "success": False, "bars": 1234, "series": 3,
        "checks": 5, "failed": 2}
    index = (root / PAGE).read_text()
    assert f'href="{NEW}/{PAGE}"' in index and "FAILED" in index
    assert "http" not in page + index and "<script" not in page + index  # nothing to fetch


def test_vendor_values_are_escaped(root):
    report(CheckResult(EVIL, "1h", "ohlc", False, {"bad": EVIL}, f"{EVIL} has no prices")
           ).write(root / NEW)
    for page in (root / NEW / PAGE, root / PAGE):
        assert "<script" not in page.read_text()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; has no prices" in (
        root / NEW / PAGE).read_text()


def test_the_index_lists_runs_newest_first_and_keeps_every_run(root):
    report().write(root / NEW)
    first = (root / PAGE).read_text()
    assert NEW in first and OLD not in first
    report(CheckResult("SPY", "1d", "ohlc", False, {}, "SPY: negative price")).write(root / OLD)
    index = root / PAGE
    assert hrefs(index) == [f"{NEW}/{PAGE}", f"{OLD}/{PAGE}"]  # the later write is older
    for href in hrefs(index):  # relative links that land on the pages, and back
        page = root / unquote(href)
        assert page.is_file() and (page.parent / hrefs(page)[0]).resolve() == index.resolve()
    assert "2 runs kept, 1 failed" in index.read_text()


def test_the_index_reads_summaries_and_backfills_older_runs(root):
    (root / OLD).mkdir(parents=True)  # a run kept from before the pages: its result alone
    (root / OLD / RESULTS).write_text(json.dumps(report().to_dict()))
    report().write(root / NEW)
    assert json.loads((root / OLD / SUMMARY).read_text())["checks"] == 3
    # once a summary exists the index reads it, never the (large) result
    (root / OLD / RESULTS).write_text("not json")
    (root / "docs").mkdir()  # Great Expectations' Data Docs: not a run
    page = write_index(root).read_text()
    assert hrefs(root / PAGE) == [f"{NEW}/{PAGE}", f"{OLD}/{PAGE}"]
    assert "unreadable" not in page
    (root / OLD / SUMMARY).unlink()  # neither readable: listed as such, the index still builds
    assert "result unreadable" in write_index(root).read_text()


def test_a_page_that_cannot_be_written_never_fails_the_result(root, monkeypatch, caplog):
    def broken(*args):
        raise OSError("disk full")

    monkeypatch.setattr("arena.data.validation.checks.write_pages", broken)
    with caplog.at_level(logging.WARNING):
        path = report().write(root / NEW)
    assert json.loads(path.read_text())["checks"] == 3
    assert "validation pages of" in caplog.text


def test_the_flow_report_links_the_validation_page(root, monkeypatch):
    from arena.app.ingest import IngestOutcome
    from arena.data.manifest import IngestSummary
    from arena.flows import artifacts

    report().write(root / NEW)
    links = []
    monkeypatch.setattr(artifacts, "create_table_artifact", lambda *a, **k: None)
    monkeypatch.setattr(artifacts, "create_markdown_artifact", lambda *a, **k: None)
    monkeypatch.setattr(artifacts, "create_link_artifact",
                        lambda link, **k: links.append((link, k)))
    manifest = {"run_id": NEW, "provider": "synthetic", "synthetic": True, "status": "published",
                "asked": {"start": "2025-10-06", "end": "2025-10-20", "end_used": "2025-10-20",
                          "base_interval": "15m"},
                "got": {}, "assets": {}, "published": [], "not_published": {},
                "validation": {"summary": "passed", "failed": [], "results": str(root / NEW)}}

    def outcome(manifest: dict, season: str | None) -> IngestOutcome:
        return IngestOutcome(manifest, IngestSummary.of(manifest), season)

    artifacts.ingest_artifacts(outcome(manifest, None))
    [(link, options)] = links
    assert link == (root / NEW / PAGE).resolve().as_uri()
    assert options["key"] == "validation-report" and options["link_text"] == f"validation {NEW}"
    assert "the run's candle validation, every check, offline" in options["description"]
    artifacts.ingest_artifacts(outcome(manifest, "2026-12-01-ccxt+yfinance"))  # a season's
    assert links[1][1]["key"] == "2026-12-01-ccxt-yfinance-validation-report"
    assert "season 2026-12-01-ccxt+yfinance" in links[1][1]["description"]
    artifacts.ingest_artifacts(outcome({**manifest, "validation": None}, None))  # not validated
    assert len(links) == 2


# --- the real path: an ingest writes the pages; a real browser reads them offline -------------

@pytest.fixture(scope="module")
def ingested(tmp_path_factory, universe, synthetic):
    """A lake after one synthetic ingest, plus a failed run whose vendor sent markup."""
    lake_root = tmp_path_factory.mktemp("valhtml") / "lake"
    result = run_ingest(synthetic, universe.select(["ETH", "AAPL"]), start=ts("2025-10-06"),
                        end=ts("2025-10-20"), lake=Lake(lake_root), now=ts("2025-10-20 00:05"))
    report(CheckResult(EVIL, "1h", "ohlc", False, {}, f"{EVIL} sent a web page")
           ).write(lake_root / "validation" / EARLIER)
    return lake_root / "validation", result


def test_an_ingest_writes_its_page_and_the_index(ingested):
    root, result = ingested
    page = root / result.run_id / PAGE
    data = json.loads((root / result.run_id / RESULTS).read_text())
    assert page.is_file() and result.manifest["validation"]["success"]
    text = page.read_text()
    assert "PASSED" in text and "FAILED</span></td>" not in text
    rows = text.split("<tbody>")[1].count("<tr")
    assert rows == data["checks"] == 2 * 5 * 9  # 2 symbols, 5 intervals, 9 checks
    assert hrefs(root / PAGE) == [f"{result.run_id}/{PAGE}", f"{EARLIER}/{PAGE}"]
    assert result.manifest["validation"]["results"] == str(page.parent)
    assert result.manifest["validation"]["page"] == str(page)
    assert result.manifest["validation"]["index"] == str(root / PAGE)


def test_the_pages_render_offline_in_chromium(ingested, browser, tmp_path):
    root, result = ingested
    for path, title in [(root / PAGE, "Candle validation runs"),
                        (root / result.run_id / PAGE, f"Candle validation {result.run_id}"),
                        (root / EARLIER / PAGE, f"Candle validation {EARLIER}")]:
        shown = load_page(path, tmp_path / "page.png", context=browser)
        assert shown.external_requests == []  # nothing left the machine
        assert shown.console_errors == [] and shown.page_errors == []  # the markup stayed text
        assert shown.title == title

    page = browser.new_page()
    try:  # what a reader sees: the index, then a run's page through its link
        page.route(lambda url: not url.startswith("file:"), lambda route: route.abort())
        page.goto((root / PAGE).as_uri())
        assert page.locator("tbody tr").count() == 2
        assert "2 runs kept, 1 failed" in page.inner_text("body")
        page.click(f"text={EARLIER}")
        assert page.title() == f"Candle validation {EARLIER}"
        failed = page.locator("tr.fail")
        assert failed.count() == 1 and failed.is_visible()
        assert f"{EVIL} sent a web page" in failed.inner_text()  # shown, not run
        assert page.locator("tbody tr").first.get_attribute("class") == "fail"
        page.go_back()
        page.click(f"text={result.run_id}")
        assert page.locator("tbody tr").count() == 90 and "PASSED" in page.inner_text("h1")
    finally:
        page.close()


# --- a run's pages cost the same whatever the runs kept --------------------------------------

def _run_id(day: int, hour: int) -> str:
    return f"202610{day:02d}T{hour:02d}0000-synthetic-{day:02d}{hour:02d}aa"


def test_the_index_lists_the_newest_runs_and_every_day_links_all_of_its_runs(root, monkeypatch):
    from arena.data.validation import html

    monkeypatch.setattr(html, "INDEX_RUNS", 3)
    runs = [_run_id(day, hour) for day in (26, 27, 28) for hour in (9, 16)]
    for i, run in enumerate(runs):
        failure = (CheckResult("SPY", "1d", "ohlc", False, {}, "SPY: bad"),) if i == 1 else ()
        report(*failure).write(root / run)
    index = (root / PAGE).read_text()
    assert "6 runs kept, 1 failed. Newest first, the newest 3." in index
    newest = [f"{r}/{PAGE}" for r in sorted(runs, reverse=True)[:3]]
    days = [f"days/2026-10-{d}.html" for d in (28, 27, 26)]
    assert hrefs(root / PAGE) == newest + days
    for day, href in zip((28, 27, 26), days, strict=True):
        page = root / href
        links = hrefs(page)
        assert links[0] == f"../{PAGE}"  # back to the index
        assert links[1:] == [f"../{_run_id(day, h)}/{PAGE}" for h in (16, 9)]
        assert all((page.parent / link).resolve().is_file() for link in links)
    assert "2 runs, 1 failed" in (root / "days" / "2026-10-26.html").read_text()
    # a rebuild from the runs' folders gives the same pages
    before = {p: p.read_text() for p in [root / PAGE, *(root / "days").glob("*.html")]}
    write_index(root)
    assert {p: p.read_text() for p in before} == before


def test_listing_a_run_reads_no_other_run(root):
    for hour in (9, 10, 11):
        report().write(root / _run_id(27, hour))
    for hour in (9, 10, 11):  # what listing the next run would have to read, made unreadable
        (root / _run_id(27, hour) / SUMMARY).write_text("not json")
        (root / _run_id(27, hour) / RESULTS).write_text("not json")
    report(CheckResult("SPY", "1d", "ohlc", False, {}, "SPY: bad")).write(root / _run_id(27, 12))
    index = (root / PAGE).read_text()
    assert "4 runs kept, 1 failed" in index and "unreadable" not in index
    assert hrefs(root / PAGE) == [f"{_run_id(27, h)}/{PAGE}" for h in (12, 11, 10, 9)]
    report().write(root / _run_id(27, 12))  # the same run written again: listed once, passed
    assert "4 runs kept, 0 failed" in (root / PAGE).read_text()


def test_runs_listed_at_once_are_all_listed(root):
    import threading

    barrier = threading.Barrier(6, timeout=30)

    def write(worker: int) -> None:
        barrier.wait()
        for hour in range(4):
            report().write(root / _run_id(10 + worker, hour))

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert "24 runs kept, 0 failed" in (root / PAGE).read_text()
    assert len(hrefs(root / PAGE)) == 24
    assert json.loads((root / "index.json").read_text())["days"]["2026-10-12"] == {
        "runs": 4, "failed": 0}
