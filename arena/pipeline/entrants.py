"""Outside entrants of a season: their keys, their submissions, their place in the roster.

``arena entrant add NAME`` registers an entrant and prints its key once; the lake keeps only the
key's SHA-256 (``season/entrants.json``; a key is 256 random bits, so a plain hash is as good as
a slow one). Every request of the MCP server carries the key as a bearer token
(:func:`authenticate`); a revoked key authenticates nobody.

An entrant joins the season with its first submission (:func:`join`): from the cycle that
submission is for, it is a contestant of the season like a roster one (kind ``entrant``, see
:mod:`arena.agents.entrant`), starting from $10,000; its window starts there, and the marts say
so (the contestants table's ``first_cycle_at``).

A season whose last cycle's time has passed (or that its final publication closed) is over
(:func:`season_over`): it takes no new entrant, and the door no decision or position.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd
from filelock import FileLock

from arena.agents.entrant import Inbox
from arena.agents.roster import ContestantSpec, RosterError, load_roster
from arena.core.errors import UnusableInput
from arena.data.lake import Lake, write_text
from arena.ledger.store import Ledger
from arena.pipeline.live.closed import closed_at
from arena.pipeline.season_config import (
    RosterChange,
    SeasonConfig,
    SeasonConfigError,
    roster_changes,
    roster_path,
)
from arena.pipeline.season_roster import add_entries

ENTRANTS_FILE = Path("season") / "entrants.json"
KEY_PREFIX = "arena_"


class EntrantError(UnusableInput, ValueError):
    """An entrant that cannot be added, found or revoked (names the problem)."""


class SeasonOver(EntrantError):
    """The season is over (:func:`season_over`): it takes no new entrant."""


@dataclass(frozen=True)
class Entrant:
    name: str
    key_sha256: str
    added_at: str
    revoked_at: str | None = None
    joined_from: str | None = None  # the first cycle it plays (its first submission's)

    @property
    def active(self) -> bool:
        return self.revoked_at is None


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _path(lake: Lake) -> Path:
    return lake.root / ENTRANTS_FILE


def _lock(lake: Lake) -> FileLock:
    path = lake.root / "_locks" / "entrants.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(path, timeout=30)


def entrants(lake: Lake) -> list[Entrant]:
    """Every entrant the season registered, revoked ones included."""
    try:
        raw = json.loads(_path(lake).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    return [Entrant(**e) for e in raw["entrants"]]


def _save(lake: Lake, items: list[Entrant]) -> None:
    write_text(_path(lake), json.dumps({"entrants": [asdict(e) for e in items]}, indent=2) + "\n")


def season_over(lake: Lake, season: SeasonConfig, now: pd.Timestamp) -> str | None:
    """Why the season is over at ``now`` - its final publication closed it, or no cycle of it
    is left after ``now`` -, else None."""
    closed = closed_at(lake)
    if closed is not None:
        return f"season {season.id} was closed at {closed} after its last cycle: it is over"
    if season.next_after(now) is None:
        return (f"season {season.id} has no cycle after {now.isoformat()}: it is over (its "
                f"last cycle was at {season.last.isoformat()})")
    return None


def add_entrant(lake: Lake, season: SeasonConfig, name: str, now: pd.Timestamp
                ) -> tuple[Entrant, str]:
    """Register ``name``; returns the entrant and its key (shown once, stored only hashed).
    Refused for a name that is not kebab-case or that the season already used, and once the
    season is over (:func:`season_over`)."""
    try:
        ContestantSpec(name=name, kind="entrant")
    except ValueError as exc:
        raise EntrantError(f"entrant name {name!r}: {exc}") from None
    over = season_over(lake, season, now)
    if over is not None:
        raise SeasonOver(f"{over}; it takes no new entrant: register it in the next season's "
                         "lake (arena season init)")
    with _lock(lake):
        items = entrants(lake)
        used = {e.name for e in items} | {k.contestant for k in Ledger(lake).records()}
        if roster_path(lake).is_file():
            used |= set(load_roster(roster_path(lake)).names)
        used |= {c.contestant for c in roster_changes(lake)}
        if name in used:
            raise EntrantError(f"the season already uses the name {name!r}: an entrant needs "
                               "a name of its own")
        key = KEY_PREFIX + secrets.token_urlsafe(32)
        entrant = Entrant(name, _digest(key), now.isoformat())
        _save(lake, [*items, entrant])
    return entrant, key


def revoke_entrant(lake: Lake, name: str, now: pd.Timestamp) -> Entrant:
    """Revoke ``name``'s key and drop its submissions still waiting for a cycle (its records
    stay; from now on it holds)."""
    with _lock(lake):
        items = entrants(lake)
        found = [e for e in items if e.name == name]
        if not found:
            raise EntrantError(f"no entrant {name!r} (arena entrant list shows them)")
        if not found[0].active:
            raise EntrantError(f"entrant {name!r} was revoked at {found[0].revoked_at}")
        revoked = replace(found[0], revoked_at=now.isoformat())
        _save(lake, [revoked if e.name == name else e for e in items])
        Inbox(lake.root).drop_pending(name, now)  # a leaked key's submissions never execute
    return revoked


def authenticate(lake: Lake, key: str | None) -> Entrant | None:
    """The active entrant whose key is ``key``, else None (compared in constant time)."""
    if not key:
        return None
    digest = _digest(key)
    for entrant in entrants(lake):
        if hmac.compare_digest(entrant.key_sha256, digest) and entrant.active:
            return entrant
    return None


def join(lake: Lake, season: SeasonConfig, name: str, cycle_at: pd.Timestamp,
         now: pd.Timestamp) -> RosterChange | None:
    """Make ``name`` a contestant of the season from the cycle at ``cycle_at`` (the one its
    first submission is for); None when it already is one."""
    with _lock(lake):
        items = entrants(lake)
        entrant = next((e for e in items if e.name == name), None)
        if entrant is None:
            raise EntrantError(f"no entrant {name!r}")
        if entrant.joined_from is not None:
            return None
        due = season.next_after(now)
        if due != cycle_at:
            raise EntrantError(f"entrant {name!r} can join from the next cycle "
                               f"({due.isoformat() if due is not None else 'none left'}), not "
                               f"{cycle_at.isoformat()}")
        try:
            [change] = add_entries(lake, season, [{"name": name, "kind": "entrant"}], now,
                                   f"entrant {name}")
        except (RosterError, SeasonConfigError) as exc:
            raise EntrantError(f"entrant {name!r} cannot join: {exc}") from exc
        _save(lake, [replace(e, joined_from=change.from_cycle) if e.name == name else e
                     for e in items])
    return change
