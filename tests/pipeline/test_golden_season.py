"""The golden season replays with identical values (see :mod:`tests.golden`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.agents.factory import build_contestant
from arena.agents.roster import load_roster
from arena.core.sessions import daily_cycles
from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.data.providers.synthetic import SyntheticProvider
from arena.ledger.store import Ledger
from arena.market.sections import CLOSE
from arena.pipeline.season import replay_season
from tests.agents.openai_stub import OpenAIStub
from tests.golden import (
    GOLDEN_SEASON,
    assert_same_values,
    scripted_model,
    season_values,
    value_differences,
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "golden"


def replay_golden_season(folder: Path) -> dict:
    with OpenAIStub() as stub:
        stub.handler = scripted_model
        roster = folder / "roster.yaml"
        roster.write_text((FIXTURE / "roster.yaml").read_text(encoding="utf-8")
                          .replace("http://127.0.0.1:1/v1", stub.url), encoding="utf-8")
        runnable, skipped = load_roster(roster).available({})
        assert not skipped
        universe = load_universe().select(GOLDEN_SEASON["symbols"])
        lake = Lake(folder / "lake")
        # recorded when the prompts showed closes only (the layout such a season keeps)
        replay_season(SyntheticProvider(), universe, [build_contestant(s) for s in runnable],
                      daily_cycles(GOLDEN_SEASON["start"], GOLDEN_SEASON["days"]), lake=lake,
                      candles=CLOSE)
        return season_values(Ledger(lake))


# Contestants whose recorded values are no longer the reference (see the test's docstring).
CHANGED = {"random", "worst-reversed"}
NEW_TEXT = {"momentum-reversed"}  # only its answers' texts are no longer the reference


def _kept(rows: list[dict], table: str) -> list[dict]:
    return [r for r in rows if r.get("contestant") not in CHANGED
            and not (table == "responses" and r.get("contestant") in NEW_TEXT)]


@pytest.mark.slow
def test_the_golden_season_replays_with_identical_values(tmp_path):
    """Every table, value by value (floats to 1e-9: :func:`tests.golden.assert_same_values`),
    except the rows of the house ``random`` contestant and of ``worst-reversed``, and the answers
    of ``momentum-reversed``.

    The random contestant now plays the arena's zero-skill player
    (:func:`arena.scoring.arena_luck.zero_skill_answer`, default profile, arena rules) instead of
    the house's own random rule. Same seed (crc32 of name and cycle time) and probabilities (open
    0.3, close 0.1), but the draws are consumed in another order (the size before the level), a
    quarter of the closes are partial, the open is gated on the position limit and the cash left
    after the cycle's closes, and decisions carry a rationale. So its one trade of the season,
    the ADA long of 2025-11-29, has another size (91.7% of equity, was 22.3%) and level.

    A reverse now mirrors what its target's book executed over both rounds, not the target's
    first answer. ``worst-reversed`` mirrored the scripted model, whose first answer (a short
    ETH) is refused while it holds one and whose repair then closes ETH: it used to open the long
    of that refused short, it now mirrors the close. ``momentum-reversed``'s target never needs a repair:
    it trades as recorded, and only the text of its answers (their reasoning line and key
    order) is new, so its responses alone are left out. The standings ``worst-reversed`` picks
    the worst from now hold the contestants only (the house agents are rulers), so it mirrors
    the scripted model every day.
    """
    recorded = json.loads((FIXTURE / "season.json").read_text(encoding="utf-8"))
    replayed = replay_golden_season(tmp_path)
    assert replayed.keys() == recorded.keys()
    for table, rows in recorded.items():
        assert_same_values(_kept(replayed[table], table), _kept(rows, table))
    assert any(r.get("contestant") == "random" for r in replayed["equity"])


def test_the_comparison_tells_last_bits_from_real_differences():
    """The tolerance admits what a CPU family changes (the last bits of a float) and nothing
    a reader would see: a cent, a changed word, an int for a float, a missing row."""
    row = {"price": 405.88635657384674, "quantity": 5.385596942452325, "n": 3, "text": "a"}
    assert value_differences({**row, "price": 405.88635657384685}, row) == []
    assert value_differences({**row, "quantity": 5.385596942452324}, row) == []
    assert value_differences({**row, "price": 405.89}, row)  # a cent
    assert value_differences({**row, "price": 405.88635657384674 * (1 + 1e-8)}, row)
    assert value_differences({**row, "text": "b"}, row)
    assert value_differences({**row, "n": 4}, row)
    assert value_differences({**row, "n": True}, {**row, "n": 1})
    assert value_differences([row], [row, row])
    assert value_differences({"price": None}, {"price": 1.0})
