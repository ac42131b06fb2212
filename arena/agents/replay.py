"""The replay contestant: answers with the raw answers a contestant gave in a recorded season.

A past season re-runs without any model call (reproducible re-scoring): the engine parses,
validates and executes the recorded answer exactly as the first time, and a repair follow-up is
answered with the recorded repair answer. ``ledger_source`` in the roster is a lake root, with
``#name`` to replay another contestant's record (default: the replay contestant's own name).
"""

from __future__ import annotations

from pathlib import Path

from arena.agents.base import Reply
from arena.core.types import Briefing, CallRecord, Message
from arena.ledger.records import ANSWER, REPAIR
from arena.ledger.store import Ledger


def parse_source(source: str, default_name: str) -> tuple[Path, str]:
    """``"data_lake#gpt-mini"`` -> (Path("data_lake"), "gpt-mini")."""
    root, _, name = source.partition("#")
    return Path(root), (name or default_name)


class ReplayContestant:
    kind = "replay"

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        root, self.source_name = parse_source(source, name)
        self.ledger = Ledger(root)

    def __repr__(self) -> str:
        return f"ReplayContestant({self.name!r}, from {self.source_name!r} in {self.ledger.dir})"

    def _recorded(self, briefing: Briefing, round_name: str,
                  history: tuple[Message, ...]) -> Reply:
        try:
            text = self.ledger.responses(self.source_name, briefing.at).get(round_name)
        except KeyError:
            text = None
        record = CallRecord(self.name, "decision" if round_name == ANSWER else "repair",
                            f"replay/{self.source_name}", 0, 0, 0.0, 0.0)
        if text is None:
            reason = f"no recorded {round_name} of {self.source_name} at {briefing.at.isoformat()}"
            if round_name == ANSWER:  # nothing to replay: this contestant does not play the cycle
                return Reply.skip(f"skipped: {reason}", (record,), history)
            return Reply(None, (record,), history, error=reason)
        return Reply(text, (record,), (*history, Message("assistant", text)))

    def answer(self, briefing: Briefing) -> Reply:
        return self._recorded(briefing, ANSWER, tuple(briefing.messages))

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        return self._recorded(briefing, REPAIR,
                              (*previous.transcript, Message("user", follow_up)))
