"""Text a model sends, made storable: every string the product writes must encode as UTF-8.

A model can send half an emoji: a lone UTF-16 surrogate (``"\\ud83d"`` escaped in JSON, or the
code point itself once an HTTP client has decoded the JSON body). Python strings hold it happily;
UTF-8 encoders (Parquet, HTTP bodies, files) refuse it. :func:`storable` replaces each lone
surrogate with U+FFFD (a surrogate *pair* is joined into the character it encodes), and
:func:`to_json_literal` / :func:`from_json_literal` keep an exact copy of such a string as ASCII
JSON, so that the raw answer is stored losslessly beside its cleaned text.
"""

from __future__ import annotations

import json
import math
from typing import Any

REPLACEMENT = "\ufffd"


def is_storable(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8 (holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (unchanged when already storable)."""
    if is_storable(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def to_json_literal(text: str) -> str:
    """An exact, ASCII-only copy of ``text`` (lone surrogates included) as a JSON string."""
    return json.dumps(text, ensure_ascii=True)


def from_json_literal(literal: str) -> str:
    """The string :func:`to_json_literal` encoded."""
    value = json.loads(literal)
    if not isinstance(value, str):
        raise ValueError("not a JSON string literal")
    return value


def json_value(value: Any) -> Any:
    """``value`` (decoded JSON) made safe to write as strict JSON text: non-finite numbers become
    the strings ``"NaN"``/``"Infinity"``/``"-Infinity"``, strings and keys storable."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable(str(k)): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


def dumps(value: Any, **kwargs: Any) -> str:
    """Strict JSON text of ``value`` (see :func:`json_value`), never raising for model content."""
    return json.dumps(json_value(value), allow_nan=False, default=str, **kwargs)
