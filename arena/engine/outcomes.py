"""The outcome of a recorded cycle: one vocabulary for the ledger, the marts, the CLI and reports.

Every (cycle, contestant) record of the ledger has exactly one outcome:

* ``traded`` - an answer was read and at least one fill executed (first round or repair);
* ``no_trade`` - an answer was read and nothing filled: holds, an empty ``decisions`` list, or
  every decision rejected (a hold that moves a level is not a trade);
* ``forfeited`` - no answer could be read, the repair round included (an empty or unparseable
  answer twice, or an unparseable answer whose repair call failed);
* ``skipped`` - the contestant did not play this cycle for a reason outside the game: a reverse
  contestant with nothing to mirror, a replayed contestant with no recorded answer.

An **operational failure** (the model never answered: connection refused, timeout, a provider
error after retries) is not an outcome: nothing is recorded, so a later run can play the cycle;
the cycle reports it as :data:`FAILED` and it must never look green.
"""

from __future__ import annotations

from enum import StrEnum


class CycleOutcome(StrEnum):
    TRADED = "traded"
    NO_TRADE = "no_trade"
    FORFEITED = "forfeited"
    SKIPPED = "skipped"


OUTCOMES = tuple(o.value for o in CycleOutcome)
FAILED = "failed"  # not an outcome of the ledger: the cycle of this contestant was not recorded


def played(fills: int) -> CycleOutcome:
    """The outcome of a cycle whose answer was read, by its number of fills."""
    return CycleOutcome.TRADED if fills > 0 else CycleOutcome.NO_TRADE
