"""What the flows show in the Prefect UI: each job's result as artifacts.

Every key carries the season's slug (``2026-12-01-ccxt-yfinance-cycle-outcomes``; a lake with no
season: the bare name), so the artifacts of two seasons on one server never mix, and every
artifact has a description naming the season, what it is and whose prices it is about (SYNTHETIC
for the embedded default). The jobs decide; these functions only render their results.

A table's numbers are rounded as the reports write them (:func:`rounded_rows`, after
:data:`arena.reporting.layout.KINDS`): a return or a drawdown to 0.01% (``0.0523``), a
percentile to 0.1%, a score to two decimals, a model call's cost to a hundredth of a cent and a
duration to a hundredth of a second, never 17 digits of float noise.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from numbers import Real
from pathlib import Path

from prefect.artifacts import (
    create_link_artifact,
    create_markdown_artifact,
    create_table_artifact,
)

from arena.app.cycle import CycleResult
from arena.app.ingest import IngestOutcome
from arena.app.replay import ReplayResult
from arena.data.providers import provider_note
from arena.data.validation.html import PAGE
from arena.engine.outcomes import CycleOutcome
from arena.pipeline.day import DayReport
from arena.pipeline.season_config import SeasonConfig, season_slug
from arena.reporting.layout import KINDS
from arena.reporting.leaderboard import LEADERBOARD, artifact_rows, summary_line

SECONDS = 2  # decimals of a duration in seconds
CYCLE_KINDS = {"cost_usd": "usd", "latency_s": "seconds", "queue_s": "seconds"}


def artifact_key(season: str | None, name: str) -> str:
    """The key of an artifact ``name`` of the season ``season`` (its id; None: no season)."""
    return name if season is None else f"{season_slug(season)}-{name}"


def decimals(kind: str) -> int | None:
    """How many decimals a number of ``kind`` keeps (a key of :data:`KINDS`, or ``seconds``):
    the report's format's, two more for a percentage (``{:+.2%}``: 4); None for a kind written
    to significant digits or not a number."""
    if kind == "seconds":
        return SECONDS
    found = re.search(r"\.(\d+)([f%])", KINDS[kind][0])
    return None if found is None else int(found[1]) + (2 if found[2] == "%" else 0)


def rounded(value: object, kind: str) -> object:
    """``value`` rounded for a table artifact (:func:`decimals`); anything else as it is."""
    places = decimals(kind)
    if places is None or isinstance(value, bool) or not isinstance(value, Real):
        return value
    number = float(value)
    if not math.isfinite(number):
        return None
    return round(number) if places == 0 else round(number, places) + 0.0  # no -0.0


def rounded_rows(rows: list[dict], kinds: Mapping[str, str]) -> list[dict]:
    """``rows`` with the value of each column ``kinds`` names rounded (:func:`rounded`)."""
    return [{key: rounded(value, kinds[key]) if key in kinds else value
             for key, value in row.items()} for row in rows]


def market_notes(season: SeasonConfig) -> str:
    return "; ".join(provider_note(p) for p in season.sources)


def ingest_artifacts(out: IngestOutcome) -> None:
    """The run's assets (a table), its report (markdown) and its validation page (a link)."""
    summary = out.summary
    if summary is None:
        return
    who = f"season {out.season}, " if out.season else ""
    rows = [{"symbol": a.symbol, "status": a.status, "fetched": a.fetched, "new": a.new,
             "revised": a.revised, "first": "" if a.first is None else str(a.first),
             "last": "" if a.last is None else str(a.last), "reason": a.reason or ""}
            for a in summary.assets]
    create_table_artifact(rows, key=artifact_key(out.season, "ingest-assets"),
                          description=f"ingest {summary.run_id} ({who}"
                                      f"{provider_note(summary.provider)}): {summary.status}")
    checks = summary.validation
    failed = "\n".join(f"* {m}" for m in (checks.failed if checks else ())[:50]) or "* none"
    bad = "\n".join(f"* {s}: {r}" for s, r in summary.not_published.items()) or "* none"
    create_markdown_artifact(
        f"# Ingest {summary.run_id}\n\nProvider **{summary.provider}**"
        f"{' (SYNTHETIC market)' if summary.synthetic else ''}, status **{summary.status}**."
        f"\n\nPublished: {', '.join(summary.published) or 'none'}\n\nNot published (kept as "
        f"they were):\n{bad}\n\nValidation: "
        f"{checks.summary if checks else 'not run (fetch failed)'}\n\nFailed checks:\n{failed}\n",
        key=artifact_key(out.season, "ingest-report"),
        description=f"ingest {summary.run_id} ({who}{summary.provider}): what was published, "
                    "what was kept as it was and why, the failed checks")
    if checks and checks.results and (page := Path(checks.results) / PAGE).is_file():
        create_link_artifact(page.resolve().as_uri(), link_text=f"validation {summary.run_id}",
                             key=artifact_key(out.season, "validation-report"),
                             description=f"ingest {summary.run_id} ({who}{summary.provider}): "
                                         "the run's candle validation, every check, offline")


def cycle_rows(result: CycleResult) -> list[dict]:
    """Each contestant's line of the cycle (and of the missed cycles played or skipped before
    it), the roster entries skipped for want of their key included (not played, not recorded)."""
    rows = []
    for played in (*result.backfilled, result):
        rows += [{"cycle_at": played.at.isoformat(), **o.as_dict()} for o in played.outcomes]
    rows += [{"cycle_at": result.at.isoformat(), "contestant": s.spec.name,
              "recorded": "not recorded", "status": CycleOutcome.SKIPPED.value,
              "error": s.reason} for s in result.skipped]
    rows += [{"cycle_at": at.isoformat(), "contestant": name, "recorded": "recorded",
              "status": CycleOutcome.FORFEITED.value, "error": "missed, skipped by the operator"}
             for at, name in result.missed_forfeits]
    return rows


def cycle_artifacts(result: CycleResult, season: SeasonConfig) -> None:
    """Each contestant's outcome of the cycle (:func:`cycle_rows`), as a table."""
    what = {"cycle": "decision cycle", "backfill": "backfilled cycle",
            "retry": "retried cycle"}[result.kind.value]
    create_table_artifact(rounded_rows(cycle_rows(result), CYCLE_KINDS),
                          key=artifact_key(season.id, "cycle-outcomes"),
                          description=f"{what} {result.at.isoformat()} of season {season.id}: "
                                      f"each contestant's outcome ({market_notes(season)})")


def daily_artifact(day: DayReport, season: SeasonConfig) -> None:
    create_markdown_artifact(day.daily_report, key=artifact_key(season.id, "daily-report"),
                             description=f"daily report {day.at:%Y-%m-%d} of season "
                                         f"{season.id} ({market_notes(season)})")


def leaderboard_description(result: ReplayResult) -> str:
    """What the leaderboard artifact says of itself: the season, whose prices, and the best
    contestant (never a ruler) or that there is none (:func:`summary_line`)."""
    config = result.season.config
    return (f"leaderboard of season {config.id}: {config.first:%Y-%m-%d}, {len(config.times)} "
            f"cycles ({market_notes(config)}); {summary_line(result.board)}; the contestants "
            "first, then the house rules as rulers (role), not ranked")


def leaderboard_artifact(result: ReplayResult) -> None:
    """The season's leaderboard as a table: the contestants, then the rulers
    (:func:`artifact_rows`)."""
    config = result.season.config
    create_table_artifact(rounded_rows(artifact_rows(result.board),
                                       {c.key: c.kind for c in LEADERBOARD}),
                          key=artifact_key(config.id, "season-leaderboard"),
                          description=leaderboard_description(result))


def report_link(path: Path | None, season: SeasonConfig) -> None:
    if path is not None and Path(path).is_file():
        create_link_artifact(Path(path).resolve().as_uri(), link_text=f"season report {season.id}",
                             key=artifact_key(season.id, "season-report"),
                             description=f"the season report of {season.id} so far, offline "
                                         f"({market_notes(season)})")


__all__ = ["artifact_key", "cycle_artifacts", "cycle_rows", "daily_artifact", "decimals",
           "ingest_artifacts", "leaderboard_artifact", "leaderboard_description", "report_link",
           "rounded", "rounded_rows"]
