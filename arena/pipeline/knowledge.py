"""Knowledge cutoffs: which contestants may have read a season's outcome in their training data.

A language model has read the news and prices of every month before its training cutoff, so a
season played on real prices from before that cutoff tests its memory, not its judgement. A
model entry states its cutoff in the roster (``knowledge_cutoff: YYYY-MM``: the last month its
training data may hold), and the season is **contaminated** for the model when its first cycle
comes before the end of that month: some of what the model is asked to foresee may be in what
it read.

The rule, one place for the leaderboard mart, the site and the league's verdict:

* a season on the synthetic market is never contaminated: its prices are invented from a seed,
  so there is nothing to remember;
* nor is a season played blind (:mod:`arena.market.blind`) counted as contaminated: its prompts
  show neither the real names, nor the real dates, nor the real price levels (the market's
  shape - returns, the calendar's closed days - still shows, the remaining risk of blind play);
* a model that states no cutoff cannot be judged: not contaminated, and its reason says so;
* a contestant that calls no model (a house rule, an outside entrant) has no training data;
* a ``reverse`` trades its target's decisions, so it carries its target's contamination
  (``mirror_of: worst`` may mirror any model of the season: contaminated when one of them is).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from arena.agents.roster import ContestantSpec
from arena.pipeline.season_config import SeasonConfig

COLUMNS = ("contestant", "model", "knowledge_cutoff", "contaminated", "contamination")


@dataclass(frozen=True)
class Knowledge:
    """One contestant's knowledge against a season: its model and cutoff (None: none stated or
    no model), whether the season is contaminated for it, and why, in words."""

    contestant: str
    model: str | None
    knowledge_cutoff: str | None
    contaminated: bool
    contamination: str


def known_until(cutoff: str) -> dt.date:
    """The first day a model of ``cutoff`` (``YYYY-MM``) cannot have read: the first of the
    month after it."""
    year, month = (int(part) for part in cutoff.split("-"))
    return dt.date(year + month // 12, month % 12 + 1, 1)


def _own(spec: ContestantSpec, config: SeasonConfig, synthetic: bool) -> Knowledge:
    """What ``spec`` itself may know of the season (a reverse is resolved by its caller)."""
    def said(contaminated: bool, why: str) -> Knowledge:
        return Knowledge(spec.name, spec.model, spec.knowledge_cutoff, contaminated, why)

    if not spec.uses_model:
        return said(False, "calls no model: no training data to remember")
    if synthetic:
        return said(False, "synthetic market: invented prices, nothing to remember")
    if config.blind:
        return said(False, "played blind: no real name, date or price level was shown")
    if spec.knowledge_cutoff is None:
        return said(False, "no knowledge_cutoff stated: cannot be judged")
    first = config.first.date()
    if first < known_until(spec.knowledge_cutoff):
        return said(True, f"the season starts {first:%Y-%m-%d}, before the end of its "
                          f"knowledge cutoff {spec.knowledge_cutoff}")
    return said(False, f"the season starts {first:%Y-%m-%d}, after its knowledge cutoff "
                       f"{spec.knowledge_cutoff}")


def contamination(config: SeasonConfig, specs: Sequence[ContestantSpec]) -> list[Knowledge]:
    """Every contestant of ``specs`` against the season of ``config`` (see the module
    docstring), in the roster's order."""
    synthetic = config.synthetic
    own = {spec.name: _own(spec, config, synthetic) for spec in specs}
    out = []
    for spec in specs:
        known = own[spec.name]
        if spec.kind == "reverse":
            targets = ([k for k in own.values() if k.model is not None]
                       if spec.mirror_of == "worst" else
                       [own[spec.mirror_of]] if spec.mirror_of in own else [])
            tainted = [k.contestant for k in targets if k.contaminated]
            why = (f"mirrors {', '.join(tainted)}, for which the season is contaminated"
                   if tainted else
                   f"mirrors {spec.mirror_of}, for which the season is not contaminated")
            known = Knowledge(spec.name, None, None, bool(tainted), why)
        out.append(known)
    return out


def knowledge_frame(config: SeasonConfig | None, specs: Iterable[ContestantSpec]) -> pd.DataFrame:
    """The season's ``knowledge`` table (a row per contestant, :data:`COLUMNS`; written with
    its schema, :func:`~arena.pipeline.season_tables.store.knowledge_schema`); no rows for a lake
    replayed without a season config."""
    rows = [] if config is None else [asdict(k) for k in contamination(config, list(specs))]
    return pd.DataFrame(rows, columns=list(COLUMNS))
