"""Open a local HTML file in headless Chromium and report what a reader's browser would see.

The `playwright` package (tested with 1.65.2) drives Debian's own Chromium at /usr/bin/chromium
through `executable_path`; `playwright install` is never run, since it downloads browsers and
fails offline. Playwright is used rather than hand-written DevTools-protocol calls because it
already gathers console messages, uncaught exceptions and full-page screenshots.

The browser runs with a fresh, empty profile in a temporary directory and with the flags in
`CHROMIUM_ARGS`; without them Chromium hangs trying to reach the network, which is closed here.
Any request that leaves the machine (http, https, ws) is aborted and listed in
`PageResult.external_requests`: the report must be one self-contained file.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # playwright is a test-only dependency, imported when a browser starts
    from collections.abc import Callable

    from playwright.sync_api import BrowserContext, Page, Route

CHROMIUM = Path("/usr/bin/chromium")
# Playwright passes --headless too (headless=True), and --user-data-dir for the fresh profile.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
MISSING_CHROMIUM = (
    f"{CHROMIUM} is missing: the browser tests need Debian's Chromium "
    "(`make test` installs it: apt-get install -y --no-install-recommends chromium)"
)
_RENDERED_SVGS = """() => [...document.querySelectorAll("svg")].filter((svg) => {
    const box = svg.getBoundingClientRect();
    return box.width > 0 && box.height > 0;
}).length"""


@dataclass(frozen=True)
class PageResult:
    """What loading one page produced."""

    title: str
    console_errors: list[str]  # console messages of level "error"
    page_errors: list[str]  # uncaught exceptions
    external_requests: list[str]  # requests that would have left the machine (aborted)
    svg_count: int  # <svg> elements rendered with a non-zero width and height
    screenshot: Path  # full-page PNG
    scroll_width: int = 0  # the document's width: above the viewport's, it scrolls sideways
    probe: object = None  # what the caller's `evaluate` script returned


def chromium_available() -> bool:
    """Whether the system Chromium is installed and executable."""
    return CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)


@contextmanager
def launch(*, timeout: float = 60) -> Iterator[BrowserContext]:
    """Start headless Chromium with a fresh profile; yield its browser context, close it after."""
    if not chromium_available():
        raise RuntimeError(MISSING_CHROMIUM)
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory(prefix="arena-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            headless=True,
            args=list(CHROMIUM_ARGS),
            timeout=timeout * 1000,
        )
        try:
            yield context
        finally:
            context.close()


@dataclass
class Watched:
    """A page that records its console errors, its script errors and every request it was not
    allowed to make (each aborted): :func:`watched_page`."""

    page: Page
    console_errors: list[str]
    page_errors: list[str]
    external: list[str]

    @property
    def errors(self) -> list[str]:
        return self.console_errors + self.page_errors

    def scroll_width(self) -> int:
        return self.page.evaluate("() => document.documentElement.scrollWidth")


def watched_page(context: BrowserContext, width: int, height: int, *,
                 allowed: Callable[[str], bool]) -> Watched:
    """A new page of ``context`` at ``width`` x ``height`` px that aborts (and records) every
    request whose URL ``allowed`` refuses, and records console and script errors."""
    watched = Watched(context.new_page(), [], [], [])
    page = watched.page
    page.set_viewport_size({"width": width, "height": height})
    page.on("console", lambda m: watched.console_errors.append(m.text)
            if m.type == "error" else None)
    page.on("pageerror", lambda error: watched.page_errors.append(str(error)))

    def block(route: Route) -> None:
        watched.external.append(route.request.url)
        route.abort()

    page.route(lambda url: not allowed(url), block)
    return watched


def load_page(
    path: Path,
    screenshot: Path,
    *,
    width: int = 1280,
    height: int = 2000,
    timeout: float = 60,
    context: BrowserContext | None = None,
    evaluate: str | None = None,
) -> PageResult:
    """Open `path` (a local HTML file) and save a full-page screenshot to `screenshot`.

    `context` is a browser context from `launch()`; without one a browser is started and closed
    for this page alone. `timeout` is in seconds. `evaluate`: a JavaScript function run in the
    loaded page, its result in `PageResult.probe`.
    """
    if context is None:
        with launch(timeout=timeout) as own:
            return load_page(
                path, screenshot, width=width, height=height, timeout=timeout, context=own,
                evaluate=evaluate,
            )
    watched = watched_page(context, width, height, allowed=lambda url: url.startswith(
        ("file:", "data:", "about:", "blob:")))
    page = watched.page
    try:
        page.set_default_timeout(timeout * 1000)
        page.goto(Path(path).resolve().as_uri(), wait_until="load")
        svg_count = page.evaluate(_RENDERED_SVGS)
        scroll_width = watched.scroll_width()
        probe = page.evaluate(evaluate) if evaluate else None
        page.screenshot(path=str(screenshot), full_page=True)
        return PageResult(
            title=page.title(),
            console_errors=watched.console_errors,
            page_errors=watched.page_errors,
            external_requests=watched.external,
            svg_count=svg_count,
            screenshot=Path(screenshot),
            scroll_width=scroll_width,
            probe=probe,
        )
    finally:
        page.close()


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) in pixels from a PNG file's IHDR header."""
    header = Path(path).read_bytes()[:24]
    if header[:8] != b"\x89PNG\r\n\x1a\n" or header[12:16] != b"IHDR":
        raise ValueError(f"{path} is not a PNG file")
    return int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")
