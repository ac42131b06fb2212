"""Validation results an operator reads offline: one HTML page per run and an index of runs.

Every ingest run keeps its result as ``<lake>/validation/<run id>/candle_validation.json``
(:meth:`arena.data.validation.checks.ValidationReport.write`). Beside it this module writes

* ``index.html``: the run's page (run id, provider, times, pass/fail, counts, every check with
  the failed ones first and their messages);
* ``summary.json``: the few numbers the index shows, so that rebuilding the index reads one
  small file per run, never the full results (thousands of runs stay cheap);

and lists the run in ``<lake>/validation/index.html``: the newest ``INDEX_RUNS`` kept runs,
newest first (run ids start with their UTC start, ``20261028T160000-synthetic-09b76f``, so they
sort by time), each linked by a relative path, with the count of every run kept; when there are
more, every UTC day's runs on a page of that day (``days/2026-10-28.html``), linked from the
index. Listing a run reads and writes the index's state (``index.json``: the newest runs and a
count per day) and its day's list (``days/<day>.json``), never another run's file: an hourly
ingest and a watch run every 15 minutes keep tens of thousands of runs a year, and a run's pages
must not cost more with every run kept. :func:`write_index` rebuilds all of it from the runs'
folders (when the state is missing or unreadable, and on demand: a run kept from before these
pages, or copied in by hand, gets its summary then). One writer at a time (a lock file).

The pages are self-contained: inline CSS, no JavaScript, no URL outside the page (no CDN, web
font or image), unlike Great Expectations' Data Docs, which render empty offline. They are
Jinja2 templates (``templates/``: ``document.html.j2`` the document every page extends, with
``validation.css`` inlined, ``macros.html.j2`` its rows and tables), and every value they write
(symbols and messages come from vendors) is escaped with :func:`html.escape`. Files are written
atomically (a temp file, then one rename).
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from filelock import FileLock
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from arena.data.lake import write_text

RESULTS = "candle_validation.json"  # the stored result of one run
SUMMARY = "summary.json"  # what the index needs of one run
PAGE = "index.html"  # a run's page, and the index beside the runs
STATE = "index.json"  # what the index shows: the newest runs, runs and failures per day
DAYS = "days"  # days/<YYYY-MM-DD>.json (that day's run summaries) and .html (their page)
INDEX_RUNS = 200  # runs the index lists; every run is on its day's page
_LOCK = ".index.lock"
_UNDATED = "undated"  # the day of a run whose id does not start with its time
_LISTED = ("provider", "started", "as_of", "success", "bars", "series", "checks", "failed",
           "unreadable")  # what a table of runs shows of one, besides its id
_RUN_ID = re.compile(r"(?P<stamp>\d{8}T\d{6})-(?P<provider>.+)-[0-9a-f]{6}")


def write_pages(directory: str | os.PathLike[str], data: Mapping[str, Any]) -> Path:
    """The page and summary of the run whose result ``data`` (``ValidationReport.to_dict``) is
    stored in ``directory`` (``<validation root>/<run id>``), then the index of its parent;
    returns the run's page."""
    directory = Path(directory)
    summary = run_summary(directory.name, data)
    page = write_text(directory / PAGE, render_run(directory.name, data))
    write_text(directory / SUMMARY, json.dumps(summary, indent=1))
    add_to_index(directory.parent, summary)
    return page


def run_summary(run_id: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """What the index shows of one run: its id, provider, start, ``as_of`` and counts."""
    stamp, provider = _id_parts(run_id)
    return {"run_id": run_id, "provider": data.get("provider") or provider, "started": stamp,
            "as_of": data.get("as_of"), "success": bool(data.get("success")),
            **{k: data.get(k, 0) for k in ("bars", "series", "checks", "failed")}}


def add_to_index(root: str | os.PathLike[str], summary: Mapping[str, Any]) -> Path:
    """List one run (its :func:`run_summary`) in ``root``'s index and on its day's page, from
    the index's state (see the module docstring); rebuilt whole (:func:`write_index`) when the
    state is missing or unreadable. Returns the index."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / _LOCK):
        state = _read_json(root / STATE)
        if not isinstance(state, dict) or not isinstance(state.get("days"), dict) \
                or not isinstance(state.get("recent"), list):
            return _rebuild(root)
        day = _day(str(summary["run_id"]))
        listed = _read_json(root / DAYS / f"{day}.json")
        runs = [*(s for s in (listed if isinstance(listed, list) else [])
                  if s.get("run_id") != summary["run_id"]), dict(summary)]
        _write_day(root, day, runs)
        state["days"][day] = _counts(runs)
        recent = [s for s in state["recent"] if s.get("run_id") != summary["run_id"]]
        state["recent"] = _newest([*recent, dict(summary)])[:INDEX_RUNS]
        return _write_state(root, state)


def write_index(root: str | os.PathLike[str]) -> Path:
    """Rebuild ``root``'s index, its state and the day pages from every run kept in
    ``root/*/candle_validation.json``, reading each run's summary (made from its result, once,
    when missing). Returns the index."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(root / _LOCK):
        return _rebuild(root)


def _rebuild(root: Path) -> Path:
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
    by_day: dict[str, list[dict[str, Any]]] = {}
    for summary in summaries:
        by_day.setdefault(_day(str(summary.get("run_id"))), []).append(summary)
    for day, runs in by_day.items():
        _write_day(root, day, runs)
    return _write_state(root, {"days": {d: _counts(r) for d, r in by_day.items()},
                               "recent": _newest(summaries)[:INDEX_RUNS]})


def _write_day(root: Path, day: str, runs: list[dict[str, Any]]) -> None:
    runs = _newest(runs)
    write_text(root / DAYS / f"{day}.json", json.dumps(runs, indent=0))
    write_text(root / DAYS / f"{day}.html", render_day(day, runs))


def _write_state(root: Path, state: dict[str, Any]) -> Path:
    write_text(root / STATE, json.dumps(state, indent=0))
    return write_text(root / PAGE, render_index(state["recent"], state["days"]))


def _counts(runs: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Runs and failed runs (a day's entry in the state)."""
    return {"runs": len(runs), "failed": sum(1 for s in runs if not s.get("success"))}


def _newest(summaries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return sorted((dict(s) for s in summaries), key=lambda s: str(s.get("run_id")),
                  reverse=True)


def _day(run_id: str) -> str:
    stamp, _ = _id_parts(run_id)
    return stamp[:10] if stamp else _UNDATED


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


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
    return _render("run.html.j2", title=f"Candle validation {run_id}", run_id=run_id,
                   success=summary["success"], facts=facts, results=_checks(results))


def render_index(summaries: Sequence[Mapping[str, Any]],
                 days: Mapping[str, Mapping[str, int]] | None = None) -> str:
    """The index of runs (a complete HTML document): ``summaries`` newest first, each linked to
    its page; ``days`` (runs and failed runs per day; None: the summaries are every run) counts
    every run kept and, when the summaries are not all of them, links each day's page."""
    ordered = _newest(summaries)
    counts = days if days is not None else {"": _counts(ordered)}
    return _render("index.html.j2", title="Candle validation runs", runs=_listed(ordered),
                   total=sum(c["runs"] for c in counts.values()),
                   failed=sum(c["failed"] for c in counts.values()), days_folder=DAYS,
                   days=sorted(counts.items(), reverse=True))


def render_day(day: str, summaries: Sequence[Mapping[str, Any]]) -> str:
    """The page of one day's runs (a complete HTML document), newest first."""
    ordered = _newest(summaries)
    return _render("day.html.j2", title=f"Candle validation runs of {day}", day=day,
                   runs=_listed(ordered), failed=sum(1 for s in ordered if not s.get("success")))


@cache
def _environment() -> Environment:
    """The pages' Jinja2 environment: templates from the package (so an installed arena finds
    them), an undefined name an error, every value escaped as :func:`_esc` does (its finalize:
    :func:`html.escape` writes a quote ``&#x27;`` where Jinja2's autoescape writes ``&#39;``;
    the autoescape leaves what it escaped as it is)."""
    def escaped(value: Any) -> Markup:
        return value if isinstance(value, Markup) else Markup(_esc(value))

    env = Environment(loader=PackageLoader("arena.data.validation", "templates"),
                      autoescape=select_autoescape(("html", "j2")), undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                      finalize=escaped)
    env.filters.update(count=lambda value: Markup(_count(value)), quote=quote)
    return env


def _render(template: str, **context: object) -> str:
    """A page of ``templates/`` rendered with ``context``."""
    return _environment().get_template(template).render(page=PAGE, **context)


def _checks(results: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The checks as the run's page shows them: what each observed as JSON (nothing when it
    observed nothing), a field a result lacks None."""
    shown = []
    for r in results:
        observed = json.dumps(r.get("observed") or {}, default=str, sort_keys=True)
        shown.append({**{k: r.get(k) for k in ("success", "suspect", "symbol", "interval",
                                                 "check", "message")},
                      "observed": observed if observed != "{}" else ""})
    return shown


def _listed(summaries: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Runs (:func:`run_summary` each) as a table of runs shows them: the id as text, a field a
    summary lacks None (an unreadable run has its id only)."""
    return [{**{k: s.get(k) for k in _LISTED}, "run_id": str(s.get("run_id"))}
            for s in summaries]


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


__all__ = ["INDEX_RUNS", "PAGE", "RESULTS", "STATE", "SUMMARY", "add_to_index", "render_day",
           "render_index", "render_run", "run_summary", "write_index", "write_pages"]
