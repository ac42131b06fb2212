"""Rivals and rulers: who competes in a season, and what it is measured against.

The **contestants** - models, the agents built on them (debate, researcher, reverse, replay)
and outside entrants - are ranked among themselves: places 1..n, the leader, the laggard, the
worst performer a reverse contestant mirrors. The **house rules** (kind ``house``: momentum,
mean reversion, trend following, equal weight, and random, the arena's own zero-skill player)
trade the same market under the same rules beside them as **rulers**: every contestant's result
is read against theirs, but a ruler is never ranked, never leads and is never "the worst".
Rulers stay in every table; they are shown apart, in a band of their own, labelled as rulers.

The role is told the same way wherever it is read:

* from a roster entry or a playing contestant, by its kind (:func:`role_of_kind`);
* from what a season recorded (the ledger, the marts), by its calls: a house rule records each
  answer as a call of model ``house/<strategy>`` (:data:`RULER_CALLS`), so a contestant with
  such a call is a ruler, and one without - a model, an agent, an entrant, or one that never
  answered - a contestant (:func:`role_of_calls`, :func:`recorded_role`). The leaderboard mart
  (``dbt_project/models/marts/leaderboard.sql``, column ``role``) reads its calls the same way.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from arena.ledger.store import Ledger

CONTESTANT, RULER = "contestant", "ruler"
ROLES = (CONTESTANT, RULER)  # the order of the bands: contestants first
RULER_KINDS = frozenset({"house"})  # the roster kinds that play as rulers
RULER_CALLS = "house/"  # how a ruler's recorded calls name their model: house/<strategy>


def role_of_kind(kind: str) -> str:
    """The role of a roster entry or a contestant of ``kind``."""
    return RULER if kind in RULER_KINDS else CONTESTANT


def role_of_calls(models: Iterable[object]) -> str:
    """The role the recorded calls of one contestant tell (their ``model`` values): a ruler
    when one of them is a house rule's; a contestant otherwise, and with no call at all."""
    return RULER if any(str(m).startswith(RULER_CALLS) for m in models) else CONTESTANT


def recorded_role(ledger: Ledger, contestant: str, at: pd.Timestamp | None = None) -> str:
    """The role ``contestant``'s records tell, from the calls of its latest record up to ``at``
    (any, when None) that has calls: one record read in the usual case (a forfeit records no
    call, so the one before it is read)."""
    for key in reversed(ledger.records(contestant)):
        if at is not None and key.cycle_at > at:
            continue
        calls = ledger.record_rows("calls", key.cycle_at, contestant)
        if calls:
            return role_of_calls(c["model"] for c in calls)
    return CONTESTANT

