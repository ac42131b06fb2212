"""Text a model sends, made storable: every string the product writes must encode as UTF-8.

A model can send half an emoji: a lone UTF-16 surrogate (``"\\ud83d"`` escaped in JSON, or the
code point itself once an HTTP client has decoded the JSON body). Python strings hold it happily;
UTF-8 encoders (Parquet, HTTP bodies, files) refuse it. :func:`storable` replaces each lone
surrogate with U+FFFD (a surrogate *pair* is joined into the character it encodes);
:func:`storable_json` does it to every string and key of decoded JSON, and :func:`json_value`
also spells out the non-finite numbers strict JSON cannot hold. :func:`to_json_literal` /
:func:`from_json_literal` keep an exact copy of such a string as ASCII JSON, so that the raw
answer is stored losslessly beside its cleaned text.
"""

from __future__ import annotations

import json
import math
from typing import Any


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


def nonfinite_text(number: float) -> str:
    """How JSON text spells a non-finite number: ``NaN``, ``Infinity`` or ``-Infinity``."""
    return "NaN" if math.isnan(number) else ("Infinity" if number > 0 else "-Infinity")


def _walk(value: Any, path: str, replaced: list[str] | None, spell_nonfinite: bool) -> Any:
    if isinstance(value, float) and spell_nonfinite and not math.isfinite(value):
        return nonfinite_text(value)
    if isinstance(value, str):
        fixed = storable(value)
        if replaced is not None and fixed != value:
            replaced.append(path or "the top level")
        return fixed
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            key = _walk(str(k), path, replaced, spell_nonfinite)
            out[key] = _walk(v, f"{path}.{key}" if path else key, replaced, spell_nonfinite)
        return out
    if isinstance(value, list | tuple):
        return [_walk(v, f"{path}[{i}]", replaced, spell_nonfinite) for i, v in enumerate(value)]
    return value


def storable_json(value: Any, replaced: list[str] | None = None) -> Any:
    """``value`` (decoded JSON) with every string and key storable, numbers untouched;
    ``replaced`` collects where a string changed (``decisions[0].thesis``)."""
    return _walk(value, "", replaced, spell_nonfinite=False)


def json_value(value: Any) -> Any:
    """``value`` (decoded JSON) made safe to write as strict JSON text: strings and keys
    storable, non-finite numbers spelled as strings (:func:`nonfinite_text`)."""
    return _walk(value, "", None, spell_nonfinite=True)


def dumps(value: Any, **kwargs: Any) -> str:
    """Strict JSON text of ``value`` (see :func:`json_value`), never raising for model content."""
    return json.dumps(json_value(value), allow_nan=False, default=str, **kwargs)
