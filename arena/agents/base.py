"""The one contestant interface.

A contestant receives a :class:`Briefing` (the structured data of the cycle and the rendered
prompt) and returns a :class:`Reply`: the raw text answer, plus a :class:`CallRecord` for every
model call it made. The engine then parses, validates and executes the answer; when a repair is
due it calls :meth:`Contestant.repair` exactly once with the follow-up text, and the contestant
continues the same conversation.

Three kinds of reply:

* an **answer**: ``text`` is what the model said, exactly, even when it is empty (``""``) or not
  valid Unicode; parsing it is the engine's job (an empty answer gets the repair round);
* an **operational failure**: ``text`` is ``None`` and ``error`` says why (the model was never
  reached, or did not answer: connection refused, timeout, an error after retries). A contestant
  never raises for a failed model call; the cycle records nothing for it and reports it failed;
* a **skip** (:meth:`Reply.skip`): the contestant does not play this cycle for a reason outside
  the game (nothing to mirror, no recorded answer to replay); recorded as ``skipped``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from arena.core.types import Briefing, CallRecord, Message


@dataclass(frozen=True)
class Reply:
    """A contestant's raw answer. ``transcript`` holds every message of the conversation so far
    (for the ledger and for the repair round); ``text`` is ``None`` when no answer came back
    (``error`` says why; ``skipped`` when the contestant does not play this cycle)."""

    text: str | None
    calls: tuple[CallRecord, ...] = ()
    transcript: tuple[Message, ...] = ()
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # debate transcript, tool calls, ...
    skipped: bool = False

    @classmethod
    def skip(cls, reason: str, calls: tuple[CallRecord, ...] = (),
             transcript: tuple[Message, ...] = ()) -> Reply:
        """The contestant does not play this cycle (``reason`` is recorded)."""
        return cls(None, calls, transcript, error=reason, skipped=True)


@runtime_checkable
class Contestant(Protocol):
    """Every contestant kind (llm, debate, researcher, reverse, house, replay)."""

    name: str
    kind: str

    def answer(self, briefing: Briefing) -> Reply:
        """The cycle's answer to ``briefing`` (never raises for a failed model call)."""
        ...

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        """One follow-up in the same conversation, after ``previous`` was rejected or unparseable."""
        ...


def plays_after_others(contestant: Contestant) -> bool:
    """Whether ``contestant`` answers from the others' answers of the same cycle (``follows``):
    it plays after them, and its briefing carries their answers and the standings."""
    return bool(getattr(contestant, "follows", False))


class KeysStayBehind:
    """A model contestant sent to another process (a Dask worker) leaves the environment it was
    given - every key in it - behind, and there reads the keys of the process it runs in (so the
    ledger's check for keys in a record sees the keys the calls used). A Dask worker therefore
    needs the roster's key variables in its own environment."""

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_env": None}

