"""The outside entrant: an agent built elsewhere that plays through the arena's MCP server.

It submits its answers before the cycle (``submit_decision``, checked at once as a dry run; it
may submit again until the deadline). The submissions wait in the season's inbox, stamped with
the server's time; at the cycle, :class:`EntrantContestant` answers with the last one that came
before the cycle's time (one the contract cannot read is refused when it is submitted:
:func:`unreadable`), and the engine parses, validates and executes it exactly as it does a
model's answer. No submission is a hold (an empty ``decisions`` list). The entrant's repair
round was its dry runs: at the cycle the engine's judgement is final.

Layout (under the lake root)::

    season/inbox/<entrant>/<cycle yyyymmddTHHMM>/<received ns>.json   {"received_at", "answer"}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from arena.agents.base import Reply
from arena.core.types import Briefing, CallRecord, Message
from arena.data.lake import write_text
from arena.engine.contract import MalformedDecision, parse_answer

INBOX_DIR = Path("season") / "inbox"
HOLD = '{"decisions": []}'
KEPT_PER_CYCLE = 20  # submissions kept for one cycle: the oldest beyond go (the last counts)
NO_REPAIR = ("an outside entrant repairs before the deadline (its dry runs); at the cycle the "
             "engine's judgement is final")


@dataclass(frozen=True)
class Submission:
    entrant: str
    cycle_at: pd.Timestamp
    received_at: pd.Timestamp
    answer: str
    path: Path


class Inbox:
    """The submissions of the season's outside entrants, one file each, never overwritten."""

    def __init__(self, lake_root: Path) -> None:
        self.root = Path(lake_root) / INBOX_DIR

    def _folder(self, entrant: str, cycle_at: pd.Timestamp) -> Path:
        return self.root / entrant / f"{cycle_at.tz_convert('UTC'):%Y%m%dT%H%M}"

    def put(self, entrant: str, cycle_at: pd.Timestamp, received_at: pd.Timestamp,
            answer: str) -> Submission:
        """Keep one submission for the cycle at ``cycle_at`` (received before it)."""
        if received_at >= cycle_at:
            raise ValueError(f"a submission received at {received_at.isoformat()} is too late "
                             f"for the cycle of {cycle_at.isoformat()}")
        folder = self._folder(entrant, cycle_at)
        path = folder / f"{received_at.value:020d}.json"
        write_text(path, json.dumps({"received_at": received_at.isoformat(), "answer": answer}))
        for old in sorted(folder.glob("*.json"))[:-KEPT_PER_CYCLE]:
            old.unlink(missing_ok=True)
        return Submission(entrant, cycle_at, received_at, answer, path)

    def drop_pending(self, entrant: str, after: pd.Timestamp) -> int:
        """Remove the entrant's submissions for cycles after ``after`` (a revoked key's: none
        of them executes); returns how many."""
        folder = self.root / entrant
        dropped = 0
        for cycle in sorted(folder.iterdir()) if folder.is_dir() else []:
            try:
                at = pd.Timestamp(cycle.name).tz_localize("UTC")
            except ValueError:
                continue
            if at > after:
                for path in cycle.glob("*.json"):
                    path.unlink(missing_ok=True)
                    dropped += 1
        return dropped

    def submissions(self, entrant: str, cycle_at: pd.Timestamp) -> list[Submission]:
        """The entrant's submissions for the cycle at ``cycle_at``, oldest first."""
        out = []
        for path in sorted(self._folder(entrant, cycle_at).glob("*.json")):
            raw = json.loads(path.read_text(encoding="utf-8"))
            received = pd.Timestamp(raw["received_at"])
            if received < cycle_at:  # the deadline is the cycle's time, whatever a file says
                out.append(Submission(entrant, cycle_at, received, str(raw["answer"]), path))
        return out

    def last(self, entrant: str, cycle_at: pd.Timestamp) -> Submission | None:
        """The submission that executes: the last one the contract can read (an inbox written
        before submissions were checked may hold others; they never replace a valid one)."""
        readable = [k for k in self.submissions(entrant, cycle_at) if unreadable(k.answer) is None]
        return readable[-1] if readable else None

def unreadable(answer: object) -> str | None:
    """Why the decision contract cannot read ``answer`` (a parse failure, or each decision it
    cannot read), None when it can. Such a submission is refused, never kept: kept, it would
    replace the entrant's last valid one and execute as a hold (or a partial answer). A decision
    that reads but breaks a rule is kept: the engine judges it at the cycle, on the cycle's
    prices."""
    if not isinstance(answer, str) or not answer.strip():
        return "the answer is empty"
    parsed = parse_answer(answer)
    if not parsed.ok:
        return parsed.reason
    problems = [d.problem if d.problem.startswith("decision ") else f"decision {i}: {d.problem}"
                for i, d in enumerate(parsed.answer.decisions)
                if isinstance(d, MalformedDecision)]
    return "; ".join(problems) or None


class EntrantContestant:
    """Answers a cycle with the entrant's last submission before it (see the module)."""

    kind = "entrant"

    def __init__(self, name: str, lake_root: Path) -> None:
        self.name = name
        self.inbox = Inbox(lake_root)

    def __repr__(self) -> str:
        return f"EntrantContestant({self.name!r})"

    def answer(self, briefing: Briefing) -> Reply:
        last = self.inbox.last(self.name, briefing.at)
        text = HOLD if last is None else last.answer
        record = CallRecord(self.name, "decision", "entrant/inbox", 0, 0, 0.0, 0.0)
        extra = {"inbox": "no submission before the deadline: a hold" if last is None else
                 f"submitted at {last.received_at.isoformat()}"}
        return Reply(text, (record,), (*briefing.messages, Message("assistant", text)),
                     extra=extra)

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        del briefing, follow_up
        return Reply(None, (), previous.transcript, error=NO_REPAIR)
