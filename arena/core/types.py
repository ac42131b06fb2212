"""Types every stage shares: the briefing a contestant receives, conversation messages and the
record of a model call. Plain frozen values, no behaviour beyond formatting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd


@dataclass(frozen=True)
class CallRecord:
    """One model call (or one house-agent computation). Tokens and cost are ``None`` when unknown;
    ``cost_usd`` is in US dollars, ``latency_s`` in seconds; ``queue_s`` the seconds the call
    waited before it was sent (for a thread of the cycle's fan-out and its provider's slot).
    ``seed`` and ``temperature`` are the sampling parameters the call sent (None: none sent, the
    provider's default); ``replicate_of`` names the replicated model entry a contestant is an
    instance of (None: not a replicate)."""

    contestant: str
    role: str  # "decision", "repair", "bull", "bear", "risk", "judge", "researcher", ...
    model: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float = 0.0
    cost_usd: float | None = None
    retries: int = 0
    error: str | None = None
    queue_s: float = 0.0
    seed: int | None = None
    temperature: float | None = None
    replicate_of: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Message:
    role: str  # "system", "user", "assistant", "tool"
    content: str


class Charts(Protocol):
    """The bars behind a cycle's market, for a contestant whose tools look further than its
    briefing: any asset of the universe, only bars closed by the cycle time."""

    def candles(self, symbol: str, interval: str, count: int) -> pd.DataFrame:
        """The last ``count`` ``interval`` bars of ``symbol`` closed by the cycle time, oldest
        first (the lake's bar columns: ``timestamp`` - the open time -, ``open``, ``high``,
        ``low``, ``close``, ``volume``)."""
        ...


@dataclass(frozen=True)
class Briefing:
    """Everything a contestant may see at one cycle: identical for all contestants except
    ``portfolio`` (its own). ``messages`` is the rendered prompt (system + user).

    A contestant that answers from the others' plays (a reverse; it plays after them) also
    gets ``earlier``: by name, the decisions each one's book executed this cycle, both rounds, in
    the order the engine applied them (JSON objects of the contract, each with its ``round``;
    a contestant recorded without an answer is left out); and ``standings``, each one's equity
    at its last cycle before this one; for every other contestant both are empty. ``charts``
    (when the cycle gives them) reads the closed bars of any asset as of ``at``."""

    at: pd.Timestamp
    contestant: str
    data: Mapping[str, Any]
    messages: tuple[Message, ...]
    portfolio: Mapping[str, Any] = field(default_factory=dict)
    earlier: Mapping[str, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    standings: Mapping[str, float] = field(default_factory=dict)
    charts: Charts | None = field(default=None, compare=False, repr=False)

    @property
    def prompt_text(self) -> str:
        return "\n\n".join(m.content for m in self.messages)
