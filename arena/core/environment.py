"""The arena's environment variables, one table: every ``ARENA_*`` variable with its default.

:class:`Settings` is read by pydantic-settings and validated at once (:func:`settings`): a value
that cannot be used is a :class:`~arena.core.errors.SettingsError` naming the variable and what
it takes (exit 2), never a bare ``ValueError`` deep in a run. The code reads these variables only
through this table, and an explicit argument (``--lake``, ``--drop``) always wins over them.

=============================  =====================================================
variable                       what it sets
=============================  =====================================================
``ARENA_LAKE``                 the lake's root when ``--lake`` is not given (and for
                               ``dbt build`` run by hand from ``dbt_project/``)
``ARENA_UNIVERSE``             a universe CSV instead of the shipped one
``ARENA_PROMPTS``              a folder of prompt templates instead of the shipped one
``ARENA_DROP_DIR``             the files source's drop folder when ``--drop`` is not given
``ARENA_PROVIDER_CONCURRENCY`` model calls of one provider at once in a cycle (unset: no limit)
``ARENA_DASK``                 the Dask scheduler a running season's flows fan out to
``ARENA_ALERT_WEBHOOK``        where ``arena serve``'s alerts post
``ARENA_SIGNAL_TOKEN``         the token terminals send to ``arena signal-server``
=============================  =====================================================

The code reads a variable with :func:`setting`, whose overloads give each name its type
(``setting("lake")`` is a ``Path``, ``setting("provider_concurrency")`` an ``int`` or None; a
name not in the table is a type error), and all of them with :func:`settings`.

The contestants' keys are not in this table: the roster names the variable of each
(``api_key_env``), read only when the contestant calls its model.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, overload

from pydantic import Field, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from arena.core.errors import SettingsError

DEFAULT_LAKE = Path("data_lake")

#: the name of every setting (the variable is ``ARENA_`` and the name in capitals); the
#: overloads of :func:`setting` give each its type
SettingName = Literal["lake", "universe", "prompts", "drop_dir", "provider_concurrency", "dask",
                      "alert_webhook", "signal_token"]

# Every variable's default, by field name: the table's fields take their defaults from here, and
# a variable that cannot be read falls back to it for the commands that do not read it.
DEFAULTS: dict[str, Any] = {
    "lake": DEFAULT_LAKE, "universe": None, "prompts": None, "drop_dir": None,
    "provider_concurrency": None, "dask": None, "alert_webhook": None, "signal_token": None,
}


class Settings(BaseSettings):
    """Every ``ARENA_*`` environment variable, its default and what it takes."""

    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore", frozen=True)

    lake: Path = Field(DEFAULTS["lake"], description="the lake's root when --lake is not "
                       "given")
    universe: Path | None = Field(DEFAULTS["universe"], description="a universe CSV "
                                  "instead of the shipped one")
    prompts: Path | None = Field(DEFAULTS["prompts"], description="a folder of prompt "
                                 "templates instead of the shipped ones")
    drop_dir: Path | None = Field(DEFAULTS["drop_dir"], description="the files source's "
                                  "drop folder when --drop is not given")
    provider_concurrency: int | None = Field(
        DEFAULTS["provider_concurrency"], ge=1, description="model calls of one provider "
        "at once in a cycle (unset: no limit; a Prefect global limit per provider in a "
        "flow)")
    dask: str | None = Field(DEFAULTS["dask"], description="the Dask scheduler a running "
                             "season's flows fan out to (tcp://host:8786, or local)")
    alert_webhook: str | None = Field(DEFAULTS["alert_webhook"], description="where arena "
                                      "serve's alerts post when --alert-webhook is not "
                                      "given")
    signal_token: str | None = Field(DEFAULTS["signal_token"], description="the token "
                                     "trading terminals send to arena signal-server when "
                                     "--token is not given")

    @field_validator("alert_webhook")
    @classmethod
    def _http(cls, url: str | None) -> str | None:
        if url and not url.startswith(("http://", "https://")):
            raise ValueError("must be an http(s) URL")
        return url or None

    @field_validator("universe", "prompts", "drop_dir", "dask", "alert_webhook",
                     "signal_token", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("lake", "provider_concurrency", mode="before")
    @classmethod
    def _empty_is_default(cls, value: object, info: ValidationInfo) -> object:
        return DEFAULTS[str(info.field_name)] if value == "" else value


def _problems(exc: ValidationError, only: str | None = None) -> str:
    return "; ".join(f"ARENA_{str(e['loc'][0]).upper()}={e.get('input')!r}: {e['msg']}"
                     for e in exc.errors() if only is None or e["loc"][0] == only)


def _environment() -> tuple[tuple[str, str], ...]:
    """The ``ARENA_*`` variables as they are now (what a :class:`Settings` is read from)."""
    return tuple(sorted((k, v) for k, v in os.environ.items() if k.upper().startswith("ARENA_")))


@lru_cache(maxsize=16)
def _read(environment: tuple[tuple[str, str], ...]) -> Settings | ValidationError:
    """The settings of one state of the environment, or why they cannot be read. Cached by
    that state: a cycle's every turn reads its settings, and building them costs
    milliseconds."""
    try:
        return Settings()
    except ValidationError as exc:
        return exc


def settings() -> Settings:
    """Every setting of the environment as it is now, each validated (read again whenever an
    ``ARENA_*`` variable changed: a test or an operator may change one between two runs of one
    process)."""
    read = _read(_environment())
    if isinstance(read, ValidationError):
        raise SettingsError(f"an environment variable cannot be used: {_problems(read)}")
    return read


def is_set(name: SettingName) -> bool:
    """Whether the environment gives the setting a value of its own (not empty), rather than
    leaving it at its default: ``prefect deploy`` refuses a pool's lake that is only the
    default, each worker's own folder."""
    if name not in DEFAULTS:
        raise AttributeError(f"no setting {name!r} in the ARENA_* table")
    return any(k.upper() == f"ARENA_{name.upper()}" and v for k, v in _environment())


@overload
def setting(name: Literal["lake"]) -> Path: ...


@overload
def setting(name: Literal["universe", "prompts", "drop_dir"]) -> Path | None: ...


@overload
def setting(name: Literal["provider_concurrency"]) -> int | None: ...


@overload
def setting(name: Literal["dask", "alert_webhook", "signal_token"]) -> str | None: ...


def setting(name: SettingName) -> Path | int | str | None:
    """One setting, validated, of the type the table gives it (``setting("lake")`` is a
    ``Path``); a bad value of another variable does not stop a command that does not read it
    (``ARENA_ALERT_WEBHOOK`` matters to ``arena serve``, not to ``arena report``)."""
    if name not in DEFAULTS:
        raise AttributeError(f"no setting {name!r} in the ARENA_* table")
    read = _read(_environment())
    if not isinstance(read, ValidationError):
        return getattr(read, name)
    bad = {str(e["loc"][0]) for e in read.errors()}
    if name in bad:
        raise SettingsError(f"an environment variable cannot be used: {_problems(read, name)}")
    # the others at their defaults: an argument given at construction outranks the variable
    return getattr(Settings(**{field: DEFAULTS[field] for field in bad}), name)
