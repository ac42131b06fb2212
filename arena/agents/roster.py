"""The roster: who plays, as data (``models/roster.yaml``), validated at load into frozen objects.

Each contestant has a unique kebab-case ``name`` and a ``kind`` (SPEC §6):

* ``llm``, ``debate``, ``researcher`` call a model through litellm: ``model`` (a litellm model
  string such as ``openai/gpt-4o-mini``), optional ``api_base`` (a local OpenAI-compatible server),
  ``api_key_env`` (the NAME of the environment variable holding the key, never the key itself),
  ``params`` (temperature, max_tokens, timeout in seconds per attempt, num_retries on transient
  errors), optional ``prices`` (USD per million input/output tokens, for models litellm's price
  map does not know, e.g. local ones) and optional ``knowledge_cutoff`` (``YYYY-MM``: the last
  month its training data may hold; a season of real prices that starts before the end of that
  month is *contaminated* for it: :mod:`arena.pipeline.knowledge`);
* ``reverse`` mirrors another contestant: ``mirror_of`` (a contestant's name, or ``worst`` for the
  season's worst performer so far);
* ``house`` is a rule-based agent: ``strategy`` (one of :data:`HOUSE_STRATEGIES`) and optional
  ``strategy_params`` (a mapping of the strategy's parameters - lookbacks, thresholds, sizes -,
  each with its default; :mod:`arena.agents.house` lists them): two entries of one strategy with
  different parameters play side by side as two contestants. A parameter the strategy does not
  take, of the wrong type or outside its range (a size the arena's rules would refuse, a lookback
  the universe table does not have) is refused at load, naming it and what it takes;
* ``replay`` re-plays recorded answers: ``ledger_source``;
* ``entrant`` is an outside entrant (no fields): its answers come through ``arena mcp`` into the
  season's inbox, and it joins the season's roster copy with its first submission
  (:mod:`arena.pipeline.entrants`); a shipped roster has none.

**Role.** Every contestant is ranked among the others, except the arena's own rules: a
``house`` entry at its defaults plays as a **ruler** (the yardstick, shown apart, never ranked).
A house entry that changes a parameter is a strategy of its own and plays as a contestant, and
``role: contestant`` makes a default house entry one too; ``role: ruler`` is accepted only where
it is already true (a house entry at its defaults). Any other value is refused at load. The
decision is :attr:`ContestantSpec.plays_as` (:func:`arena.agents.house.house_role`), the one the
reports and marts read back from the recorded calls.

**Replicates.** A model entry may ask for ``replicates: N`` (2 to 20) instances of its model, to
tell a model's skill from one lucky draw of its sampling: the entry expands at load into N
contestants ``<name>-r1`` .. ``<name>-rN``, each carrying ``replicate_of: <name>`` and its own
``params.seed`` (``seeds: [..]``, N distinct whole numbers; default 1..N) and
``params.temperature`` (``temperatures: [..]``, N values from 0 to 2; default the entry's own).
They play as separate contestants; the ledger records ``replicate_of``, the seed and the
temperature with every call, and the marts group the instances by model (``replicates``). Only
the model kinds take replicates: a house rule is deterministic (N instances would play one book
N times, and ``random`` is already the zero-skill distribution the luck ruler samples by the
thousand), a reverse mirrors one contestant, a replay re-plays one record, an entrant is one
outside agent. A debate sets its own temperature per role, so its instances differ by seed only.
The expanded form (an entry with ``replicate_of``, named ``<model>-r<k>``) is a roster entry too:
a season's roster copy rewritten by a roster change holds it, and it loads the same.

Secrets never live in the roster: a value that looks like an API key, or a field named like one
(``api_key``, ``token``, ...), is refused at load, and the refusal never repeats the value.
Every load error names the file, the contestant and the field.

:meth:`Roster.available` splits the roster into contestants that can run now and contestants
skipped for the cycle, each with its reason (``skipped: OPENAI_API_KEY is not set``).
"""

from __future__ import annotations

import ipaddress
import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from arena.agents.house import (
    CONTESTANT,
    PARAMETERS,
    ROLES,
    RULER,
    HouseParams,
    HouseParamsError,
    changed_params,
    house_params,
    house_role,
)
from arena.core.errors import UnusableInput
from arena.core.resources import MODELS

log = logging.getLogger(__name__)

DEFAULT_ROSTER = MODELS / "roster.yaml"

Kind = Literal["llm", "debate", "researcher", "reverse", "house", "replay", "entrant"]
LLM_KINDS = frozenset({"llm", "debate", "researcher"})
HOUSE_STRATEGIES = frozenset(PARAMETERS)
MIRROR_WORST = "worst"  # ``mirror_of: worst``: the season's worst performer so far

_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MIN_REPLICATES, MAX_REPLICATES = 2, 20
REPLICATE_FIELDS = ("replicates", "seeds", "temperatures")  # consumed by the expansion
MAX_SEED = 2**63 - 1  # the ledger stores a seed as int64
_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Prefixes of real provider keys (OpenAI/Anthropic/OpenRouter sk-, Groq gsk_, xAI xai-,
# Hugging Face hf_, Google AIza, AWS AKIA, GitHub ghp_/github_pat_), at a word start.
_KEY_LIKE = re.compile(r"(?<![A-Za-z0-9])(?:sk-|sk_|gsk_|xai-|hf_|AIza|AKIA|ghp_|github_pat_)"
                       r"[A-Za-z0-9_\-]{6,}")
_SECRET_FIELDS = frozenset({"api_key", "apikey", "key", "token", "access_token", "secret",
                            "password", "authorization", "bearer"})
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class RosterError(UnusableInput, ValueError):
    """A roster that cannot be used; ``problems`` lists every finding, one line each."""

    def __init__(self, problems: list[str] | tuple[str, ...]) -> None:
        self.problems = tuple(problems)
        super().__init__("invalid roster:\n  " + "\n  ".join(self.problems))


def is_loopback(url: str | None) -> bool:
    """Whether ``url`` points at this machine (127.0.0.0/8, ::1 or localhost)."""
    if not url:
        return False
    host = (urlsplit(url).hostname or "").lower()
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def model_provider(spec: object) -> str | None:
    """The model provider whose capacity a roster entry's calls use: ``local`` for a model on
    this machine, else the provider prefix of its litellm model (``openai/gpt-4o`` -> ``openai``);
    None for a contestant without a model (a house agent, an outside agent)."""
    model = getattr(spec, "model", None)
    if not model:
        return None
    return "local" if is_loopback(getattr(spec, "api_base", None)) else model.split("/", 1)[0]


def instance_name(model: str, k: int) -> str:
    """The name of instance ``k`` (from 1) of the replicated entry ``model``: ``<model>-r<k>``."""
    return f"{model}-r{k}"


def _is_instance_name(name: str, model: str) -> bool:
    match = re.fullmatch(re.escape(model) + r"-r([1-9][0-9]*)", name)
    return match is not None and int(match.group(1)) <= MAX_REPLICATES


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Params(_Frozen):
    """Call parameters of a model contestant. ``timeout`` is seconds per HTTP attempt (litellm's
    timeout: each connect/read must progress within it), ``num_retries`` how many times a
    transient failure (429, 5xx, timeout, connection error) is retried; ``seed`` the sampling
    seed sent with every call (OpenAI's ``seed``: a provider that ignores it samples as it
    likes; a replicate's instances each have their own)."""

    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | None = Field(default=None, ge=0, le=MAX_SEED)
    max_tokens: int | None = Field(default=4096, gt=0)
    timeout: float = Field(default=120.0, gt=0, le=3600)
    num_retries: int = Field(default=2, ge=0, le=10)


class Prices(_Frozen):
    """US dollars per million tokens, for cost accounting of models litellm does not price."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.input_per_mtok + tokens_out * self.output_per_mtok) / 1e6


class ContestantSpec(_Frozen):
    """One roster entry (immutable). See the module docstring for the fields of each kind."""

    name: str
    kind: Kind
    description: str | None = None
    model: str | None = None
    api_base: str | None = None
    api_key_env: str | None = None
    params: Params = Params()
    prices: Prices | None = None
    mirror_of: str | None = None
    strategy: str | None = None
    # the strategy's own parameter class (dumped with its fields: a season's roster copy keeps it)
    strategy_params: SerializeAsAny[HouseParams] | None = None
    ledger_source: str | None = None
    # the model entry this contestant is an instance of (``replicates: N`` expanded it)
    replicate_of: str | None = None
    # the role the entry asks for (None: its kind's and parameters' own; see plays_as)
    role: str | None = None
    # the last month the model's training data may hold, "YYYY-MM" (None: not stated)
    knowledge_cutoff: str | None = None

    @field_validator("knowledge_cutoff", mode="before")
    @classmethod
    def _cutoff(cls, value: object) -> object:
        if value is None:
            return value
        text = str(value)  # YAML reads 2024-10 as the string it is; a date is refused below
        match = _MONTH.match(text)
        if not match or not 1 <= int(match.group(2)) <= 12:
            raise ValueError(f"must be a month, YYYY-MM (the last month the model's training "
                             f"data may hold, e.g. 2024-10), not {text!r}")
        return text

    @field_validator("role", mode="before")
    @classmethod
    def _role(cls, value: object) -> object:
        if value is not None and value not in ROLES:
            raise ValueError(f"must be {' or '.join(ROLES)}, not {value!r}: a contestant is "
                             "ranked; a ruler is one of the arena's own rules at its defaults "
                             "(a house entry without strategy_params)")
        return value

    @field_validator("name")
    @classmethod
    def _kebab(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError("must be kebab-case: lower-case letters and digits joined by '-'")
        if value == MIRROR_WORST:
            raise ValueError(f"'{MIRROR_WORST}' is reserved (mirror_of: {MIRROR_WORST})")
        return value

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.match(value):
            raise ValueError("must be the NAME of an environment variable (e.g. OPENAI_API_KEY)")
        return value

    @field_validator("api_base")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL such as http://127.0.0.1:8000/v1")
        if parts.username or parts.password:
            raise ValueError("must not carry credentials; use api_key_env")
        if parts.query:
            raise ValueError("must not carry a query string; use api_key_env for keys")
        return value

    @field_validator("model")
    @classmethod
    def _model(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or value != value.strip()):
            raise ValueError("must be a litellm model string such as openai/gpt-4o-mini")
        return value

    @field_validator("strategy_params", mode="before")
    @classmethod
    def _strategy_params(cls, value: object, info: ValidationInfo) -> HouseParams | None:
        """The house strategy's parameters, every problem on a line of its own
        (``strategy_params.size_pct: ...``). Left empty where the kind takes none or the strategy
        is unknown: the kind's and the strategy's own checks name the problem."""
        strategy = info.data.get("strategy")
        if value is None or info.data.get("kind") != "house" or strategy not in HOUSE_STRATEGIES:
            return None
        try:
            return house_params(strategy, value)
        except HouseParamsError as exc:
            raise ValidationError.from_exception_data(cls.__name__, [
                {"type": PydanticCustomError("house_parameter", "{problem}", {"problem": text}),
                 "loc": (name,) if name else (), "input": value}
                for name, text in exc.problems]) from None

    @model_validator(mode="after")
    def _kind_fields(self) -> ContestantSpec:
        required = {"reverse": "mirror_of", "house": "strategy", "replay": "ledger_source"}
        only_for = {"model": LLM_KINDS, "api_base": LLM_KINDS, "api_key_env": LLM_KINDS,
                    "prices": LLM_KINDS, "params": LLM_KINDS, "mirror_of": {"reverse"},
                    "strategy": {"house"}, "strategy_params": {"house"},
                    "ledger_source": {"replay"}, "replicate_of": LLM_KINDS,
                    "knowledge_cutoff": LLM_KINDS}
        for field_name, kinds in only_for.items():
            if field_name in self.model_fields_set and self.kind not in kinds:
                raise ValueError(f"{field_name}: not used by kind {self.kind} "
                                 f"(only by {', '.join(sorted(kinds))})")
        if self.kind in LLM_KINDS:
            if self.model is None:
                raise ValueError(f"model: required for kind {self.kind} "
                                 "(a litellm model string such as openai/gpt-4o-mini)")
            if self.api_key_env is None and self.api_base is None:
                raise ValueError("api_key_env: required unless api_base names a server that "
                                 "needs no key (e.g. a local one on 127.0.0.1)")
        elif self.kind in required and getattr(self, required[self.kind]) is None:
            raise ValueError(f"{required[self.kind]}: required for kind {self.kind}")
        if self.kind == "house" and self.strategy not in HOUSE_STRATEGIES:
            raise ValueError(f"strategy: unknown house strategy {self.strategy!r} "
                             f"(known: {', '.join(sorted(HOUSE_STRATEGIES))})")
        if self.role == RULER and self.plays_as != RULER:
            raise ValueError(self._not_a_ruler())
        if self.replicate_of is not None and not _is_instance_name(self.name, self.replicate_of):
            raise ValueError(f"replicate_of: an instance of {self.replicate_of!r} is named "
                             f"{self.replicate_of}-r<k> (k from 1 to {MAX_REPLICATES}), "
                             f"not {self.name!r}")
        return self

    def _not_a_ruler(self) -> str:
        """Why ``role: ruler`` is refused: the entry is not one of the arena's own rules at
        its defaults."""
        if self.kind != "house":
            return (f"role: ruler is only for the arena's own rules (kind house at its "
                    f"defaults); an entry of kind {self.kind} plays as a contestant: remove role")
        changed = ", ".join(changed_params(self.strategy_params))
        return (f"role: ruler is only for a house rule at its defaults; this entry changes "
                f"{changed}, so it is a strategy of its own and plays as a contestant: remove "
                "role, or strategy_params to play the arena's rule")

    @property
    def plays_as(self) -> str:
        """``ruler`` or ``contestant``: the role this entry plays in the season (see the
        module docstring); the one decision every report, mart and status reads."""
        if self.kind != "house":
            return CONTESTANT
        return house_role(self.strategy_params, self.role)

    @property
    def uses_model(self) -> bool:
        return self.kind in LLM_KINDS

    @property
    def is_local(self) -> bool:
        """A model served on this machine (``api_base`` on loopback)."""
        return is_loopback(self.api_base)


@dataclass(frozen=True)
class Skipped:
    """A contestant that cannot run this cycle, and why."""

    spec: ContestantSpec
    reason: str

    @property
    def name(self) -> str:
        return self.spec.name

    def __str__(self) -> str:
        return f"{self.spec.name}: {self.reason}"


@dataclass(frozen=True)
class Roster:
    """The validated, immutable roster."""

    contestants: tuple[ContestantSpec, ...]
    source: str = "<roster>"

    def __iter__(self) -> Iterator[ContestantSpec]:
        return iter(self.contestants)

    def __len__(self) -> int:
        return len(self.contestants)

    def __getitem__(self, name: str) -> ContestantSpec:
        for spec in self.contestants:
            if spec.name == name:
                return spec
        raise KeyError(f"{self.source}: no contestant named {name!r}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.contestants)

    @property
    def replicates(self) -> dict[str, tuple[str, ...]]:
        """Each replicated model entry's name and its instances' names, in roster order."""
        groups: dict[str, tuple[str, ...]] = {}
        for spec in self.contestants:
            if spec.replicate_of is not None:
                groups[spec.replicate_of] = (*groups.get(spec.replicate_of, ()), spec.name)
        return groups

    def available(self, env: Mapping[str, str]
                  ) -> tuple[tuple[ContestantSpec, ...], tuple[Skipped, ...]]:
        """``(runnable, skipped)`` given the environment ``env`` (usually ``os.environ``).

        A model contestant whose ``api_key_env`` is unset or empty in ``env`` is skipped; one with
        no ``api_key_env`` (a keyless server at ``api_base``, e.g. on loopback) runs. House and
        replay contestants always run; a reverse runs when the contestant it mirrors runs.
        """
        reasons: dict[str, str] = {}
        for spec in self.contestants:
            if spec.uses_model and spec.api_key_env and not env.get(spec.api_key_env):
                reasons[spec.name] = f"skipped: {spec.api_key_env} is not set"
        for spec in self.contestants:
            target = spec.mirror_of
            if spec.kind == "reverse" and target in reasons:
                cause = reasons[target].removeprefix("skipped: ")
                reasons[spec.name] = f"skipped: mirrors {target}, which is skipped ({cause})"
        runnable = tuple(s for s in self.contestants if s.name not in reasons)
        skipped = tuple(Skipped(s, reasons[s.name]) for s in self.contestants
                        if s.name in reasons)
        for item in skipped:
            log.info("contestant %s", item)
        return runnable, skipped


# -- loading -------------------------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a mapping with the same key twice (YAML would keep the last)."""


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"found duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def _find_secrets(value: Any, path: str) -> list[str]:
    """Paths of values that look like literal keys, or of fields named like secrets."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if str(key).lower() in _SECRET_FIELDS:
                found.append(f"{where}: keys never go in the roster; put the key in an "
                             "environment variable and give its name in api_key_env")
            else:
                found.extend(_find_secrets(item, where))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(_find_secrets(item, f"{path}[{i}]"))
    elif isinstance(value, str) and _KEY_LIKE.search(value):
        found.append(f"{path or 'value'}: looks like a literal API key (value not shown); put the "
                     "key in an environment variable and give its name in api_key_env")
    return found


def _label(index: int, raw: Any) -> str:
    name = raw.get("name") if isinstance(raw, Mapping) else None
    return f"contestant {name!r} (#{index + 1})" if isinstance(name, str) else \
        f"contestant #{index + 1}"


def _pydantic_problems(error: ValidationError) -> list[str]:
    problems = []
    for item in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        problems.append(f"{where}: {message}" if where else message)
    return problems


# why each kind that calls no model takes no replicates
_NOT_REPLICATED = {
    "house": "a house rule is deterministic, so its instances would play one book N times (and "
             "random, its zero-skill player, is the distribution the luck ruler already samples "
             "by the thousand); to compare variants give each its own entry and strategy_params",
    "reverse": "a reverse mirrors one contestant; mirror one of the instances instead",
    "replay": "a replay re-plays one recorded set of answers",
    "entrant": "an outside entrant is one agent answering through arena mcp",
}


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _listed(field_name: str, value: object, n: int, what: str, fits: Any) -> str | None:
    """Why ``value`` is not a list of ``n`` items that each ``fits`` (None: it is)."""
    if not isinstance(value, list):
        return f"{field_name}: must list {n} {what}, one per instance (got a {type(value).__name__})"
    if len(value) != n:
        return f"{field_name}: must list {n} {what}, one per instance (got {len(value)})"
    for k, item in enumerate(value, 1):
        if not fits(item):
            return f"{field_name}: must list {n} {what}, one per instance (item {k} is {item!r})"
    return None


def _replicate_plan(spec: ContestantSpec, asked: Mapping[str, Any]
                    ) -> tuple[list[tuple[int, float | None]], list[str]]:
    """The instances' ``(seed, temperature)`` of an entry that asked for replicates (``asked``:
    its ``replicates``, ``seeds``, ``temperatures``), or every problem with them."""
    if "replicates" not in asked:
        return [], [f"{name}: only with replicates: N (the instances' {name}, one each); a single "
                    f"contestant sets params.{name.removesuffix('s')}" for name in asked]
    n = asked["replicates"]
    if not _whole(n) or not MIN_REPLICATES <= n <= MAX_REPLICATES:
        return [], [f"replicates: must be a whole number from {MIN_REPLICATES} to "
                    f"{MAX_REPLICATES} (got {n!r})"]
    if spec.kind not in LLM_KINDS:
        return [], [f"replicates: only for the model kinds ({', '.join(sorted(LLM_KINDS))}), "
                    f"not {spec.kind}: {_NOT_REPLICATED[spec.kind]}"]
    if spec.replicate_of is not None:
        return [], [f"replicates: this entry is an instance of {spec.replicate_of!r} "
                    "(replicate_of); ask for replicates on the model's own entry"]
    problems = []
    seeds = asked.get("seeds", list(range(1, n + 1)))
    found = _listed("seeds", seeds, n, "whole numbers from 0", lambda v: _whole(v)
                    and 0 <= v <= MAX_SEED)
    if found:
        problems.append(found)
    if spec.params.seed is not None:
        problems.append(f"params.seed: a replicated entry's instances take their seeds from "
                        f"seeds: [..] (default 1 to {n}), not from params")
    temperatures = asked.get("temperatures", [spec.params.temperature] * n)
    if "temperatures" in asked:
        found = _listed("temperatures", temperatures, n, "numbers from 0 to 2",
                        lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
                        and 0 <= v <= 2)
        if found:
            problems.append(found)
        if spec.params.temperature is not None:
            problems.append("temperatures: give the instances' temperatures here or one "
                            "temperature in params, not both")
        if spec.kind == "debate":
            problems.append("temperatures: a debate sets its own temperature per role "
                            "(analysts 0.7, judge 0.2), so its instances differ by seed only")
    if problems:
        return [], problems
    plan = [(int(seed), None if t is None else float(t))
            for seed, t in zip(seeds, temperatures, strict=True)]
    first: dict[tuple[int, float | None], int] = {}
    for k, pair in enumerate(plan, 1):
        if pair in first:
            return [], [f"seeds: instances r{first[pair]} and r{k} would play with the same "
                        f"seed and temperature {pair}: one instance twice"]
        first[pair] = k
    return plan, []


def _instances(spec: ContestantSpec, plan: list[tuple[int, float | None]]
               ) -> list[ContestantSpec]:
    """The contestants ``<name>-r1`` .. ``<name>-rN`` of a replicated entry, each with its seed
    and temperature in its params and ``replicate_of`` naming the entry."""
    return [spec.model_copy(update={
        "name": instance_name(spec.name, k), "replicate_of": spec.name,
        "params": spec.params.model_copy(update={"seed": seed, "temperature": temperature})})
        for k, (seed, temperature) in enumerate(plan, 1)]


def parse_roster(text: str, source: str = "<roster>") -> Roster:
    """Validate roster YAML ``text``; ``source`` names it in errors. Raises :class:`RosterError`."""
    raws = _contestant_entries(_load_yaml(text, source), source)
    # Secrets first, before any value can reach a validation message.
    problems = [f"{source}: {_label(i, raw)}: {finding}" for i, raw in enumerate(raws)
                for finding in _find_secrets(raw, "")]
    if problems:
        raise RosterError(problems)
    specs, index_of, problems = _contestants(raws, source)
    by_name = {s.name: s for s in specs}
    models = Roster(tuple(specs)).replicates
    problems += _shared_model_names(models, by_name, index_of, source)
    problems += _mirror_problems(specs, by_name, models, index_of, source)
    if problems:
        raise RosterError(problems)
    return Roster(tuple(specs), source)


def _load_yaml(text: str, source: str) -> Any:
    """The roster's YAML read safely (a key given twice refused), or its error with where."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise RosterError([f"{source}: not valid YAML{where}: {problem}"]) from None


def _contestant_entries(data: Any, source: str) -> list[Any]:
    """The roster's ``contestants`` list, once the file's top level is a mapping of known fields
    with a non-empty list of them."""
    if not isinstance(data, Mapping) or not isinstance(data.get("contestants"), list):
        raise RosterError([f"{source}: expected a mapping with a 'contestants' list"])
    extra = sorted(set(data) - {"contestants", "version"})
    if extra:
        raise RosterError([f"{source}: unknown top-level field(s): {', '.join(map(str, extra))}"])
    raws = data["contestants"]
    if not raws:
        raise RosterError([f"{source}: the roster has no contestants"])
    return raws


def _contestants(raws: list[Any], source: str
                 ) -> tuple[list[ContestantSpec], dict[str, tuple[int, int | None]], list[str]]:
    """The contestants of the roster's entries in order (a replicated entry's instances in its
    place), each contestant's entry (an instance: its model's) with, for an instance, the
    entry's N; and every problem of the entries, labelled."""
    specs: list[ContestantSpec] = []
    problems: list[str] = []
    first_index: dict[str, int] = {}
    index_of: dict[str, tuple[int, int | None]] = {}
    for i, raw in enumerate(raws):
        label = _label(i, raw)
        if not isinstance(raw, Mapping):
            problems.append(f"{source}: {label}: expected a mapping of fields")
            continue
        name = raw.get("name")
        if isinstance(name, str) and name in first_index:
            problems.append(f"{source}: {label}: name: duplicate of contestant "
                            f"#{first_index[name] + 1}")
            continue
        if isinstance(name, str):
            first_index[name] = i
        made, n, found = _entry_contestants(raw)
        problems.extend(f"{source}: {label}: {p}" for p in found)
        for spec in made:
            if spec.name in index_of:  # an instance's name and another entry's
                problems.append(_clash(source, spec.name, index_of[spec.name], (i, n), raws))
                continue
            index_of[spec.name] = (i, n)
            specs.append(spec)
    return specs, index_of, problems


def _entry_contestants(raw: Mapping[str, Any]
                       ) -> tuple[list[ContestantSpec], int | None, list[str]]:
    """The contestants one entry gives (itself, or its N instances when it asks for replicates),
    N for a replicated entry (else None), and the entry's problems (then no contestant)."""
    asked = {f: raw[f] for f in REPLICATE_FIELDS if f in raw}
    try:
        spec = ContestantSpec.model_validate(
            {k: v for k, v in raw.items() if k not in REPLICATE_FIELDS})
    except ValidationError as exc:
        return [], None, _pydantic_problems(exc)
    plan, found = _replicate_plan(spec, asked) if asked else ([], [])
    if plan:
        return _instances(spec, plan), len(plan), found
    return ([] if found else [spec]), None, found


def _shared_model_names(models: Mapping[str, tuple[str, ...]],
                        by_name: Mapping[str, ContestantSpec],
                        index_of: Mapping[str, tuple[int, int | None]], source: str) -> list[str]:
    """A contestant named as a replicated model: the model's name names its instances."""
    return [f"{source}: contestant {model!r} (#{index_of[model][0] + 1}): name: {model!r} names "
            f"the model replicated by {', '.join(instances)}; a contestant cannot share it"
            for model, instances in models.items() if model in by_name]


def _mirror_problems(specs: list[ContestantSpec], by_name: Mapping[str, ContestantSpec],
                     models: Mapping[str, tuple[str, ...]],
                     index_of: Mapping[str, tuple[int, int | None]], source: str) -> list[str]:
    """Each reverse whose ``mirror_of`` names no contestant it can mirror: itself, a replicated
    model, no one, or another reverse (``worst`` is always one)."""
    problems = []
    for spec in specs:
        if spec.kind != "reverse" or spec.mirror_of == MIRROR_WORST:
            continue
        label = f"contestant {spec.name!r} (#{index_of[spec.name][0] + 1})"
        target = by_name.get(spec.mirror_of or "")
        if spec.mirror_of == spec.name:
            problems.append(f"{source}: {label}: mirror_of: cannot mirror itself")
        elif target is None and spec.mirror_of in models:
            instances = models[spec.mirror_of]
            problems.append(f"{source}: {label}: mirror_of: {spec.mirror_of!r} is a replicated "
                            f"model, not a contestant; mirror one of its instances "
                            f"({instances[0]} .. {instances[-1]})")
        elif target is None:
            problems.append(f"{source}: {label}: mirror_of: no contestant named "
                            f"{spec.mirror_of!r} in the roster (or use '{MIRROR_WORST}')")
        elif target.kind == "reverse":
            problems.append(f"{source}: {label}: mirror_of: {spec.mirror_of!r} is itself a "
                            "reverse; mirror the original instead")
    return problems


def _clash(source: str, name: str, first: tuple[int, int | None],
           later: tuple[int, int | None], raws: list[Any]) -> str:
    """The problem of two entries giving the contestant ``name``, one of them as an instance of a
    replicated entry (an entry's index, and N for a replicated one), naming both."""
    (i, n), (j, m) = first, later
    if m is None:
        return (f"{source}: {_label(j, raws[j])}: name: clashes with instance {name!r} of "
                f"{_label(i, raws[i])} (replicates: {n}); rename one of them")
    return (f"{source}: {_label(j, raws[j])}: replicates: its instance {name!r} clashes with "
            f"{_label(i, raws[i])}; rename one of them")


def load_roster(path: str | Path | None = None) -> Roster:
    """Load and validate the roster file (default: ``models/roster.yaml``)."""
    chosen = Path(path) if path is not None else DEFAULT_ROSTER
    try:
        text = chosen.read_text(encoding="utf-8")
    except OSError as exc:
        raise RosterError([f"{chosen}: cannot read the roster: {exc.strerror or exc}"]) from None
    return parse_roster(text, str(chosen))
