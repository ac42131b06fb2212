"""Rivals and rulers: who competes in a season, and what it is measured against.

The **contestants** - models, the agents built on them (debate, researcher, reverse, replay),
outside entrants, and every house strategy that is someone's own (a house entry with changed
parameters, such as a researcher's "momentum-fast", or one marked ``role: contestant``) - are
ranked among themselves: places 1..n, the leader, the laggard, the worst performer a reverse
contestant mirrors, one unit each in the verdict on skill. The **rulers** are the arena's own
rules at their defaults (kind ``house``: momentum, mean reversion, trend following, equal weight,
and random, the arena's own zero-skill player): they trade the same market under the same rules
beside the contestants, and every contestant's result is read against theirs, but a ruler is
never ranked, never leads and is never "the worst". Rulers stay in every table; they are shown
apart, in a band of their own, labelled as rulers.

The role is decided once, where the roster entry is read (:attr:`ContestantSpec.plays_as
<arena.agents.roster.ContestantSpec.plays_as>`, :func:`arena.agents.house.house_role`), and
recorded with every answer in the call's model label (:func:`arena.agents.house.house_label`),
so it is read the same way wherever it is read:

* from a roster entry, by that decision (:func:`role_of`);
* from what a season recorded (the ledger, the marts), by its calls: a ruler's label is exactly
  ``house/<strategy>`` (:data:`RULER_LABEL`), so a contestant with such a call is a ruler, and
  one without - a model, an agent, an entrant, a house variant (``house/momentum(...)``), or one
  that never answered - a contestant (:func:`role_of_calls`, :func:`recorded_role`). The
  leaderboard mart (``dbt_project/models/marts/leaderboard.sql``, column ``role``) reads its
  calls with the same pattern.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from arena.agents.house import CONTESTANT, ROLES, RULER, RULER_LABEL, house_role, label_role
from arena.agents.roster import ContestantSpec
from arena.ledger.store import Ledger

__all__ = ["CONTESTANT", "ROLES", "RULER", "RULER_LABEL", "recorded_role", "role_of",
           "role_of_calls", "role_of_kind"]


def role_of(spec: ContestantSpec) -> str:
    """The role the roster entry ``spec`` plays (:attr:`ContestantSpec.plays_as`)."""
    return spec.plays_as


def role_of_kind(kind: str) -> str:
    """The role an entry of ``kind`` plays at its defaults, unmarked (a house rule: a ruler).
    It cannot see a house entry's parameters or its ``role:``: read an entry with
    :func:`role_of`."""
    return house_role(None) if kind == "house" else CONTESTANT


def role_of_calls(models: Iterable[object]) -> str:
    """The role the recorded calls of one contestant tell (their ``model`` values): a ruler
    when one of them is a ruler's label (:func:`arena.agents.house.label_role`); a contestant
    otherwise, and with no call at all."""
    return RULER if any(label_role(m) == RULER for m in models) else CONTESTANT


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
