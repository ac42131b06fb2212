"""Finishing an ingest: each asset's partitions built and staged, validated once, every good
asset published all-or-nothing under the lake's writer lock (merged and validated again when
another run replaced its stored files since they were read), every other one quarantined with
the reason, and the run's manifest written; what a run returns (:class:`IngestResult`) and the
progress callback it reports to."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena.core.universe import Universe
from arena.data.ingest.build import AssetPartitions, build_partitions, merge_earnings
from arena.data.ingest.errors import (
    FAILED,
    FETCH_FAILED,
    HELD,
    PUBLISHED,
    QUARANTINED,
    IngestError,
    LakeWriteError,
)
from arena.data.ingest.fetch import AssetFetch
from arena.data.ingest.plan import IngestPlan
from arena.data.ingest.validate import data_docs, validate_batch, validate_plan
from arena.data.lake import Lake, PartitionKey, TableKey, is_disk_error, os_error_text
from arena.data.manifest import IngestSummary
from arena.data.providers import is_synthetic
from arena.data.recovery import recover_publications
from arena.data.validation.html import PAGE


@dataclass
class IngestResult:
    """What a run that published every asset returns: its id, its manifest and where in the
    lake the manifest was written."""

    run_id: str
    published: bool
    manifest: dict[str, object]
    manifest_path: Path

    @property
    def summary(self) -> IngestSummary:
        """The manifest, typed."""
        return IngestSummary.of(self.manifest)


ProgressFn = Callable[[str, int, int], None]


def quiet(stage: str, done: int, total: int) -> None:
    """The default progress callback: says nothing."""


def finish_ingest(lake: Lake, plan: IngestPlan, universe: Universe, fetches: Sequence[AssetFetch],
                  errors: dict[str, str], timings: dict[str, float],
                  notify: ProgressFn = quiet) -> IngestResult:
    """Build partitions, validate them once, publish every good asset; write the manifest.

    All-or-nothing per asset: whatever goes wrong for one asset (its fetch, build, expectations,
    publication), its staged files go to quarantine with the reason, its published partitions
    stay as they were, and the other assets publish. Raises :class:`IngestError` (after writing
    the manifest) when any asset did not publish, and :class:`LakeWriteError` (after writing the
    manifest, when it can be) when the lake could not be written: a full or read-only disk stops
    the run, whoever's file it was writing. An interrupt (``KeyboardInterrupt``) propagates
    at once, and the run's lock removes its staging folder on the way out: whatever was not
    published keeps its last good partitions, and no manifest is written.
    """
    outcomes: dict[str, dict[str, object]] = {
        s: {"status": FETCH_FAILED, "reason": e} for s, e in errors.items()}
    by_symbol = {f.symbol: f for f in fetches}
    parts: dict[str, AssetPartitions] = {}
    published: dict[str, AssetPartitions] = {}
    report = docs = failure = None
    recovered: list[str] = []  # torn publications of killed runs this run rolled forward or back
    disk: OSError | None = None  # a full, read-only or forbidden lake: the run stops
    try:
        with lake.run_lock(plan.run_id):
            lake.clean_stale_staging()
            failure, report, docs = _build_validate_publish(
                lake, plan, universe, fetches, timings, notify, outcomes, by_symbol, parts,
                published, recovered)
    except OSError as exc:  # the staging folder is gone (run_lock); nothing more published
        if not is_disk_error(exc):
            raise
        disk = exc
        failure = f"the lake could not be written: {os_error_text(exc)}"
        for f in fetches:  # the assets it left undecided (no quarantine on a failing disk)
            if f.symbol not in outcomes:
                outcomes[f.symbol] = {"status": FAILED, "reason": failure, "quarantine": None}
    manifest = _manifest(lake, plan, fetches, parts, published, outcomes, report, docs, failure,
                         timings, recovered)
    try:
        path = lake.write_json(Path("manifests") / "ingest" / f"{plan.run_id}.json", manifest)
    except OSError as exc:
        if not is_disk_error(exc):
            raise
        raise LakeWriteError(disk or exc, plan.run_id, manifest, None, os_error_text(exc)) from exc
    if disk is not None:
        raise LakeWriteError(disk, plan.run_id, manifest, path) from disk
    if manifest["status"] != PUBLISHED:
        bad = manifest["not_published"]
        reasons = [f"{s}: {r}" for s, r in bad.items()] + ([failure] if failure and not bad else [])
        shown = "; ".join(reasons[:5]) + (f"; ... {len(reasons) - 5} more" if len(reasons) > 5 else "")
        done = f"published {', '.join(published)}" if published else "nothing published"
        raise IngestError(f"ingest {plan.run_id} failed for {', '.join(bad) or 'the run'} "
                          f"({done}): {shown} (manifest: {path})", manifest)
    return IngestResult(plan.run_id, True, manifest, path)


def _build_validate_publish(lake: Lake, plan: IngestPlan, universe: Universe,
                            fetches: Sequence[AssetFetch], timings: dict[str, float],
                            notify: ProgressFn, outcomes: dict[str, dict[str, object]],
                            by_symbol: dict[str, AssetFetch], parts: dict[str, AssetPartitions],
                            published: dict[str, AssetPartitions], recovered: list[str]
                            ) -> tuple[str | None, object, object]:
    """The steps of :func:`finish_ingest` under the run's lock; fills ``outcomes``, ``parts``
    and ``published``, returns the run's failure (None when it has none), the validation report
    and its Data Docs. An :class:`OSError` of a full, read-only or forbidden disk
    (:func:`~arena.data.lake.is_disk_error`) is no asset's fault: it stops the run and
    propagates (so does an interrupt); any other failure of one asset is that asset's."""
    report = docs = failure = None
    try:
        timings["build"] = timings["stage"] = 0.0
        for f in fetches:
            t0 = time.perf_counter()
            if f.restatement is not None and f.restatement.get("error"):
                _quarantine(lake, plan, outcomes, f.symbol,
                            "restated by the vendor, but " + str(f.restatement["error"]))
                continue
            try:
                part = build_partitions(lake, plan.provider, universe[f.symbol], f, plan.base,
                                        intervals=plan.intervals)
            except Exception as exc:  # e.g. bars that no calendar bar can hold
                outcomes[f.symbol] = {"status": FAILED,
                                      "reason": f"build: {type(exc).__name__}: {exc}"}
                continue
            t1 = time.perf_counter()
            timings["build"] += t1 - t0
            try:
                lake.stage(plan.run_id, part.frames, group=f.symbol)
            except Exception as exc:  # a file that cannot be written: this asset only
                if is_disk_error(exc):  # a full or read-only lake: every asset's, the run stops
                    raise
                _quarantine(lake, plan, outcomes, f.symbol,
                            f"stage: {type(exc).__name__}: {exc}")
                continue
            finally:
                timings["stage"] += time.perf_counter() - t1
            parts[f.symbol] = part
        t0 = time.perf_counter()
        notify("validate", 0, 1)
        report, raised = validate_batch(list(parts.values()), universe, plan, lake)
        notify("validate", 1, 1)
        timings["validate"] = time.perf_counter() - t0
        if report is not None:
            report.write(lake.root / "validation" / plan.run_id)
            docs = data_docs(lake, report, plan)
        bad = dict(raised)
        suspect_only = {s: True for s in parts}
        for result in report.failed() if report is not None else []:
            bad.setdefault(result.symbol, []).append(result.message)
            suspect_only[result.symbol] &= result.suspect
        for symbol, messages in bad.items():
            held = suspect_only.get(symbol, False) and symbol not in raised
            _quarantine(lake, plan, outcomes, symbol, "validation: " + "; ".join(messages),
                        status=HELD if held else QUARANTINED)
        good = [p for s, p in parts.items() if s not in bad]
        t0 = time.perf_counter()
        _publish(lake, plan, universe, good, by_symbol, outcomes, published, recovered)
        timings["publish"] = time.perf_counter() - t0
    except Exception as exc:
        if is_disk_error(exc):
            raise
        failure = f"{type(exc).__name__}: {exc}"
    for f in fetches:  # whatever the failure left undecided
        if f.symbol not in outcomes:
            _quarantine(lake, plan, outcomes, f.symbol, failure or "not published")
    return failure, report, docs


def _quarantine(lake: Lake, plan: IngestPlan, outcomes: dict[str, dict[str, object]],
                symbol: str, reason: str, status: str = QUARANTINED) -> None:
    where = lake.quarantine(plan.run_id, symbol, reason=reason)
    outcomes[symbol] = {"status": status, "reason": reason,
                        "quarantine": None if where is None else str(where)}


def _overtaken(lake: Lake, part: AssetPartitions) -> bool:
    """Whether another run replaced any of the asset's stored files since they were read."""
    return any(lake.signature(k) != sig for k, sig in part.read.items())


def _publish(lake: Lake, plan: IngestPlan, universe: Universe, good: list[AssetPartitions],
             fetches: dict[str, AssetFetch],
             outcomes: dict[str, dict[str, object]],
             published: dict[str, AssetPartitions], recovered: list[str]) -> None:
    """Publish each good asset, all of its files or none, under the lake's writer lock.

    First, under the lock, every publication a killed run left torn is rolled forward or back
    (:func:`arena.data.recovery.recover_publications`; ``recovered`` gets one line each): the
    assets it touched are then overtaken, merged again with what is stored and validated again.

    An asset whose stored files another run replaced since they were read is merged again with
    what is stored now and validated again before its swap (no lost update). The earnings table,
    shared by the provider's stocks, is merged under the lock with the published assets' dates.
    """
    with lake.writer_lock():
        recovered.extend(p.describe() for p in recover_publications(lake))
        for part in good:
            symbol = part.symbol
            try:
                if _overtaken(lake, part):
                    part = build_partitions(lake, plan.provider, universe[symbol], fetches[symbol],
                                            plan.base, intervals=plan.intervals)
                    report = validate_plan([part], universe, plan, lake)
                    if not report.success:
                        _quarantine(lake, plan, outcomes, symbol,
                                    "validation after merging with another run's bars: "
                                    + "; ".join(r.message for r in report.failed()))
                        continue
                    lake.discard(plan.run_id, symbol)
                    lake.stage(plan.run_id, part.frames, group=symbol)
                staged = {k: lake.staged_path(plan.run_id, k, symbol) for k in part.frames}
                lake.publish(plan.run_id, staged, group=symbol)
            except Exception as exc:
                if is_disk_error(exc):  # the lake's, not the asset's: the run stops here
                    raise
                _quarantine(lake, plan, outcomes, symbol, f"publish: {type(exc).__name__}: {exc}")
                continue
            published[symbol] = part
            outcomes[symbol] = {"status": PUBLISHED, "reason": None}
        earnings_key = TableKey("earnings", plan.provider)
        earnings = merge_earnings(lake.read_table(earnings_key),
                                  [fetches[s] for s in published], plan.start, plan.end)
        if earnings is not None:
            staged = lake.stage(plan.run_id, {earnings_key: earnings}, group="_earnings")
            lake.publish(plan.run_id, staged, group="_earnings")


def _manifest(lake: Lake, plan: IngestPlan, fetches: Sequence[AssetFetch],
              parts: dict[str, AssetPartitions],
              published: dict[str, AssetPartitions], outcomes: dict[str, dict[str, object]],
              report, docs, failure: str | None, timings: dict[str, float],
              recovered: list[str]) -> dict[str, object]:
    assets = {}
    for symbol in (s for s in plan.symbols if s in outcomes):
        part = published.get(symbol) or parts.get(symbol)
        frames = part.frames if part is not None else {}
        assets[symbol] = {
            **outcomes[symbol],
            "partitions": {str(k): len(f) for k, f in frames.items()},
            "bars_published": sum(len(f) for k, f in frames.items()
                                  if isinstance(k, PartitionKey)) if symbol in published else 0,
        }
    every = all(a["status"] == PUBLISHED for a in assets.values()) and failure is None
    status = PUBLISHED if every else ("partial" if published else "failed")
    quarantined = [a["quarantine"] for a in assets.values() if a.get("quarantine")]
    return {
        "run_id": plan.run_id, "provider": plan.provider, "synthetic": is_synthetic(plan.provider),
        "stand_in": plan.source or None,  # the files folder that filled the provider's partitions
        "market": lake.market.describe(),  # where the partitions are published
        "status": status, "started": plan.started,
        "asked": {"symbols": plan.symbols, "market_closed": list(plan.closed),
                  "start": plan.start, "end": plan.asked_end,
                  "end_used": plan.end, "base_interval": plan.base, "full": plan.full,
                  "intervals": list(plan.intervals), "watch": plan.watch},
        "assets": assets,
        "published": list(published),
        "not_published": {s: a["reason"] for s, a in assets.items() if a["status"] != PUBLISHED},
        "got": {s: p.stats for s, p in parts.items()},
        "partitions": {str(k): len(f) for p in published.values() for k, f in p.frames.items()},
        "bars_published": sum(a["bars_published"] for a in assets.values()),
        "fetch_errors": {s: a["reason"] for s, a in assets.items() if a["status"] == FETCH_FAILED},
        "held": [s for s, a in assets.items() if a["status"] == HELD],
        # the holes a window left before or after the stored series, fetched too
        "filled": {f.symbol: f.filled for f in fetches if f.filled},
        "restated": {f.symbol: {**f.restatement, "outcome": assets.get(f.symbol, {}).get("status")}
                     for f in fetches if f.restatement is not None},
        "error": failure,
        "recovered": list(recovered),
        "validation": None if report is None else {
            "success": report.success, "summary": report.summary(),
            "failed": [r.message for r in report.failed()],
            "results": str(lake.root / "validation" / plan.run_id), "data_docs": None if docs is None else str(docs),
            "page": str(lake.root / "validation" / plan.run_id / PAGE),
            "index": str(lake.root / "validation" / PAGE)},
        "quarantine": str(lake.root / "quarantine" / plan.run_id) if quarantined else None,
        "timings_seconds": {k: round(v, 3) for k, v in timings.items()},
    }
