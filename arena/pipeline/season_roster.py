"""A season's roster over time: contestants added or retired while the season runs.

The season keeps its roster copy (``<lake>/season/roster.yaml``) and a log of changes
(``<lake>/season/roster_changes.json``), each sealed with its digest whenever it is written
(:mod:`arena.pipeline.season_files`). A change takes effect from the season's first cycle
after it is made, never on a cycle already due or played, so no recorded cycle changes meaning:

* **added** (:func:`add_contestants`): the entries join the roster copy; each plays from that
  cycle on, starting from $10,000 like everyone at the season's start. A name the season ever
  used (in the roster or in the ledger) cannot be taken again: its records would merge.
* **retired** (:func:`retire_contestants`): from that cycle on the contestant no longer plays;
  its records stay. Only a flat contestant retires (no open position: nothing is left for the
  monitor to watch or for the marts to mark, so its equity stays its last record's). A
  contestant mirrored by a reverse one retires together with it (name both).

Who is in the season at a cycle (:func:`arena.pipeline.season_config.active`, and the roster of
a cycle, :func:`arena.pipeline.season_config.season_roster`) is what the cycle, the monitor and
``arena season status`` go by.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import yaml
from filelock import FileLock

from arena.agents.roster import MIRROR_WORST, RosterError, load_roster, parse_roster
from arena.data.lake import Lake
from arena.ledger.store import Ledger
from arena.pipeline.season_config import (
    ADDED,
    RETIRED,
    RosterChange,
    SeasonConfig,
    SeasonConfigError,
    changes_path,
    check_blind_roster,
    roster_changes,
    roster_path,
    season_roster,
)
from arena.pipeline.season_files import sealed_json, sealed_yaml, write_sealed


def _next_cycle(season: SeasonConfig, now: pd.Timestamp) -> pd.Timestamp:
    later = season.next_after(now)
    if later is None:
        raise SeasonConfigError(f"season {season.id!r} has no cycle after {now.isoformat()}: "
                                "a roster change would never take effect")
    return later


def _log(lake: Lake, changes: list[RosterChange]) -> None:
    """Write the change log, sealed with its digest (:mod:`arena.pipeline.season_files`)."""
    write_sealed(changes_path(lake), sealed_json({"changes": [asdict(c) for c in changes]}
                                                 ).encode())


def add_contestants(lake: Lake, season: SeasonConfig, source: str | Path,
                    now: pd.Timestamp) -> list[RosterChange]:
    """Add the entries of the roster file ``source`` to the season from its next cycle after
    ``now``; returns the changes. Refused (:class:`SeasonConfigError`, :class:`RosterError`),
    with nothing written, for a name the season already used or a roster that does not load."""
    path = Path(source)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise RosterError([f"{path}: cannot read the roster: {exc}"]) from None
    entries = raw.get("contestants") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not entries:
        raise RosterError([f"{path}: expected a mapping with a non-empty 'contestants' list"])
    return add_entries(lake, season, entries, now, str(path))


def roster_lock(lake: Lake) -> FileLock:
    """The one lock of the season's roster copy and change log: the operator's commands and
    the MCP server (an entrant joining) never overwrite each other's change."""
    path = lake.root / "_locks" / "roster.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(path, timeout=60)


def add_entries(lake: Lake, season: SeasonConfig, entries: list[dict[str, object]],
                now: pd.Timestamp, source: str = "<entries>") -> list[RosterChange]:
    """:func:`add_contestants` for roster entries given as mappings (``source`` names them)."""
    with roster_lock(lake):
        return _add_entries(lake, season, entries, now, source)


def _add_entries(lake: Lake, season: SeasonConfig, entries: list[dict[str, object]],
                 now: pd.Timestamp, source: str) -> list[RosterChange]:
    path = source
    current = load_roster(roster_path(lake))
    used = set(current.names) | {k.contestant for k in Ledger(lake).records()}
    names = [e.get("name") if isinstance(e, dict) else None for e in entries]
    if not all(isinstance(n, str) for n in names):
        raise RosterError([f"{path}: every contestant needs a name (a string)"])
    taken = sorted(set(names) & used)
    if taken:
        raise SeasonConfigError(f"season {season.id!r} already used the name(s) "
                                f"{', '.join(taken)}: a new contestant needs a new name")
    start = _next_cycle(season, now)
    specs = [s.model_dump(mode="json", exclude_defaults=True) for s in current]
    text = yaml.safe_dump({"version": 1, "contestants": [*specs, *entries]}, sort_keys=False)
    # checked as one roster: fields, secrets, and a reverse may mirror a contestant of the season
    combined = parse_roster(text, f"{roster_path(lake)} with {path}")
    check_blind_roster(season, combined.contestants[len(current):])
    # the contestants the entries make (a replicated entry: its instances, <name>-r1 ..)
    names = [s.name for s in combined.contestants[len(current):]]
    taken = sorted(set(names) & used)
    if taken:
        raise SeasonConfigError(f"season {season.id!r} already used the name(s) "
                                f"{', '.join(taken)}: a new contestant needs a new name")
    in_season = set(season_roster(lake, start).names) | set(names)
    stray = sorted(f"{s.name} mirrors {s.mirror_of}" for s in combined.contestants[len(current):]
                   if s.kind == "reverse" and s.mirror_of != MIRROR_WORST
                   and s.mirror_of not in in_season)
    if stray:
        raise RosterError([f"{m}, which is not in the season from {start.isoformat()}"
                           for m in stray])
    made = [RosterChange(n, ADDED, start.isoformat(), now.isoformat()) for n in names]
    _log(lake, [*roster_changes(lake), *made])  # first: a name logged but not yet in the copy
    # plays nowhere, while the reverse would play everywhere; sealed with its digest
    write_sealed(roster_path(lake), sealed_yaml(text.encode("utf-8")))
    return made


def retire_contestants(lake: Lake, season: SeasonConfig, names: Sequence[str],
                       now: pd.Timestamp) -> list[RosterChange]:
    """Retire ``names`` from the season's next cycle after ``now``; returns the changes.
    Refused, with nothing written, for a name not in the season then, or a contestant a
    reverse one still in the season mirrors."""
    with roster_lock(lake):
        return _retire(lake, season, names, now)


def _retire(lake: Lake, season: SeasonConfig, names: Sequence[str],
            now: pd.Timestamp) -> list[RosterChange]:
    start = _next_cycle(season, now)
    roster = season_roster(lake, start)
    unknown = sorted(set(names) - set(roster.names))
    if unknown:
        raise RosterError([f"season {season.id!r} has no contestant {n!r} at "
                           f"{start.isoformat()} (retired already, or never in it)"
                           for n in unknown])
    mirrors = sorted(f"{s.name} mirrors {s.mirror_of}" for s in roster
                     if s.kind == "reverse" and s.mirror_of in names and s.name not in names)
    if mirrors:
        raise RosterError([f"{m}: retire both together" for m in mirrors])
    ledger = Ledger(lake)
    holding = {n: sorted(ledger.portfolio(n).positions) for n in names}
    holding = {n: held for n, held in holding.items() if held}
    if holding:  # its stops would go unwatched while the marts keep marking its book
        raise RosterError([f"{n} holds {', '.join(held)}: retire a contestant once it is flat "
                           "(its own closes or its invalidation levels), or let it play on"
                           for n, held in holding.items()])
    made = [RosterChange(n, RETIRED, start.isoformat(), now.isoformat()) for n in names]
    _log(lake, [*roster_changes(lake), *made])
    return made
