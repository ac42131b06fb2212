"""Prompt templates (files in ``models/prompts/``) and prompt size in tokens.

A template is a text file ``<name>.md``. ``{{ field }}`` is replaced by the named field;
``{# ... #}`` is a comment for the template's reader and never reaches a model. Nothing else is
special, so JSON braces and dollar signs need no escaping. Rendering fails loudly:
:class:`PromptError` names every missing field and any malformed placeholder.

Token counts use tiktoken's ``cl100k_base`` encoding, offline: tiktoken downloads encodings on
first use, so the encoding is built here from a local copy of its file - ``$TIKTOKEN_CACHE_DIR``
if it holds the file, else the copy litellm bundles in its package
(``litellm_core_utils/tokenizers``; found without importing litellm, which is slow), checked
against the hash tiktoken expects. Without either, :func:`prompt_tokens` raises. No environment
variable is set, and tiktoken's own download cache is not touched.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import re
import types
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import tiktoken
from tiktoken.load import check_hash
from tiktoken_ext import openai_public

from arena.core.environment import setting
from arena.core.errors import UnusableInput
from arena.core.resources import MODELS

PROMPTS_DIR = MODELS / "prompts"
ENCODING = "cl100k_base"
_ENCODINGS = ("cl100k_base", "o200k_base")  # built from one .tiktoken file each
# OpenAI chat framing: a few tokens per message for the role markers, 3 to prime the reply
_PER_MESSAGE, _REPLY_PRIMING = 3, 3

_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_COMMENT = re.compile(r"\{#.*?#\}[ \t]*\n?", re.S)


class PromptError(UnusableInput, ValueError):
    """A template that is missing, malformed, or rendered without a field it needs."""


class Prompts:
    """The templates of one directory (default ``models/prompts``; ``$ARENA_PROMPTS`` overrides)."""

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory or setting("prompts") or PROMPTS_DIR)

    def __repr__(self) -> str:
        return f"Prompts({str(self.directory)!r})"

    def load(self, name: str) -> str:
        """The template text of ``name`` with comments removed."""
        path = self.directory / f"{name}.md"
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise PromptError(f"no prompt template {name!r} ({path}): {exc.strerror}") from None
        text = _COMMENT.sub("", text)
        leftover = _FIELD.sub("", text)
        if "{{" in leftover or "}}" in leftover:
            bad = re.search(r"\{\{.{0,40}|.{0,40}\}\}", leftover)
            raise PromptError(f"template {name!r} has a malformed placeholder near "
                              f"{bad.group(0)!r}; use {{{{ field_name }}}}")
        return text

    def fields(self, name: str) -> list[str]:
        """The field names template ``name`` needs, in order of first use."""
        return list(dict.fromkeys(_FIELD.findall(self.load(name))))

    def render(self, name: str, /, **fields: Any) -> str:
        """Template ``name`` with every ``{{ field }}`` replaced by ``str(fields[field])``."""
        text = self.load(name)
        missing = [f for f in dict.fromkeys(_FIELD.findall(text)) if f not in fields]
        if missing:
            raise PromptError(f"template {name!r} needs field(s) {', '.join(missing)}; "
                              f"given: {', '.join(sorted(fields)) or 'none'}")
        return _FIELD.sub(lambda m: str(fields[m.group(1)]), text)


def load_template(name: str) -> str:
    """The text of the default template ``name`` (comments removed)."""
    return Prompts().load(name)


def render(name: str, /, **fields: Any) -> str:
    """Render the default template ``name``; :class:`PromptError` names any missing field."""
    return Prompts().render(name, **fields)


# ------------------------------------------------------------------------------------- tokens
def _bundled_dirs() -> list[Path]:
    """Local tiktoken caches: ``$TIKTOKEN_CACHE_DIR``, then litellm's bundled copy."""
    dirs = []
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        dirs.append(Path(os.environ["TIKTOKEN_CACHE_DIR"]))
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            dirs.append(Path(root) / "litellm_core_utils" / "tokenizers")
    return dirs


def _local_ranks(url: str, expected_hash: str | None) -> dict[bytes, int]:
    """The token ranks of the ``.tiktoken`` file published at ``url``, read from a local copy
    (tiktoken's cache file name for ``url``) whose SHA-256 is ``expected_hash``."""
    cache_key = hashlib.sha1(url.encode()).hexdigest()  # tiktoken's own cache file name
    for directory in _bundled_dirs():
        path = directory / cache_key
        if not path.is_file():
            continue
        data = path.read_bytes()
        if expected_hash and not check_hash(data, expected_hash):
            continue  # a stale or corrupt copy: look further
        # the format tiktoken.load.load_tiktoken_bpe reads ("<base64 token> <rank>" per line);
        # that function is not used as it copies the file into tiktoken's download cache
        return {base64.b64decode(token): int(rank)
                for token, rank in (line.split() for line in data.splitlines() if line)}
    raise PromptError(f"no local copy of {url.rsplit('/', 1)[-1]} (looked in "
                      f"{', '.join(map(str, _bundled_dirs())) or 'nowhere'}); install litellm, "
                      f"or put the file {cache_key} in $TIKTOKEN_CACHE_DIR")


@lru_cache(maxsize=4)
def encoding(name: str = ENCODING):
    """The tiktoken encoding ``name``, built from a local copy of its file (never the network).

    The pattern, special tokens, file address and hash are tiktoken's own: its constructor in
    ``tiktoken_ext.openai_public`` is run with ``load_tiktoken_bpe`` bound to
    :func:`_local_ranks` (a copy of the function with its own globals; nothing is patched).
    """
    if name not in _ENCODINGS:
        raise PromptError(f"unknown encoding {name!r}; known: {', '.join(_ENCODINGS)}")
    constructor = openai_public.ENCODING_CONSTRUCTORS[name]
    if "load_tiktoken_bpe" not in constructor.__code__.co_names:  # a tiktoken that loads otherwise
        raise PromptError(f"cannot build the {name} encoding offline with this tiktoken")
    offline = types.FunctionType(constructor.__code__,
                                 {**vars(openai_public), "load_tiktoken_bpe": _local_ranks})
    return tiktoken.Encoding(**offline())


def count_tokens(text: str, name: str = ENCODING) -> int:
    return len(encoding(name).encode(text, disallowed_special=()))


def prompt_tokens(messages: Iterable[Any], name: str = ENCODING) -> int:
    """Tokens of a chat prompt: each message's role and content plus the chat framing.

    ``messages``: :class:`arena.agents.base.Message` objects or ``{"role", "content"}`` mappings.
    """
    total = _REPLY_PRIMING
    for m in messages:
        role, content = (m["role"], m["content"]) if isinstance(m, Mapping) else (m.role, m.content)
        total += _PER_MESSAGE + count_tokens(role, name) + count_tokens(content or "", name)
    return total
