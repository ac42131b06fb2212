"""Contestant objects from roster specs (one place that knows every kind)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from arena.agents.base import Contestant
from arena.agents.debate import DebateContestant
from arena.agents.entrant import EntrantContestant
from arena.agents.house import HouseContestant
from arena.agents.llm import LLMContestant
from arena.agents.replay import ReplayContestant
from arena.agents.researcher import ResearcherContestant
from arena.agents.reverse import ReverseContestant
from arena.agents.roster import ContestantSpec, Skipped, load_roster


def build_contestant(spec: ContestantSpec, *, env: Mapping[str, str] | None = None,
                     lake_root: Path | None = None) -> Contestant:
    """The contestant object of a runnable roster entry (an outside entrant plays from the
    inbox of the season's lake at ``lake_root``)."""
    if spec.kind == "house":
        return HouseContestant(spec.name, spec.strategy or "", params=spec.strategy_params,
                               role=spec.role)
    if spec.kind == "llm":
        return LLMContestant(spec, env=env)
    if spec.kind == "debate":
        return DebateContestant(spec, env=env)
    if spec.kind == "researcher":
        return ResearcherContestant(spec, env=env)
    if spec.kind == "reverse":
        return ReverseContestant(spec)
    if spec.kind == "replay":
        return ReplayContestant(spec.name, spec.ledger_source or "")
    if spec.kind == "entrant":
        if lake_root is None:
            raise ValueError(f"contestant {spec.name!r}: an outside entrant plays only in a "
                             "season's lake (its inbox)")
        return EntrantContestant(spec.name, lake_root)
    raise ValueError(f"contestant {spec.name!r}: kind {spec.kind!r} cannot play a live cycle yet")


def contestants_from_roster(path: str | Path | None, env: Mapping[str, str]
                            ) -> tuple[list[Contestant], list[Skipped]]:
    """The contestants of the roster at ``path`` (default: the shipped one) that can play with
    the keys in ``env``, and the entries skipped with their reasons."""
    runnable, skipped = load_roster(path).available(env)
    return [build_contestant(spec, env=env) for spec in runnable], skipped
