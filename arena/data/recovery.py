"""Damage a publication can leave, found and repaired: torn publications, derived intervals that
disagree with their base bars.

A publication of a local market moves one asset's files into place one ``os.replace`` at a
time, after writing its intent journal (``journal/<run id>/<symbol>/journal.json``, beside the
files it replaces: :meth:`arena.data.market_store.LocalMarket.publish`). A process killed
between two moves leaves that journal behind, and the asset's intervals torn (its 15m bars of
the new run, its 4h bars of the previous one). Every ingest run rolls such a publication
forward - the staged files were validated, and wait in ``staging/`` - or, when a staged file is
gone or a roll-back had begun, back to the previous files, before it publishes anything
(:func:`recover_publications`, under the lake's writer lock).

A coarser interval is derived from its base bars (``data.ingest``): a lake torn before journals
existed, or restored from a partial copy, can hold a 4h series that stops short of its 15m
series or disagrees with it. :func:`check_publications` (``arena season verify``) finds both
kinds of damage and, with ``repair``, rolls torn publications forward or back and publishes
every disagreeing interval derived again from its base bars.

Every publication records the SHA-256 of each bar file it puts in place
(:mod:`arena.data.digests`). :func:`check_bar_digests` (``arena season verify``) hashes every
bar file of every interval and names each one whose bytes are not the ones recorded, and each
recorded partition whose file is gone; :func:`unrecorded_partitions` names the files published
before digests were recorded (not damage: the next publication of each records it), and
:func:`copy_problem` says whether a copy of a partition (a mirror's) is the one published.
"""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from arena.core.sessions import INTERVAL_ORDER, coarser_or_equal
from arena.core.universe import Universe, load_universe
from arena.data.bars import resample
from arena.data.digests import CHANGED, MISSING, file_sha256, judge
from arena.data.errors import DamagedFile
from arena.data.lake import Lake, PartitionKey
from arena.data.market_store import LocalMarket, TornPublication

TORN, DERIVED, UNCHECKED = "torn publication", "derived interval", "not checked"
CHANGED_FILE, MISSING_FILE, RECORD = "changed file", "missing file", "digest record"
RTOL = 1e-9  # a derived bar agrees with its base bars to this relative tolerance
RESTORE = "restore it from a mirror (arena season verify --restore-from MIRROR)"


@dataclass(frozen=True)
class Problem:
    """One piece of damage: what it is (``kind``: :data:`TORN`, :data:`DERIVED`,
    :data:`UNCHECKED`, :data:`CHANGED_FILE`, :data:`MISSING_FILE` or :data:`RECORD`), the asset
    or partition it is in, what is wrong, and what a repair does (``repaired``: what it did); ``key``: the
    partition, when the problem is one partition's file."""

    kind: str
    subject: str
    what: str
    repair: str
    repaired: bool = False
    key: PartitionKey | None = None

    def describe(self) -> str:
        """One line, e.g. ``synthetic/4h/BTC: derived interval: 3 bars missing from 2025-11-04
        12:00 UTC on (its 15m bars hold them); repair: derive it again from its 15m bars``."""
        done = "repaired" if self.repaired else "repair"
        return f"{self.subject}: {self.kind}: {self.what}; {done}: {self.repair}"


def check_publications(lake: Lake, repair: bool = False, *, universe: Universe | None = None,
                       bases: Mapping[str, str] | None = None) -> list[Problem]:
    """Every torn publication (a journal left behind) and every derived interval that disagrees
    with its base bars, in the lake's market; with ``repair``, each is rolled forward or back,
    or derived again and published (all of an asset's repaired intervals at once). Without
    ``repair`` nothing is written.

    ``universe`` gives each symbol's calendar (the shipped universe by default; a symbol outside
    it is reported as not checked); ``bases`` each provider's base interval (by default the one
    its newest ingest manifest names). Holds the lake's writer lock, so no publication is under
    way while it reads."""
    universe = universe if universe is not None else load_universe()
    with lake.writer_lock():
        problems = recover_publications(lake) if repair else torn_publications(lake)
        derived = derived_problems(lake, universe, bases)
        if repair:
            derived = _derive_again(lake, universe, derived)
    return problems + [p for p, _ in derived]


# ---------------------------------------------------------------------- torn publications
def torn_publications(lake: Lake) -> list[Problem]:
    """The publications killed between two moves, as the files show them; changes nothing.
    The caller holds the writer lock (else a publication under way looks torn)."""
    market = lake.market
    if not isinstance(market, LocalMarket):
        return []  # an object store publishes a set by one pointer: it is never torn
    out = []
    for scratch in lake.journals():
        torn = market.torn(scratch)
        if torn is not None:
            out.append(_torn_problem(torn, scratch))
    return out


def recover_publications(lake: Lake) -> list[Problem]:
    """Roll every torn publication forward (every file not yet moved still has its staged file)
    or back (the previous files again); returns what was repaired. The caller holds the writer
    lock: every ingest run calls it before its own publications."""
    market = lake.market
    if not isinstance(market, LocalMarket):
        return []
    out = []
    for scratch in lake.journals():
        torn = market.recover(scratch)
        if torn is None:
            continue
        if torn.outcome == "rolled forward":  # the staged files are in place: the rest goes
            _remove_tree(lake.root / "staging" / scratch.parent.name / scratch.name)
        _remove_empty(scratch.parent)
        out.append(_torn_problem(torn, scratch))
    if out:  # the dead runs' staging folders, kept for the roll-forward, go now
        lake.clean_stale_staging()
    return out


def _torn_problem(torn: TornPublication, scratch: Path) -> Problem:
    run_id, group = scratch.parent.name, scratch.name
    subject = "the run's files" if group == "_run" else group
    total = len(torn.keys)
    if not total:
        what = f"run {run_id} left a publication journal cut before its first move ({scratch})"
    else:
        what = (f"run {run_id} was stopped after {len(torn.moved)} of {total} files of its "
                f"publication; not in place: {_names(torn.pending + torn.lost) or 'none'} "
                f"(journal {scratch})")
    if torn.outcome is not None:
        return Problem(TORN, subject, what, f"{torn.outcome} ({_consequence(torn)})", True)
    if torn.forward_possible:
        repair = f"roll it forward (move the {len(torn.pending)} staged files into place)"
    else:
        why = "a roll-back had begun" if torn.rolling_back else \
            f"the staged files of {_names(torn.lost)} are gone"
        repair = f"roll it back ({why}: the {len(torn.moved)} moved files get their previous ones)"
    return Problem(TORN, subject, what, repair)


def _consequence(torn: TornPublication) -> str:
    if torn.outcome == "rolled forward":
        return f"all {len(torn.keys)} files of the publication in place"
    return f"{len(torn.moved)} files back to their previous version"


def _names(keys: tuple[str, ...]) -> str:
    """Keys as the lake names partitions: ``synthetic/4h/BTC``, ``funding/synthetic/BTC``."""
    out = []
    for key in keys:
        parts = key.split("/")
        values = [p.split("=", 1)[1] for p in parts[1:-1] if "=" in p]
        out.append("/".join(values) if parts[0] == "bars" else "/".join([parts[0], *values]))
    return ", ".join(out)


# ---------------------------------------------------------------------- derived intervals
def derived_problems(lake: Lake, universe: Universe, bases: Mapping[str, str] | None = None
                     ) -> list[tuple[Problem, dict[PartitionKey, pd.DataFrame]]]:
    """Every derived interval of the lake that disagrees with its base bars, with the frames
    derived again from them (empty for a problem that is not a disagreement)."""
    bases = dict(bases) if bases is not None else base_intervals(lake)
    out: list[tuple[Problem, dict[PartitionKey, pd.DataFrame]]] = []
    series: dict[tuple[str, str], set[str]] = {}
    for key in lake.partitions():
        series.setdefault((key.provider, key.symbol), set()).add(key.interval)
    for (provider, symbol), intervals in sorted(series.items()):
        base = bases.get(provider)
        if base is None:
            out.append((Problem(UNCHECKED, f"{provider}/{symbol}", "no ingest manifest names the "
                                f"base interval of {provider}'s series",
                                "none (pass the provider's base interval)"), {}))
            continue
        if base not in intervals:
            continue  # only a watch series: nothing is derived from it
        if symbol not in universe:
            out.append((Problem(UNCHECKED, f"{provider}/{symbol}", "not in the universe: its "
                                "calendar is unknown", "none (check it with its universe)"), {}))
            continue
        calendar = universe[symbol].calendar
        try:
            base_bars = lake.read_bars(PartitionKey(provider, base, symbol))
        except DamagedFile as exc:  # nothing can be derived from it: restored, not repaired
            out.append((Problem(UNCHECKED, f"{provider}/{symbol}", f"its {base} bars are damaged "
                                f"({exc.problem})", "none here: restore the file "
                                "(arena season verify --restore-from <mirror>)"), {}))
            continue
        for interval in coarser_or_equal(base):
            if interval == base:
                continue
            key = PartitionKey(provider, interval, symbol)
            derived = resample(base_bars, base, interval, calendar, complete_only=True)
            try:
                what = disagreement(lake.read_bars(key), derived, base)
            except DamagedFile as exc:  # a derived file that is not bars: derived again
                what = f"the stored file cannot be used ({exc.problem})"
            if what is not None:
                out.append((Problem(DERIVED, str(key), what,
                                    f"derive it again from its {base} bars"), {key: derived}))
    return out


def disagreement(stored: pd.DataFrame, derived: pd.DataFrame, base: str) -> str | None:
    """How a stored derived series differs from the one its base bars give (None: it agrees):
    bars missing, bars its base bars cannot make, bars with other values, each counted with the
    first time."""
    held = pd.DatetimeIndex(stored["timestamp"])
    made = pd.DatetimeIndex(derived["timestamp"])
    missing, extra = made.difference(held), held.difference(made)
    both = held.intersection(made)
    old = stored.set_index("timestamp").loc[both, ["open", "high", "low", "close", "volume"]]
    new = derived.set_index("timestamp").loc[both, old.columns]
    differ = both[~np.isclose(old.to_numpy(), new.to_numpy(), rtol=RTOL, atol=0.0,
                              equal_nan=True).all(axis=1)]
    parts = []
    if len(missing):
        parts.append(f"{len(missing)} bars missing from {_at(missing[0])} on "
                     f"(its {base} bars hold them)")
    if len(extra):
        parts.append(f"{len(extra)} bars its {base} bars do not make, first {_at(extra[0])}")
    if len(differ):
        parts.append(f"{len(differ)} bars differ from their {base} bars, first {_at(differ[0])}")
    return "; ".join(parts) or None


def _at(when: pd.Timestamp) -> str:
    return f"{when:%Y-%m-%d %H:%M} UTC"


def _derive_again(lake: Lake, universe: Universe,
                  found: list[tuple[Problem, dict[PartitionKey, pd.DataFrame]]]
                  ) -> list[tuple[Problem, dict[PartitionKey, pd.DataFrame]]]:
    """Publish the derived frames of every disagreement, one asset's at once (the caller holds
    the writer lock); returns the problems marked repaired."""
    by_asset: dict[tuple[str, str], dict[PartitionKey, pd.DataFrame]] = {}
    for _, frames in found:
        for key, frame in frames.items():
            by_asset.setdefault((key.provider, key.symbol), {})[key] = frame
    if not by_asset:
        return found
    run_id = f"{pd.Timestamp.now(tz='UTC'):%Y%m%dT%H%M%S}-repair-{uuid.uuid4().hex[:6]}"
    with lake.run_lock(run_id):
        for (_, symbol), frames in sorted(by_asset.items()):
            staged = lake.stage(run_id, frames, group=symbol)
            lake.publish(run_id, staged, group=symbol)
    out = []
    for problem, frames in found:
        if frames:
            problem = Problem(problem.kind, problem.subject, problem.what,
                              f"derived again from its base bars and published (run {run_id})",
                              True)
        out.append((problem, frames))
    return out


# ---------------------------------------------------------------------- digests
def check_bar_digests(lake: Lake) -> list[Problem]:
    """Every bar partition of every interval (the watch intervals included) whose file is not
    the one its publication recorded: its bytes changed (:data:`CHANGED_FILE`), or the file is
    gone (:data:`MISSING_FILE`); each names the partition and how to restore it; and every
    digest record that cannot be read (:data:`RECORD`: its series' files are read as
    unrecorded until the next publication of the series writes it again). Every file is read
    whole and hashed (once per version of it in this lake's cache); nothing is written. A file
    no record names is not damage (:func:`unrecorded_partitions`)."""
    bases = base_intervals(lake)
    market = lake.market
    out = [Problem(RECORD, relative, f"it cannot be read ({why}): the files of its series are "
                   "not proven whole", "the next ingest of the series writes it again, or "
                   "restore it from a mirror (copy MIRROR/" + relative + " back)")
           for relative, why in (market.records.damaged()
                                 if isinstance(market, LocalMarket) else [])]
    for key in sorted({*lake.partitions(), *lake.recorded_partitions()}):
        try:
            verdict = lake.digest_verdict(key)
        except FileNotFoundError:  # removed since the listing, and never recorded
            continue
        if verdict.state in (CHANGED, MISSING):
            kind = CHANGED_FILE if verdict.state == CHANGED else MISSING_FILE
            out.append(Problem(kind, str(key), str(verdict.problem), _restore(key, bases),
                               key=key))
    return out


def unrecorded_partitions(lake: Lake) -> list[PartitionKey]:
    """The bar partitions whose file no publication's record names (published before digests
    were recorded): read as they are, and recorded by the next publication of each."""
    recorded = set(lake.recorded_partitions())
    return [key for key in sorted(lake.partitions()) if key not in recorded]


def copy_problem(lake: Lake, key: PartitionKey, copy: Path) -> str | None:
    """Why the file ``copy`` (a mirror's copy of ``key``) is not the one the lake's publication
    recorded, or None when it is (or when the lake records no digest of ``key``)."""
    accepted = lake.market.recorded(key.relative.as_posix())
    return None if accepted is None else judge(file_sha256(copy), accepted).problem


def _restore(key: PartitionKey, bases: Mapping[str, str]) -> str:
    """How to restore a damaged or missing partition: from a mirror; a derived interval also by
    deriving it again from its base bars."""
    base = bases.get(key.provider)
    if base is None or INTERVAL_ORDER.index(key.interval) <= INTERVAL_ORDER.index(base):
        return RESTORE  # the base interval, or a watch interval finer than it
    return f"derive it again from its {base} bars (arena season verify --repair), or {RESTORE}"


def base_intervals(lake: Lake) -> dict[str, str]:
    """Each provider's base interval, as its newest ingest manifest that was not a watch run
    names it (the lake records it nowhere else)."""
    found: dict[str, str] = {}
    for path in reversed(lake.manifests()):
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
            asked = manifest["asked"]
            provider, base = str(manifest["provider"]), str(asked["base_interval"])
        except (OSError, ValueError, KeyError, TypeError):
            continue  # an unreadable manifest names nothing
        if not asked.get("watch") and provider not in found and base in INTERVAL_ORDER:
            found[provider] = base
    return found


def _remove_tree(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)


def _remove_empty(path: Path) -> None:
    with suppress(OSError):  # another publication's journal is still in it
        path.rmdir()


__all__ = ["CHANGED_FILE", "DERIVED", "MISSING_FILE", "RECORD", "TORN", "UNCHECKED", "Problem",
           "base_intervals", "check_bar_digests", "check_publications", "copy_problem",
           "derived_problems", "disagreement", "recover_publications", "torn_publications",
           "unrecorded_partitions"]
