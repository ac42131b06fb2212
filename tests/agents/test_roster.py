"""The roster: validated at load into frozen objects, secrets refused, skipping without credentials."""

from __future__ import annotations

import re
import textwrap

import pydantic
import pytest

from arena.agents.roster import (
    DEFAULT_ROSTER,
    HOUSE_STRATEGIES,
    ContestantSpec,
    RosterError,
    Skipped,
    is_loopback,
    load_roster,
    parse_roster,
)


def roster_text(body: str) -> str:
    return "contestants:\n" + textwrap.indent(textwrap.dedent(body), "  ")


def problems_of(text: str, source: str = "test.yaml") -> str:
    with pytest.raises(RosterError) as info:
        parse_roster(text, source)
    return str(info.value)


LLM = """\
- name: gpt-mini
  kind: llm
  model: openai/gpt-4o-mini
  api_key_env: OPENAI_API_KEY
  params: {temperature: 0.2, max_tokens: 4000, timeout: 60, num_retries: 2}
"""


def test_committed_roster_runs_offline():
    roster = load_roster()
    assert roster.source == str(DEFAULT_ROSTER)
    assert {s.kind for s in roster} == {"house"}
    assert {s.strategy for s in roster} == HOUSE_STRATEGIES
    runnable, skipped = roster.available({})
    assert len(runnable) == len(roster) == 5 and skipped == ()
    assert roster["mean-reversion"].strategy == "mean_reversion"


def test_commented_examples_in_the_committed_roster_are_valid():
    """Uncommenting the examples gives a valid roster (they must not rot)."""
    text = re.sub(r"(?m)^  # ", "  ", DEFAULT_ROSTER.read_text())
    roster = parse_roster(text, "uncommented")
    kinds = {s.name: s.kind for s in roster}
    assert kinds["gpt-4o-mini"] == "llm" and kinds["gpt-4o-mini-reversed"] == "reverse"
    local = roster["local-model"]
    assert local.is_local and local.api_key_env is None and local.prices is not None
    runnable, skipped = roster.available({})
    assert {s.name for s in runnable} >= {"local-model", "momentum"}
    reasons = {s.name: s.reason for s in skipped}
    assert reasons["gpt-4o-mini"] == "skipped: OPENAI_API_KEY is not set"
    assert reasons["claude-sonnet"] == "skipped: ANTHROPIC_API_KEY is not set"
    assert reasons["gpt-4o-mini-reversed"] == (
        "skipped: mirrors gpt-4o-mini, which is skipped (OPENAI_API_KEY is not set)")
    fast, patient = roster["momentum-fast"], roster["momentum-patient"]
    assert fast.strategy == patient.strategy == "momentum"
    assert fast.strategy_params != patient.strategy_params
    assert fast.strategy_params.entry_lookback == 10 and patient.strategy_params.stop_pct == 10


def test_committed_house_agents_take_no_parameters():
    """The default roster plays the house strategies as they always played (every default)."""
    assert all(s.strategy_params is None for s in load_roster())


def test_specs_are_frozen():
    roster = parse_roster(roster_text(LLM))
    spec = roster["gpt-mini"]
    with pytest.raises(pydantic.ValidationError):
        spec.model = "openai/other"  # type: ignore[misc]
    with pytest.raises(pydantic.ValidationError):
        spec.params.timeout = 1  # type: ignore[misc]
    assert isinstance(roster.contestants, tuple)
    assert spec.params.timeout == 60 and spec.params.num_retries == 2


def test_skipped_without_credentials_with_the_reason():
    roster = parse_roster(roster_text(LLM + """\
- name: local
  kind: llm
  model: openai/local-model
  api_base: http://127.0.0.1:8000/v1
- name: momentum
  kind: house
  strategy: momentum
"""))
    runnable, skipped = roster.available({"OPENAI_API_KEY": ""})
    assert [s.name for s in runnable] == ["local", "momentum"]
    assert skipped == (Skipped(roster["gpt-mini"], "skipped: OPENAI_API_KEY is not set"),)
    assert str(skipped[0]) == "gpt-mini: skipped: OPENAI_API_KEY is not set"

    runnable, skipped = roster.available({"OPENAI_API_KEY": "anything"})
    assert len(runnable) == 3 and skipped == ()


def test_malformed_roster_names_file_contestant_and_field():
    message = problems_of(roster_text("""\
- name: gpt-mini
  kind: llm
  model: openai/gpt-4o-mini
  api_key_env: OPENAI_API_KEY
  params: {temperature: 5, timeout: -1}
"""))
    assert "test.yaml: contestant 'gpt-mini' (#1): params.temperature:" in message
    assert "test.yaml: contestant 'gpt-mini' (#1): params.timeout:" in message


@pytest.mark.parametrize(("body", "expected"), [
    ("- {name: Bad_Name, kind: house, strategy: momentum}", "'Bad_Name' (#1): name: must be kebab-case"),
    ("- {name: a, kind: oracle}", "'a' (#1): kind:"),
    ("- {name: a, kind: llm, api_key_env: K}", "'a' (#1): model: required for kind llm"),
    ("- {name: a, kind: llm, model: openai/x}", "'a' (#1): api_key_env: required unless api_base"),
    ("- {name: a, kind: house, strategy: momentun}", "'a' (#1): strategy: unknown house strategy"),
    ("- {name: a, kind: house, strategy: momentum, model: openai/x}", "'a' (#1): model: not used by kind house"),
    ("- {name: a, kind: reverse}", "'a' (#1): mirror_of: required for kind reverse"),
    ("- {name: a, kind: reverse, mirror_of: b}", "'a' (#1): mirror_of: no contestant named 'b'"),
    ("- {name: a, kind: reverse, mirror_of: a}", "'a' (#1): mirror_of: cannot mirror itself"),
    ("- {name: a, kind: replay}", "'a' (#1): ledger_source: required for kind replay"),
    ("- {name: a, kind: house, strategy: momentum, colour: red}", "'a' (#1): colour: Extra inputs are not permitted"),
    ("- {name: a, kind: house, strategy: momentum, strategy_params: {size_pct: 5}}",
     "'a' (#1): strategy_params.size_pct: 5 refused: size_pct takes a number from 10 to 100"),
    ("- {name: a, kind: house, strategy: random, strategy_params: {size_pct: 20}}",
     "'a' (#1): strategy_params: strategy random takes no parameters"),
    ("- {name: a, kind: reverse, mirror_of: worst, strategy_params: {size_pct: 20}}",
     "'a' (#1): strategy_params: not used by kind reverse (only by house)"),
    ("- {name: a, kind: llm, model: openai/x, api_base: 'ftp://h/v1'}", "'a' (#1): api_base: must be an http(s) URL"),
    ("- {name: a, kind: llm, model: m, api_key_env: 'MY KEY'}", "'a' (#1): api_key_env: must be the NAME"),
    ("- {kind: house, strategy: momentum}", "contestant #1: name: Field required"),
])
def test_each_problem_is_named(body, expected):
    assert expected in problems_of(roster_text(body))


def test_all_problems_are_reported_together():
    message = problems_of(roster_text("""\
- {name: a, kind: house}
- {name: b, kind: reverse}
"""))
    assert "'a' (#1): strategy:" in message and "'b' (#2): mirror_of:" in message


def test_duplicate_names_refused():
    message = problems_of(roster_text("""\
- {name: twin, kind: house, strategy: momentum}
- {name: twin, kind: house, strategy: random}
"""))
    assert "contestant 'twin' (#2): name: duplicate of contestant #1" in message


def test_duplicate_yaml_keys_refused():
    message = problems_of(roster_text("""\
- name: a
  kind: house
  strategy: momentum
  strategy: random
"""))
    assert "test.yaml: not valid YAML" in message and "duplicate key 'strategy'" in message


@pytest.mark.parametrize("text", ["", "contestants: []", "- a\n- b", "contestants: {}",
                                  "contestants: [{name: a, kind: house, strategy: random}]\nextra: 1",
                                  "contestants: [\n"])
def test_structural_errors(text):
    assert problems_of(text).startswith("invalid roster:\n  test.yaml: ")


@pytest.mark.parametrize(("field", "value"), [
    ("api_key_env", "sk-proj-abcdef1234567890"),
    ("model", "sk-ant-api03-abcdefghijkl"),
    ("description", "uses key gsk_ABCDEFGHIJKLMNOP for now"),
    ("api_base", "https://generativelanguage.googleapis.com/v1?key=AIzaSyAbcdefghijkl"),
])
def test_literal_key_refused_without_repeating_it(field, value):
    body = {"name": "leaky", "kind": "llm", "model": "openai/x", "api_key_env": "OPENAI_API_KEY"}
    body[field] = value
    text = "contestants:\n  - " + "\n    ".join(f"{k}: '{v}'" for k, v in body.items())
    message = problems_of(text)
    assert f"contestant 'leaky' (#1): {field}: looks like a literal API key" in message
    assert value not in message
    assert "api_key_env" in message  # says where the key belongs


@pytest.mark.parametrize("field", ["api_key", "token", "secret"])
def test_secret_fields_refused(field):
    message = problems_of(roster_text(f"""\
- name: leaky
  kind: llm
  model: openai/x
  api_base: http://127.0.0.1:8000/v1
  {field}: not-a-pattern-but-still-a-secret
"""))
    assert f"contestant 'leaky' (#1): {field}: keys never go in the roster" in message
    assert "not-a-pattern-but-still-a-secret" not in message


def test_credentials_in_the_url_refused():
    message = problems_of(roster_text("""\
- {name: a, kind: llm, model: openai/x, api_base: 'http://user:hunter2@127.0.0.1:8000/v1'}
"""))
    assert "'a' (#1): api_base: must not carry credentials" in message
    assert "hunter2" not in message


def test_unreadable_file_is_named(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(RosterError, match=re.escape(str(missing))):
        load_roster(missing)


def test_reverse_of_the_worst_and_of_a_runnable_contestant():
    roster = parse_roster(roster_text(LLM + """\
- {name: contrarian, kind: reverse, mirror_of: gpt-mini}
- {name: anti-worst, kind: reverse, mirror_of: worst}
- {name: season-1, kind: replay, ledger_source: data_lake/ledger/season=1}
"""))
    runnable, _ = roster.available({"OPENAI_API_KEY": "x"})
    assert [s.name for s in runnable] == ["gpt-mini", "contrarian", "anti-worst", "season-1"]
    runnable, skipped = roster.available({})
    assert [s.name for s in skipped] == ["gpt-mini", "contrarian"]


@pytest.mark.parametrize(("url", "local"), [
    ("http://127.0.0.1:8000/v1", True), ("http://localhost:11434/v1", True),
    ("http://[::1]:8000/v1", True), ("http://127.3.2.1/v1", True),
    ("https://api.openai.com/v1", False), ("http://10.0.0.5:8000/v1", False), (None, False),
])
def test_is_loopback(url, local):
    assert is_loopback(url) is local


def test_spec_defaults():
    spec = ContestantSpec(name="x", kind="llm", model="openai/x", api_key_env="K")
    assert spec.params.num_retries == 2 and spec.params.temperature is None
    assert spec.prices is None and not spec.is_local


# -- role ------------------------------------------------------------------------------------------

def test_a_house_variant_or_a_marked_house_entry_plays_as_a_contestant():
    roster = parse_roster(roster_text("""\
- {name: momentum, kind: house, strategy: momentum}
- {name: momentum-fast, kind: house, strategy: momentum, strategy_params: {entry_lookback: 10}}
- {name: random-entered, kind: house, strategy: random, role: contestant}
- {name: equal-weight, kind: house, strategy: equal_weight, role: ruler}
- {name: gpt-mini, kind: llm, model: openai/gpt-4o-mini, api_key_env: K, role: contestant}
"""))
    assert {s.name: s.plays_as for s in roster} == {
        "momentum": "ruler", "momentum-fast": "contestant", "random-entered": "contestant",
        "equal-weight": "ruler", "gpt-mini": "contestant"}
    # the role is kept in a season's roster copy only where the entry gave it
    assert "role" not in roster["momentum"].model_dump(exclude_defaults=True)
    assert roster["random-entered"].model_dump(exclude_defaults=True)["role"] == "contestant"


@pytest.mark.parametrize(("body", "expected"), [
    ("- {name: a, kind: house, strategy: momentum, role: judge}",
     "test.yaml: contestant 'a' (#1): role: must be contestant or ruler, not 'judge': a "
     "contestant is ranked; a ruler is one of the arena's own rules at its defaults"),
    ("- {name: a, kind: house, strategy: momentum, role: Contestant}",
     "'a' (#1): role: must be contestant or ruler, not 'Contestant'"),
    ("- {name: a, kind: house, strategy: momentum, role: 1}",
     "'a' (#1): role: must be contestant or ruler, not 1"),
    ("- {name: a, kind: house, strategy: momentum, role: ruler, "
     "strategy_params: {entry_lookback: 10, size_pct: 15}}",
     "'a' (#1): role: ruler is only for a house rule at its defaults; this entry changes "
     "entry_lookback, size_pct, so it is a strategy of its own and plays as a contestant"),
    ("- {name: a, kind: llm, model: openai/x, api_key_env: K, role: ruler}",
     "'a' (#1): role: ruler is only for the arena's own rules (kind house at its defaults); an "
     "entry of kind llm plays as a contestant: remove role"),
])
def test_a_role_the_entry_cannot_play_is_refused(body, expected):
    assert expected in problems_of(roster_text(body))
