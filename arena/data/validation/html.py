"""Validation results an operator reads offline: one HTML page per run and an index of runs.

Every ingest run keeps its result as ``<lake>/validation/<run id>/candle_validation.json``
(:meth:`arena.data.validation.checks.ValidationReport.write`). Beside it this module writes

* ``index.html``: the run's page (run id, provider, times, pass/fail, counts, every check with
  the failed ones first and their messages);
* ``summary.json``: the few numbers the index shows, so that rebuilding the index reads one
  small file per run, never the full results (thousands of runs stay cheap);

and rebuilds ``<lake>/validation/index.html``, every kept run newest first (run ids start with
their UTC start, ``20261028T160000-synthetic-09b76f``, so they sort by time), each linked by a
relative path. A run kept from before these pages gets its summary on the next rebuild.

The pages are self-contained: inline CSS, no JavaScript, no URL outside the page (no CDN, web
font or image), unlike Great Expectations' Data Docs, which render empty offline. Every value
(symbols and messages come from vendors) is escaped with :func:`html.escape`. Files are written
atomically (a temp file, then one rename).
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from arena.data.lake import write_text

RESULTS = "candle_validation.json"  # the stored result of one run
SUMMARY = "summary.json"  # what the index needs of one run
PAGE = "index.html"  # a run's page, and the index beside the runs
_RUN_ID = re.compile(r"(?P<stamp>\d{8}T\d{6})-(?P<provider>.+)-[0-9a-f]{6}")
_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;margin:1.5rem;
color:#1a1a1a;background:#fff}
h1{font-size:1.4rem;margin:0 0 .5rem}
dl{display:grid;grid-template-columns:max-content auto;gap:.2rem 1rem;margin:0 0 1rem}
dt{color:#555}dd{margin:0}
table{border-collapse:collapse;font-size:.9rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.fail td{background:#fde8e4}tr.suspect td{background:#fff4d6}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:.25rem;font-weight:bold}
.pass{color:#fff;background:#1b7a3d}.failed{color:#fff;background:#b3261e}
.warn{color:#1a1a1a;background:#f2c14e}
"""


def write_pages(directory: str | os.PathLike[str], data: Mapping[str, Any]) -> Path:
    """The page and summary of the run whose result ``data`` (``ValidationReport.to_dict``) is
    stored in ``directory`` (``<validation root>/<run id>``), then the index of its parent;
    returns the run's page."""
    directory = Path(directory)
    summary = run_summary(directory.name, data)
    page = write_text(directory / PAGE, render_run(directory.name, data))
    write_text(directory / SUMMARY, json.dumps(summary, indent=1))
    write_index(directory.parent)
    return page


def run_summary(run_id: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """What the index shows of one run: its id, provider, start, ``as_of`` and counts."""
    stamp, provider = _id_parts(run_id)
    return {"run_id": run_id, "provider": data.get("provider") or provider, "started": stamp,
            "as_of": data.get("as_of"), "success": bool(data.get("success")),
            **{k: data.get(k, 0) for k in ("bars", "series", "checks", "failed")}}


def write_index(root: str | os.PathLike[str]) -> Path:
    """Rebuild ``root/index.html`` from every run kept in ``root/*/candle_validation.json``,
    reading each run's summary (made from its result, once, when missing)."""
    root = Path(root)
    summaries = []
    for results in root.glob(f"*/{RESULTS}"):
        try:
            summaries.append(json.loads((results.parent / SUMMARY).read_text(encoding="utf-8")))
            continue
        except (OSError, ValueError):
            pass
        try:  # a run from before the pages, or a summary that could not be read
            summary = run_summary(results.parent.name,
                                  json.loads(results.read_text(encoding="utf-8")))
            write_text(results.parent / SUMMARY, json.dumps(summary, indent=1))
        except (OSError, ValueError):
            summary = {"run_id": results.parent.name, "unreadable": True}
        summaries.append(summary)
    return write_text(root / PAGE, render_index(summaries))  # runs may rebuild it at once


def render_run(run_id: str, data: Mapping[str, Any]) -> str:
    """The page of one run (a complete HTML document): its facts, then every check, the failed
    ones first, each with its message."""
    summary = run_summary(run_id, data)
    results = list(data.get("results") or [])
    results.sort(key=lambda r: bool(r.get("success")))  # stable: failed first, order kept
    facts = [("Run", run_id), ("Provider", summary["provider"]), ("Started (UTC)",
             summary["started"]), ("As of", summary["as_of"]), ("Suite", data.get("suite")),
             ("Bars", _count(summary["bars"])), ("Series", _count(summary["series"])),
             ("Checks", _count(summary["checks"])), ("Failed checks", _count(summary["failed"])),
             ("Seconds", data.get("seconds"))]
    rows = "\n".join(_check_row(r) for r in results) or '<tr><td colspan="6">no checks</td></tr>'
    body = (
        f'<p><a href="../{PAGE}">All validation runs</a></p>'
        f"<h1>Candle validation {_esc(run_id)} {_badge(summary['success'])}</h1>"
        + _facts(facts)
        + "<h2>Checks</h2><table><thead><tr><th>Result</th><th>Symbol</th><th>Interval</th>"
        "<th>Check</th><th>Message</th><th>Observed</th></tr></thead>"
        f"<tbody>\n{rows}\n</tbody></table>")
    return _document(f"Candle validation {run_id}", body)


def render_index(summaries: Sequence[Mapping[str, Any]]) -> str:
    """The index of runs (a complete HTML document), newest first, each linked to its page."""
    ordered = sorted(summaries, key=lambda s: str(s.get("run_id")), reverse=True)
    failed = sum(1 for s in ordered if not s.get("success"))
    rows = "\n".join(_index_row(s) for s in ordered) or '<tr><td colspan="9">no runs</td></tr>'
    body = (
        "<h1>Candle validation runs</h1>"
        f"<p>{len(ordered)} runs kept, {failed} failed. Newest first.</p>"
        "<table><thead><tr><th>Run</th><th>Provider</th><th>Started (UTC)</th><th>As of</th>"
        "<th>Result</th><th>Bars</th><th>Series</th><th>Checks</th><th>Failed checks</th>"
        f"</tr></thead><tbody>\n{rows}\n</tbody></table>")
    return _document("Candle validation runs", body)


def _check_row(r: Mapping[str, Any]) -> str:
    if r.get("success"):
        css, label = "", _badge(True)
    elif r.get("suspect"):
        css, label = ' class="suspect"', '<span class="badge warn">SUSPECT</span>'
    else:
        css, label = ' class="fail"', _badge(False)
    observed = json.dumps(r.get("observed") or {}, default=str, sort_keys=True)
    cells = [_esc(r.get(k)) for k in ("symbol", "interval", "check", "message")]
    return (f"<tr{css}><td>{label}</td>" + "".join(f"<td>{c}</td>" for c in cells)
            + f"<td><code>{_esc(observed if observed != '{}' else '')}</code></td></tr>")


def _index_row(s: Mapping[str, Any]) -> str:
    run_id = str(s.get("run_id"))
    link = f'<a href="{_esc(quote(run_id))}/{PAGE}">{_esc(run_id)}</a>'
    if s.get("unreadable"):
        return f'<tr class="fail"><td>{link}</td><td colspan="8">result unreadable</td></tr>'
    counts = "".join(f'<td class="num">{_count(s.get(k))}</td>'
                     for k in ("bars", "series", "checks", "failed"))
    css = "" if s.get("success") else ' class="fail"'
    return (f"<tr{css}><td>{link}</td><td>{_esc(s.get('provider'))}</td>"
            f"<td>{_esc(s.get('started'))}</td><td>{_esc(s.get('as_of'))}</td>"
            f"<td>{_badge(bool(s.get('success')))}</td>{counts}</tr>")


def _facts(facts: Sequence[tuple[str, Any]]) -> str:
    return "<dl>" + "".join(f"<dt>{_esc(k)}</dt><dd>{_esc(v)}</dd>" for k, v in facts
                            if v is not None) + "</dl>"


def _document(title: str, body: str) -> str:
    return ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head>\n"
            f"<body>\n{body}\n</body></html>\n")


def _badge(success: bool) -> str:
    return ('<span class="badge pass">PASSED</span>' if success
            else '<span class="badge failed">FAILED</span>')


def _id_parts(run_id: str) -> tuple[str | None, str | None]:
    """(start as ISO text, provider) read from an ingest run id, or (None, None)."""
    m = _RUN_ID.fullmatch(run_id)
    if m is None:
        return None, None
    s = m["stamp"]
    return f"{s[:4]}-{s[4:6]}-{s[6:8]} {s[9:11]}:{s[11:13]}:{s[13:]}", m["provider"]


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else _esc(value)


def _esc(value: Any) -> str:
    return "" if value is None else html.escape(str(value), quote=True)


__all__ = ["PAGE", "RESULTS", "SUMMARY", "render_index", "render_run", "run_summary",
           "write_index", "write_pages"]
