"""An ingest run's manifest, typed: what the command line, the flows and the season day read.

:func:`arena.data.ingest.finish_ingest` writes every run's manifest as JSON into the lake
(``manifests/ingest/<run>.json``, its layout documented in ``data_lake/README.md``) and prints
it for ``arena ingest --json``. Everything outside the ingest reads it through
:class:`IngestSummary` instead of by key, so a renamed field fails here, once, and not as a
``KeyError`` in a report.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from arena.core.sessions import utc


@dataclass(frozen=True)
class AssetIngest:
    """One asset of a run: its outcome (``published``, ``quarantined``, ``held``,
    ``fetch_failed`` or ``failed``), why it did not publish, and what its fetch brought."""

    symbol: str
    status: str
    reason: str | None = None
    fetched: int = 0
    new: int = 0
    revised: int = 0
    first: pd.Timestamp | None = None
    last: pd.Timestamp | None = None


@dataclass(frozen=True)
class FilledHole:
    """A hole the asked window would have left between its bars and the stored series of an
    asset (``side``: ``before`` or ``after`` the stored bars), fetched too so that the series
    stays contiguous: its first bar, the time it ends at, and how many bars it holds."""

    symbol: str
    side: str
    start: pd.Timestamp
    end: pd.Timestamp
    bars: int


@dataclass(frozen=True)
class ValidationSummary:
    """The run's candle validation: its one-line summary, the failed checks and where its
    pages are (the run's own, the index of every run, Great Expectations' Data Docs)."""

    summary: str
    failed: tuple[str, ...] = ()
    results: str | None = None
    page: str | None = None
    index: str | None = None
    data_docs: str | None = None


@dataclass(frozen=True)
class IngestSummary:
    """The fields of a manifest its readers use (see the module docstring)."""

    run_id: str
    provider: str
    synthetic: bool
    status: str
    market: str
    start: pd.Timestamp
    end: pd.Timestamp
    end_used: pd.Timestamp
    base_interval: str
    assets: tuple[AssetIngest, ...]
    published: tuple[str, ...]
    not_published: dict[str, str]
    bars_by_interval: dict[str, int]
    bars_published: int
    timings: dict[str, float]
    validation: ValidationSummary | None = None
    filled: tuple[FilledHole, ...] = ()
    # the torn publications of killed runs this run rolled forward or back, one line each
    recovered: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, manifest: Mapping[str, Any]) -> IngestSummary:
        """The summary of a manifest as :func:`arena.data.ingest.finish_ingest` writes it."""
        asked, got = manifest["asked"], manifest.get("got") or {}
        assets = []
        for symbol, outcome in (manifest.get("assets") or {}).items():
            stats = got.get(symbol, {})
            assets.append(AssetIngest(
                symbol, str(outcome["status"]), outcome.get("reason") or None,
                int(stats.get("fetched", 0)), int(stats.get("new", 0)),
                int(stats.get("revised", 0)), _time(stats.get("first")), _time(stats.get("last"))))
        per_interval: dict[str, int] = {}
        for key, rows in (manifest.get("partitions") or {}).items():
            parts = str(key).split("/")
            if parts[0] not in ("funding", "earnings", "events"):
                per_interval[parts[1]] = per_interval.get(parts[1], 0) + int(rows)
        checks = manifest.get("validation")
        validation = None if not checks else ValidationSummary(
            str(checks["summary"]), tuple(checks.get("failed") or ()), checks.get("results"),
            checks.get("page"), checks.get("index"), checks.get("data_docs"))
        return cls(
            run_id=str(manifest["run_id"]), provider=str(manifest["provider"]),
            synthetic=bool(manifest["synthetic"]), status=str(manifest["status"]),
            market=str(manifest.get("market") or ""), start=utc(asked["start"]),
            end=utc(asked["end"]), end_used=utc(asked["end_used"]),
            base_interval=str(asked["base_interval"]), assets=tuple(assets),
            published=tuple(manifest.get("published") or ()),
            not_published=dict(manifest.get("not_published") or {}),
            bars_by_interval=per_interval, bars_published=int(manifest.get("bars_published", 0)),
            timings={k: float(v) for k, v in (manifest.get("timings_seconds") or {}).items()},
            validation=validation,
            filled=tuple(FilledHole(symbol, str(h["side"]), utc(h["from"]), utc(h["to"]),
                                    int(h["bars"]))
                         for symbol, holes in (manifest.get("filled") or {}).items()
                         for h in holes),
            recovered=tuple(str(r) for r in manifest.get("recovered") or ()), raw=manifest)

    @property
    def new_bars(self) -> int:
        return sum(a.new for a in self.assets)

    @property
    def revised_bars(self) -> int:
        return sum(a.revised for a in self.assets)

    @property
    def validation_seconds(self) -> float:
        return self.timings.get("validate", 0.0)


def _time(value: object) -> pd.Timestamp | None:
    return None if value is None or value == "" else utc(value)
