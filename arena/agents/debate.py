"""The debate contestant: three analysts in parallel, then a judge who answers the contract.

Bull (every bullish argument), bear (every bearish argument) and risk officer (only "is it safe
to trade now": LOW / MEDIUM / HIGH RISK, never a direction) read the same briefing at a higher
temperature (0.7 by default) and answer in free text, concurrently. The judge (0.2) sees the data
and all three opinions and answers the decision contract under the judge rules of SPEC §6 (HIGH
RISK means hold; buy or sell only when at least two of three agree on the direction; MEDIUM risk
with bull and bear disagreeing: the stronger argument). The whole transcript is kept in
``Reply.extra["debate"]`` for the ledger. The repair round continues the judge's conversation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from arena.agents.base import KeysStayBehind, Reply
from arena.agents.llm import Completion, RetryPolicy, complete, reply_from
from arena.agents.roster import ContestantSpec
from arena.core.types import Briefing, Message
from arena.market.prompts import Prompts

ANALYSTS = ("bull", "bear", "risk")
ANALYST_TEMPERATURE = 0.7
JUDGE_TEMPERATURE = 0.2


class DebateContestant(KeysStayBehind):
    """A roster contestant of kind ``debate`` (one model for every role)."""

    kind = "debate"

    def __init__(self, spec: ContestantSpec, *, env: Mapping[str, str] | None = None,
                 templates: Prompts | None = None, retry: RetryPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.spec, self.name = spec, spec.name
        self._env, self._retry, self._sleep = env, retry or RetryPolicy(), sleep
        self._prompts = templates or Prompts()

    def __repr__(self) -> str:
        return f"DebateContestant({self.name!r}, model={self.spec.model!r})"

    def _call(self, messages: tuple[Message, ...], role: str, temperature: float) -> Completion:
        return complete(self.spec, messages, role=role, env=self._env, retry=self._retry,
                        sleep=self._sleep, temperature=temperature)

    def answer(self, briefing: Briefing) -> Reply:
        sections: dict[str, Any] = dict(briefing.data["sections"])
        system = briefing.messages[0]
        asks = {role: (system, Message("user", self._prompts.render(f"debate_{role}", **sections)))
                for role in ANALYSTS}
        with ThreadPoolExecutor(max_workers=len(ANALYSTS)) as pool:
            futures = {role: pool.submit(self._call, msgs, role, ANALYST_TEMPERATURE)
                       for role, msgs in asks.items()}
            opinions = {role: f.result() for role, f in futures.items()}
        debate = {role: {"prompt": asks[role][1].content, "answer": opinions[role].text,
                         "error": opinions[role].error} for role in ANALYSTS}
        calls = tuple(opinions[r].record for r in ANALYSTS)
        failed = [r for r in ANALYSTS if opinions[r].text is None]
        if failed:
            return Reply(None, calls, error=f"analyst(s) {', '.join(failed)} gave no answer: "
                         + "; ".join(str(opinions[r].error) for r in failed),
                         extra={"debate": debate})
        judge_messages = (system, Message("user", self._prompts.render(
            "debate_judge", **sections, **{r: opinions[r].text for r in ANALYSTS})))
        verdict = self._call(judge_messages, "judge", JUDGE_TEMPERATURE)
        debate["judge"] = {"answer": verdict.text, "error": verdict.error}
        calls = (*calls, verdict.record)
        return reply_from(verdict, judge_messages, calls, {"debate": debate})

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        history = (*previous.transcript, Message("user", follow_up))
        return reply_from(self._call(history, "repair", JUDGE_TEMPERATURE), history)
