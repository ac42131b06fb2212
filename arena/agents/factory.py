"""Contestant objects from roster specs (one place that knows every kind)."""

from __future__ import annotations

from collections.abc import Mapping

from arena.agents.base import Contestant, Reply
from arena.agents.reverse import mirror_answer
from arena.agents.roster import ContestantSpec
from arena.core.types import Briefing, CallRecord, Message


class ReverseContestant:
    """Mirrors another contestant's first answer of the same cycle (``source`` is set by the
    cycle before this contestant plays; no model call)."""

    kind = "reverse"

    def __init__(self, spec: ContestantSpec) -> None:
        self.spec, self.name = spec, spec.name
        self.mirror_of = spec.mirror_of

    def answer_from(self, briefing: Briefing, source: str | None) -> Reply:
        if source is None:
            return Reply.skip(f"skipped: {self.mirror_of} gave no answer to mirror this cycle")
        prices = {r["symbol"]: r["price"] for r in briefing.data["market"]["table"] if r["price"]}
        text = mirror_answer(source, prices)
        record = CallRecord(self.name, "decision", f"reverse/{self.mirror_of}", 0, 0, 0.0, 0.0)
        return Reply(text, (record,), (*briefing.messages, Message("assistant", text)))

    def answer(self, briefing: Briefing) -> Reply:  # pragma: no cover - the cycle calls answer_from
        raise RuntimeError("a reverse contestant answers through answer_from (its source first)")

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        """The mirrored answer cannot be reconsidered: the repair holds (an empty answer)."""
        text = '{"reasoning": "mirror: no repair", "decisions": []}'
        return Reply(text, (CallRecord(self.name, "repair", f"reverse/{self.mirror_of}"),),
                     (*previous.transcript, Message("user", follow_up), Message("assistant", text)))


def build_contestant(spec: ContestantSpec, *, env: Mapping[str, str] | None = None) -> Contestant:
    """The contestant object of a runnable roster entry."""
    if spec.kind == "house":
        from arena.agents.house import HouseContestant

        return HouseContestant(spec.name, spec.strategy or "")
    if spec.kind == "llm":
        from arena.agents.llm import LLMContestant

        return LLMContestant(spec, env=env)
    if spec.kind == "debate":
        from arena.agents.debate import DebateContestant

        return DebateContestant(spec, env=env)
    if spec.kind == "researcher":
        from arena.agents.researcher import ResearcherContestant

        return ResearcherContestant(spec, env=env)
    if spec.kind == "reverse":
        return ReverseContestant(spec)
    if spec.kind == "replay":
        from arena.agents.replay import ReplayContestant

        return ReplayContestant(spec.name, spec.ledger_source or "")
    raise ValueError(f"contestant {spec.name!r}: kind {spec.kind!r} cannot play a live cycle yet")
