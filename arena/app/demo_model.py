"""``arena demo --model``: a language model in the demo's first run.

The demo's roster holds the house rules only, so that it runs anywhere offline. ``--model
PROVIDER/MODEL`` adds one LLM contestant to it, called through litellm like any other: a hosted
model (its key read by litellm from the provider's usual environment variable, never from the
command line) or a local OpenAI-compatible server (Ollama, llama.cpp's server, vLLM) at
``--api-base``. Before the first day is played the model is checked to be reachable - a local
server answering HTTP at its base URL, a hosted model's key present - so a missing key or a
server that is not running is one line naming the fix, not 28 failed cycles.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import httpx
import yaml

from arena.agents.llm import load_litellm
from arena.agents.roster import DEFAULT_ROSTER
from arena.core.errors import BadArgument, UnusableInput

DEMO_PARAMS = {"temperature": 0.2, "max_tokens": 2048, "timeout": 120, "num_retries": 1}
LOCAL_PRICES = {"input_per_mtok": 0.0, "output_per_mtok": 0.0}  # one's own hardware
HOW = ("arena demo --model openai/gpt-4o-mini (with OPENAI_API_KEY set), or --model "
       "openai/NAME --api-base http://127.0.0.1:8000/v1 for a local OpenAI-compatible server "
       "(Ollama: --model ollama/NAME --api-base http://127.0.0.1:11434)")


class ModelUnreachable(UnusableInput):
    """The demo's model cannot be called: no server at its base URL, or no key (exit 2)."""


def model_name(model: str) -> str:
    """The contestant's name for ``PROVIDER/MODEL``: the model's own part, kebab-case."""
    if "/" not in model or not model.split("/", 1)[1].strip():
        raise BadArgument(f"--model {model!r}: give PROVIDER/MODEL, e.g. openai/gpt-4o-mini or "
                          "ollama/llama3.2")
    name = re.sub(r"[^a-z0-9]+", "-", model.split("/", 1)[1].lower()).strip("-")
    if not name:
        raise BadArgument(f"--model {model!r}: the model's name has no letter or digit")
    return name


def check_model(model: str, api_base: str | None, env: Mapping[str, str],
                timeout: float = 5.0) -> None:
    """:class:`ModelUnreachable` unless ``model`` can be called: a server answering HTTP at
    ``api_base`` (any status: it listens), or, hosted, the keys litellm needs in ``env``."""
    model_name(model)
    if api_base is not None:
        try:
            httpx.get(api_base.rstrip("/") + "/models", timeout=timeout)
        except httpx.HTTPError as exc:
            raise ModelUnreachable(f"no server answers at {api_base} ({type(exc).__name__}): "
                                   "start it (ollama serve, llama-server, vllm serve) or leave "
                                   "--model out") from None
        return
    found = load_litellm().validate_environment(model=model, api_key=None)
    missing = [k for k in found.get("missing_keys", []) if not env.get(k)]
    if missing:
        raise ModelUnreachable(f"--model {model} needs {', '.join(missing)} in the environment "
                               "(or --api-base URL for a local OpenAI-compatible server)")


def model_roster(base: str | Path | None, model: str, api_base: str | None,
                 dest: Path) -> Path:
    """``base`` (the shipped roster by default) with ``model`` added as an LLM contestant,
    written to ``dest``; a local server's calls are priced at 0 (its own hardware)."""
    raw = yaml.safe_load(Path(base or DEFAULT_ROSTER).read_text(encoding="utf-8")) or {}
    entry: dict[str, object] = {"name": model_name(model), "kind": "llm", "model": model,
                                "params": dict(DEMO_PARAMS)}
    if api_base is not None:
        entry.update(api_base=api_base, prices=dict(LOCAL_PRICES))
    names = {c.get("name") for c in raw.get("contestants") or []}
    if entry["name"] in names:
        raise BadArgument(f"--model {model}: the roster already has a contestant named "
                          f"{entry['name']!r}")
    raw["contestants"] = [*(raw.get("contestants") or []), entry]
    dest.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return dest
