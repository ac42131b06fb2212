"""The entrant's inbox: the submission that executes is the last one the decision contract can
read, so an unreadable one - refused at submission, or left by an older server - never replaces
a valid one."""

from __future__ import annotations

import pandas as pd

from arena.agents.entrant import HOLD, Inbox, unreadable

CYCLE = pd.Timestamp("2025-11-26 16:00", tz="UTC")
VALID = ('{"decisions": [{"action": "open_long", "symbol": "ETH", "percent_of_equity": 20, '
         '"invalidation_price": 2800, "confidence": 0.8, "thesis": "t", "invalidation": "i"}]}')


def test_the_last_readable_submission_executes(tmp_path):
    inbox = Inbox(tmp_path)
    inbox.put("alice", CYCLE, CYCLE - pd.Timedelta(hours=3), VALID)
    inbox.put("alice", CYCLE, CYCLE - pd.Timedelta(hours=2), "not json at all")
    inbox.put("alice", CYCLE, CYCLE - pd.Timedelta(hours=1), '{"decisions": [{"symbol": 3}]}')
    assert len(inbox.submissions("alice", CYCLE)) == 3
    assert inbox.last("alice", CYCLE).answer == VALID
    assert inbox.last("bob", CYCLE) is None


def test_what_the_contract_cannot_read_is_named():
    assert unreadable(VALID) is None and unreadable(HOLD) is None
    assert unreadable("") == "the answer is empty"
    assert unreadable("not json at all") is not None
    assert unreadable('{"decisions": [{"symbol": 3}]}').startswith("decision 0")
    rule_broken = VALID.replace('"confidence": 0.8', '"confidence": 0.1')
    assert unreadable(rule_broken) is None  # read; the engine judges it at the cycle
