"""Knowledge cutoffs: a season of real prices that starts before the end of a model's cutoff
month is contaminated for it; a synthetic one never is; a reverse carries its target's. Every
case is decided by hand from the dates."""

from __future__ import annotations

import pytest

from arena.agents.roster import RosterError, parse_roster
from arena.pipeline.knowledge import contamination, knowledge_frame, known_until
from arena.pipeline.season_config import default_providers, make_season

ROSTER = """
version: 1
contestants:
  - {name: old, kind: llm, model: openai/old, api_key_env: K, knowledge_cutoff: 2024-10}
  - {name: new, kind: llm, model: openai/new, api_key_env: K, knowledge_cutoff: "2025-06"}
  - {name: unstated, kind: llm, model: openai/u, api_key_env: K}
  - {name: momentum, kind: house, strategy: momentum}
  - {name: anti-new, kind: reverse, mirror_of: new}
  - {name: anti-old, kind: reverse, mirror_of: old}
  - {name: anti-worst, kind: reverse, mirror_of: worst}
"""


def _season(start: str, market: str = "yfinance"):
    return make_season(start, 28, ("SPY", "AAPL", "BTC"),
                       providers=default_providers(market, market))


def _by_name(start: str, market: str = "yfinance") -> dict[str, tuple[bool, str]]:
    return {k.contestant: (k.contaminated, k.contamination)
            for k in contamination(_season(start, market), list(parse_roster(ROSTER)))}


def test_the_cutoff_month_is_known_to_its_last_day():
    assert str(known_until("2024-10")) == "2024-11-01"
    assert str(known_until("2024-12")) == "2025-01-01"  # the year turns


@pytest.mark.parametrize(("start", "old", "new"), [
    ("2024-10-31", True, True),   # the cutoff month's last day: still inside it
    ("2024-11-01", False, True),  # the first day after the cutoff month
    ("2025-06-30", False, True),
    ("2025-07-01", False, False),
])
def test_a_real_season_is_contaminated_when_it_starts_before_the_end_of_the_cutoff(start, old,
                                                                                 new):
    got = _by_name(start)
    assert (got["old"][0], got["new"][0]) == (old, new)
    assert got["anti-old"][0] is old and got["anti-new"][0] is new  # a reverse carries it
    assert got["anti-worst"][0] is (old or new)  # it may mirror either model
    assert got["unstated"] == (False, "no knowledge_cutoff stated: cannot be judged")
    assert got["momentum"][0] is False
    if old:
        assert got["old"][1] == (f"the season starts {start}, before the end of its knowledge "
                                 "cutoff 2024-10")


def test_a_synthetic_season_is_never_contaminated():
    got = _by_name("2020-01-01", market="synthetic")
    assert not any(contaminated for contaminated, _ in got.values())
    assert got["old"][1] == "synthetic market: invented prices, nothing to remember"


def test_a_blind_season_of_real_prices_is_not_contaminated_where_the_open_one_is():
    """The same window: open, both models are contaminated; blind, neither is."""
    assert _by_name("2024-10-01")["old"][0] is True
    season = make_season("2024-10-01", 28, ("SPY", "AAPL", "BTC"),
                         providers=default_providers("yfinance", "yfinance"), blind=True)
    got = {k.contestant: (k.contaminated, k.contamination)
           for k in contamination(season, list(parse_roster(ROSTER)))}
    assert not any(contaminated for contaminated, _ in got.values())
    assert got["old"][1] == got["new"][1] == ("played blind: no real name, date or price level "
                                              "was shown")


def test_the_table_has_a_row_per_contestant_and_none_without_a_season():
    frame = knowledge_frame(_season("2024-11-01"), parse_roster(ROSTER))
    assert list(frame["contestant"]) == [s.name for s in parse_roster(ROSTER)]
    assert frame.set_index("contestant").loc["old", "knowledge_cutoff"] == "2024-10"
    assert knowledge_frame(None, parse_roster(ROSTER)).empty


@pytest.mark.parametrize(("entry", "problem"), [
    ("{name: m, kind: llm, model: openai/m, api_key_env: K, knowledge_cutoff: 2024-13}",
     "must be a month, YYYY-MM"),
    ("{name: m, kind: llm, model: openai/m, api_key_env: K, knowledge_cutoff: 2024-10-01}",
     "must be a month, YYYY-MM"),
    ("{name: m, kind: house, strategy: momentum, knowledge_cutoff: 2024-10}",
     "knowledge_cutoff: not used by kind house"),
])
def test_a_cutoff_that_is_no_month_or_on_a_rule_is_refused_at_load(entry, problem):
    with pytest.raises(RosterError, match=problem):
        parse_roster(f"version: 1\ncontestants:\n  - {entry}\n")


def test_replicates_of_a_model_carry_its_cutoff():
    roster = parse_roster("version: 1\ncontestants:\n  - {name: m, kind: llm, model: openai/m, "
                          "api_key_env: K, knowledge_cutoff: 2024-10, replicates: 2}\n")
    assert [s.knowledge_cutoff for s in roster] == ["2024-10", "2024-10"]
