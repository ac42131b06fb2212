"""Replicates: a roster entry asking for N instances of one model expands into N contestants, each
with its own seed or temperature, refused with a clear message when it cannot be played; every
call of an instance sends its seed over the real HTTP path and records the model it replicates."""

from __future__ import annotations

import re
import textwrap

import pandas as pd
import pytest
import yaml

from arena.agents.debate import DebateContestant
from arena.agents.factory import build_contestant
from arena.agents.llm import LLMContestant, RetryPolicy
from arena.agents.roster import DEFAULT_ROSTER, RosterError, parse_roster
from arena.core.types import Briefing, Message
from tests.agents.openai_stub import StubResponse

FAST = RetryPolicy(backoff_s=0.01, max_backoff_s=0.05)
LOCAL = "http://127.0.0.1:9/v1"
BRIEFING = Briefing(at=pd.Timestamp("2026-01-05 16:00", tz="UTC"), contestant="x", data={},
                    messages=(Message("system", "Trade."), Message("user", "Answer in JSON.")))


def roster(*entries: str) -> str:
    return "contestants:\n" + "".join(
        textwrap.indent(textwrap.dedent(e), "  ") for e in entries)


def model(name: str = "gpt", extra: str = "", kind: str = "llm") -> str:
    return (f"- {{name: {name}, kind: {kind}, model: openai/stub-model, api_base: '{LOCAL}'"
            f"{', ' + extra if extra else ''}}}\n")


def problems(text: str) -> list[str]:
    with pytest.raises(RosterError) as info:
        parse_roster(text, "t.yaml")
    return list(info.value.problems)


# -- expansion -------------------------------------------------------------------------------------


def test_an_entry_expands_into_instances_with_seeds_one_to_n_and_its_temperature():
    loaded = parse_roster(roster(
        "- {name: momentum, kind: house, strategy: momentum}\n",
        model("gpt", "params: {temperature: 0.3, max_tokens: 500}, replicates: 3")))
    assert loaded.names == ("momentum", "gpt-r1", "gpt-r2", "gpt-r3")
    instances = [loaded[f"gpt-r{k}"] for k in (1, 2, 3)]
    assert [s.replicate_of for s in instances] == ["gpt"] * 3
    assert [s.params.seed for s in instances] == [1, 2, 3]
    assert [s.params.temperature for s in instances] == [0.3] * 3
    assert {s.params.max_tokens for s in instances} == {500}
    assert {(s.kind, s.model, s.api_base) for s in instances} == {("llm", "openai/stub-model", LOCAL)}
    assert loaded["momentum"].replicate_of is None
    assert loaded.replicates == {"gpt": ("gpt-r1", "gpt-r2", "gpt-r3")}


def test_seeds_and_temperatures_are_given_per_instance():
    loaded = parse_roster(roster(
        model("gpt", "replicates: 2, seeds: [7, 7], temperatures: [0.0, 1.5]"),
        model("deb", "replicates: 2, seeds: [40, 41]", kind="debate"),
        model("res", "replicates: 2, temperatures: [0.5, 1]", kind="researcher")))
    assert [(s.name, s.params.seed, s.params.temperature) for s in loaded] == [
        ("gpt-r1", 7, 0.0), ("gpt-r2", 7, 1.5), ("deb-r1", 40, None), ("deb-r2", 41, None),
        ("res-r1", 1, 0.5), ("res-r2", 2, 1.0)]
    assert loaded.replicates == {"gpt": ("gpt-r1", "gpt-r2"), "deb": ("deb-r1", "deb-r2"),
                                 "res": ("res-r1", "res-r2")}
    # each instance is a contestant of its kind
    assert isinstance(build_contestant(loaded["gpt-r2"]), LLMContestant)
    assert isinstance(build_contestant(loaded["deb-r1"]), DebateContestant)


def test_the_expanded_form_loads_the_same_as_a_season_roster_copy_rewritten_by_a_change():
    """A roster change rewrites the season's copy from the loaded specs (model_dump): the
    instances, with replicate_of and their seeds, load back as the same contestants."""
    loaded = parse_roster(roster(model("gpt", "params: {temperature: 0.3}, replicates: 2")))
    dumped = yaml.safe_dump({"version": 1, "contestants": [
        s.model_dump(mode="json", exclude_defaults=True) for s in loaded]}, sort_keys=False)
    assert "replicate_of: gpt" in dumped and "seed: 2" in dumped
    assert parse_roster(dumped).contestants == loaded.contestants


def test_a_reverse_mirrors_an_instance():
    loaded = parse_roster(roster(model("gpt", "replicates: 2"),
                                 "- {name: gpt-back, kind: reverse, mirror_of: gpt-r2}\n"))
    assert loaded["gpt-back"].mirror_of == "gpt-r2"


def test_the_committed_roster_example_expands():
    text = re.sub(r"(?m)^  # ", "  ", DEFAULT_ROSTER.read_text())
    loaded = parse_roster(text, "uncommented")
    assert loaded.replicates["local-replicas"] == ("local-replicas-r1", "local-replicas-r2",
                                                   "local-replicas-r3")
    assert [loaded[f"local-replicas-r{k}"].params.seed for k in (1, 2, 3)] == [11, 12, 13]
    assert "local-replicas" not in loaded.names


# -- refusals: every message -----------------------------------------------------------------------

WHOLE = "t.yaml: contestant 'gpt' (#1): replicates: must be a whole number from 2 to 20 (got {})"


@pytest.mark.parametrize("value", ["1", "21", "0", "-2", "'3'", "true", "2.5", "[2]"])
def test_replicates_is_a_whole_number_from_2_to_20(value):
    got = repr(yaml.safe_load(value))
    assert problems(roster(model("gpt", f"replicates: {value}"))) == [WHOLE.format(got)]


@pytest.mark.parametrize(("entry", "kind", "why"), [
    ("{name: m, kind: house, strategy: momentum, replicates: 2}", "house",
     "a house rule is deterministic, so its instances would play one book N times (and random, "
     "its zero-skill player, is the distribution the luck ruler already samples by the "
     "thousand); to compare variants give each its own entry and strategy_params"),
    ("{name: m, kind: reverse, mirror_of: worst, replicates: 2}", "reverse",
     "a reverse mirrors one contestant; mirror one of the instances instead"),
    ("{name: m, kind: replay, ledger_source: x, replicates: 2}", "replay",
     "a replay re-plays one recorded set of answers"),
    ("{name: m, kind: entrant, replicates: 2}", "entrant",
     "an outside entrant is one agent answering through arena mcp"),
])
def test_only_model_kinds_take_replicates_and_the_refusal_says_why(entry, kind, why):
    assert problems(roster(f"- {entry}\n")) == [
        f"t.yaml: contestant 'm' (#1): replicates: only for the model kinds (debate, llm, "
        f"researcher), not {kind}: {why}"]


@pytest.mark.parametrize(("extra", "message"), [
    ("seeds: [1, 2]", "seeds: must list 3 whole numbers from 0, one per instance (got 2)"),
    ("seeds: 5", "seeds: must list 3 whole numbers from 0, one per instance (got a int)"),
    ("seeds: [1, -2, 3]",
     "seeds: must list 3 whole numbers from 0, one per instance (item 2 is -2)"),
    ("seeds: [1, 2.5, 3]",
     "seeds: must list 3 whole numbers from 0, one per instance (item 2 is 2.5)"),
    ("seeds: [1, 2, true]",
     "seeds: must list 3 whole numbers from 0, one per instance (item 3 is True)"),
    ("temperatures: [0.1, 0.2]",
     "temperatures: must list 3 numbers from 0 to 2, one per instance (got 2)"),
    ("temperatures: [0.1, 2.5, 0.3]",
     "temperatures: must list 3 numbers from 0 to 2, one per instance (item 2 is 2.5)"),
    ("temperatures: [0.1, hot, 0.3]",
     "temperatures: must list 3 numbers from 0 to 2, one per instance (item 2 is 'hot')"),
    ("seeds: [4, 5, 4]", "seeds: instances r1 and r3 would play with the same seed and "
                         "temperature (4, None): one instance twice"),
    ("seeds: [4, 4, 5], temperatures: [1, 1, 1]", "seeds: instances r1 and r2 would play with "
                                                  "the same seed and temperature (4, 1.0): one "
                                                  "instance twice"),
    ("params: {seed: 9}", "params.seed: a replicated entry's instances take their seeds from "
                          "seeds: [..] (default 1 to 3), not from params"),
    ("params: {temperature: 0.2}, temperatures: [0.1, 0.2, 0.3]",
     "temperatures: give the instances' temperatures here or one temperature in params, not "
     "both"),
])
def test_seeds_and_temperatures_list_one_valid_value_per_instance(extra, message):
    assert problems(roster(model("gpt", f"replicates: 3, {extra}"))) == [
        f"t.yaml: contestant 'gpt' (#1): {message}"]


def test_a_debate_varies_its_instances_by_seed_only():
    assert problems(roster(model("deb", "replicates: 2, temperatures: [0.1, 0.9]",
                                 kind="debate"))) == [
        "t.yaml: contestant 'deb' (#1): temperatures: a debate sets its own temperature per "
        "role (analysts 0.7, judge 0.2), so its instances differ by seed only"]


@pytest.mark.parametrize("field", ["seeds: [1, 2]", "temperatures: [0.1, 0.2]"])
def test_seeds_or_temperatures_without_replicates_are_refused(field):
    name = field.split(":")[0]
    assert problems(roster(model("gpt", field))) == [
        f"t.yaml: contestant 'gpt' (#1): {name}: only with replicates: N (the instances' "
        f"{name}, one each); a single contestant sets params.{name.removesuffix('s')}"]


def test_an_expanded_name_that_clashes_with_another_entry_names_both():
    later = problems(roster(model("gpt", "replicates: 3"),
                            "- {name: gpt-r2, kind: house, strategy: random}\n"))
    assert later == ["t.yaml: contestant 'gpt-r2' (#2): name: clashes with instance 'gpt-r2' of "
                     "contestant 'gpt' (#1) (replicates: 3); rename one of them"]
    earlier = problems(roster("- {name: gpt-r1, kind: house, strategy: random}\n",
                              model("gpt", "replicates: 2")))
    assert earlier == ["t.yaml: contestant 'gpt' (#2): replicates: its instance 'gpt-r1' "
                       "clashes with contestant 'gpt-r1' (#1); rename one of them"]


def test_the_replicated_model_name_is_no_contestant():
    """Hand-written instances (a roster copy's expanded form) leave their model's name to them:
    neither a contestant nor a mirror target may take it."""
    instances = model("gpt-r1", "replicate_of: gpt") + model("gpt-r2", "replicate_of: gpt")
    assert problems(roster(instances, "- {name: gpt, kind: house, strategy: random}\n")) == [
        "t.yaml: contestant 'gpt' (#3): name: 'gpt' names the model replicated by gpt-r1, "
        "gpt-r2; a contestant cannot share it"]
    assert problems(roster(model("gpt", "replicates: 3"),
                           "- {name: back, kind: reverse, mirror_of: gpt}\n")) == [
        "t.yaml: contestant 'back' (#2): mirror_of: 'gpt' is a replicated model, not a "
        "contestant; mirror one of its instances (gpt-r1 .. gpt-r3)"]


def test_replicate_of_names_the_instances_model_and_only_for_model_kinds():
    assert problems(roster(model("foo", "replicate_of: gpt"))) == [
        "t.yaml: contestant 'foo' (#1): replicate_of: an instance of 'gpt' is named gpt-r<k> "
        "(k from 1 to 20), not 'foo'"]
    assert problems(roster(model("gpt-r21", "replicate_of: gpt"))) == [
        "t.yaml: contestant 'gpt-r21' (#1): replicate_of: an instance of 'gpt' is named "
        "gpt-r<k> (k from 1 to 20), not 'gpt-r21'"]
    assert problems(roster("- {name: gpt-r1, kind: house, strategy: random, "
                           "replicate_of: gpt}\n")) == [
        "t.yaml: contestant 'gpt-r1' (#1): replicate_of: not used by kind house (only by "
        "debate, llm, researcher)"]
    assert problems(roster(model("gpt-r1", "replicate_of: gpt, replicates: 2"))) == [
        "t.yaml: contestant 'gpt-r1' (#1): replicates: this entry is an instance of 'gpt' "
        "(replicate_of); ask for replicates on the model's own entry"]


def test_a_seed_is_a_whole_number_within_int64():
    assert problems(roster(model("gpt", "params: {seed: -1}"))) == [
        "t.yaml: contestant 'gpt' (#1): params.seed: Input should be greater than or equal to 0"]
    assert parse_roster(roster(model("gpt", "params: {seed: 42}")))["gpt"].params.seed == 42


# -- the calls -------------------------------------------------------------------------------------


def test_each_instance_sends_its_seed_and_temperature_and_records_its_model(openai_stub):
    """Over the real HTTP path: the request bodies the server received carry each instance's
    seed and temperature; the call records carry them and the model replicated."""
    loaded = parse_roster(roster(model(
        "gpt", "params: {max_tokens: 100, timeout: 5}, replicates: 2, seeds: [101, 202], "
               "temperatures: [0.25, 1.25]").replace(LOCAL, openai_stub.url)))
    single = parse_roster(roster(model("solo").replace(LOCAL, openai_stub.url)))["solo"]
    replies = [LLMContestant(spec, retry=FAST).answer(BRIEFING)
               for spec in (*loaded.contestants, single)]
    bodies = [r.body for r in openai_stub.chat_requests]
    assert [(b.get("seed"), b.get("temperature")) for b in bodies] == [
        (101, 0.25), (202, 1.25), (None, None)]
    assert "seed" not in bodies[2] and "temperature" not in bodies[2]
    calls = [r.calls[0] for r in replies]
    assert [(c.contestant, c.seed, c.temperature, c.replicate_of) for c in calls] == [
        ("gpt-r1", 101, 0.25, "gpt"), ("gpt-r2", 202, 1.25, "gpt"), ("solo", None, None, None)]


def test_a_debate_instance_sends_its_seed_with_every_role(openai_stub):
    loaded = parse_roster(roster(model("deb", "params: {timeout: 5}, replicates: 2, "
                                              "seeds: [5, 6]", kind="debate")
                                 .replace(LOCAL, openai_stub.url)))
    sections = {k: f"<{k}>" for k in ("header", "rules", "contract", "screen_note",
                                      "universe_table", "candles", "benchmarks", "portfolio")}
    reply = build_contestant(loaded["deb-r2"]).answer(Briefing(
        at=BRIEFING.at, contestant="deb-r2", data={"sections": sections},
        messages=BRIEFING.messages))  # every role answers the stub's '{"decisions": []}'
    assert {r.body["seed"] for r in openai_stub.chat_requests} == {6}
    assert len(openai_stub.chat_requests) == 4  # bull, bear, risk, judge
    assert {(c.seed, c.replicate_of) for c in reply.calls} == {(6, "deb")}
    assert sorted(c.temperature for c in reply.calls) == [0.2, 0.7, 0.7, 0.7]


def test_a_failed_call_records_its_seed_and_model_too(openai_stub):
    openai_stub.script(StubResponse.error(400, "bad"))
    spec = parse_roster(roster(model("gpt", "params: {timeout: 5, num_retries: 0}, replicates: 2")
                               .replace(LOCAL, openai_stub.url)))["gpt-r2"]
    reply = LLMContestant(spec, retry=FAST).answer(BRIEFING)
    assert reply.text is None
    assert (reply.calls[0].seed, reply.calls[0].replicate_of, reply.calls[0].error[:11]) == (
        2, "gpt", "bad_request")
