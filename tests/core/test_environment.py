"""The ``ARENA_*`` table: one name, type and default per variable, the same to the type checker
(the overloads of ``setting``) as to pydantic-settings, each variable validated when it is read."""

from __future__ import annotations

import os
import typing
from pathlib import Path

import pytest

from arena.core import environment
from arena.core.environment import DEFAULT_LAKE, DEFAULTS, SettingName, setting
from arena.core.errors import SettingsError


@pytest.fixture
def no_arena_variable(monkeypatch):
    for name in [k for k in os.environ if k.upper().startswith("ARENA_")]:
        monkeypatch.delenv(name)


def test_every_name_has_one_type_the_table_gives_it():
    """``setting("lake")`` is typed ``Path`` because the table's ``lake`` is one: each overload's
    names carry the return type of the pydantic field of that name, each name in one overload."""
    model = environment.Settings
    names = typing.get_args(SettingName)
    assert sorted(names) == sorted(DEFAULTS) == sorted(model.model_fields)
    typed: dict[str, object] = {}
    for overload in typing.get_overloads(setting):
        hints = typing.get_type_hints(overload, vars(environment))
        for name in typing.get_args(hints["name"]):
            assert name not in typed, f"{name} is in two overloads"
            typed[name] = hints["return"]
    assert typed == {name: model.model_fields[name].annotation for name in names}


def test_defaults_are_read_without_the_table(no_arena_variable):
    assert setting("lake") == DEFAULT_LAKE and isinstance(setting("lake"), Path)
    assert setting("provider_concurrency") is None and setting("universe") is None
    with pytest.raises(AttributeError, match="no setting 'nope'"):
        setting("nope")  # type: ignore[call-overload]


def test_values_are_read_as_their_types(no_arena_variable, monkeypatch, tmp_path):
    monkeypatch.setenv("ARENA_LAKE", str(tmp_path))
    monkeypatch.setenv("ARENA_PROVIDER_CONCURRENCY", "3")
    monkeypatch.setenv("ARENA_UNIVERSE", "")  # empty: unset
    monkeypatch.setenv("ARENA_SIGNAL_TOKEN", "s3cret")
    assert setting("lake") == tmp_path and isinstance(setting("lake"), Path)
    assert setting("provider_concurrency") == 3
    assert setting("universe") is None and setting("signal_token") == "s3cret"
    monkeypatch.setenv("ARENA_LAKE", "")  # empty: the default
    assert setting("lake") == DEFAULT_LAKE


def test_a_bad_variable_stops_only_who_reads_it(no_arena_variable, monkeypatch, tmp_path):
    monkeypatch.setenv("ARENA_ALERT_WEBHOOK", "hooks.example.com")
    monkeypatch.setenv("ARENA_LAKE", str(tmp_path))
    assert setting("lake") == tmp_path and setting("provider_concurrency") is None
    with pytest.raises(SettingsError, match=r"ARENA_ALERT_WEBHOOK='hooks\.example\.com'"):
        setting("alert_webhook")
    with pytest.raises(SettingsError, match="ARENA_ALERT_WEBHOOK"):
        environment.settings()
