"""The single-call LLM contestant: one ``litellm.completion`` call per answer (and one per repair).

:class:`LLMContestant` sends the briefing's messages to the roster's model and returns the raw
text (parsing is the engine's job). The repair continues the same conversation: the previous
messages, the assistant's answer, then the follow-up as a user message.

:func:`complete` is the one call path, reusable by other kinds (debate, researcher): retries,
timeouts, cost and secret hygiene live here.

**Retries.** litellm's own ``num_retries`` is not used: in litellm 1.x it retries *every*
``openai.APIError`` (a 400 included) through ``completion_with_retries``, which needs the
``tenacity`` package (not a litellm dependency; without it the first retry raises an unrelated
``tenacity import failed`` error), and it also becomes the OpenAI SDK's ``max_retries``, so
attempts multiply. Each call here is made with ``num_retries=0, max_retries=0`` (exactly one HTTP
request) and :func:`complete` retries transient failures itself (a ``tenacity.Retrying`` with this
module's :func:`classify` as its predicate): timeouts, lost connections, 429 and 5xx answers that
a server really sent, with exponential backoff (or the server's ``Retry-After``). A 400/401/404
and a malformed body (litellm reports an unparseable 200 as a synthetic 500 without response
headers) are not retried. (Do not set the global
``litellm.num_retries``: litellm reads ``num_retries=0`` as "unset" and would fall back to it.)

**Empty answers.** A call that succeeded with empty content is the model's answer, ``""``: the
engine reads it as an unparseable answer and sends the repair follow-up. Only a call that never
produced a response (refused, timed out, an HTTP error after retries) returns ``text=None``.

**Text.** Outgoing messages are made storable (:func:`arena.core.text.json_value`): a lone
surrogate a model sent earlier in the conversation (half an emoji) would otherwise make the
request body fail to encode. Answers come back exactly as the model sent them.

**Timeouts.** ``params.timeout`` goes to litellm as the httpx timeout: connecting and every read
must progress within it, so a silent server fails after about ``timeout`` seconds (then retried
as transient), but a server that keeps trickling bytes is not cut off at ``timeout`` in total.

**Cost.** ``prices`` from the roster (USD per million tokens) when given; otherwise litellm's
offline price map when it knows the model; otherwise ``None``. Prices are computed here rather
than registered with ``litellm.register_model``, which would change process-wide state keyed by a
model string that two local contestants may share.

**Secrets.** The key is read from the environment at call time and passed to litellm only. It is
scrubbed from every error text, the answer and the transcript, and a logging filter scrubs it
from litellm's, openai's and httpx's log records (litellm's own redaction only knows common key
patterns). A contestant without ``api_key_env`` sends a placeholder key, so that litellm never
falls back to an ambient ``OPENAI_API_KEY`` and hands it to a local server.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from arena.agents.base import KeysStayBehind, Reply
from arena.agents.roster import ContestantSpec
from arena.core import settings
from arena.core.text import json_value
from arena.core.types import Briefing, CallRecord, Message

log = logging.getLogger(__name__)

NO_KEY = "no-key"  # sent to servers that need no key (never an ambient OPENAI_API_KEY)
REDACTED = "[redacted]"
MAX_ERROR_CHARS = 600
_SCRUBBED_LOGGERS = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "openai", "openai._base_client",
                     "httpx", "httpcore", __name__)

_litellm: ModuleType | None = None
_import_lock = threading.Lock()
_secrets: set[str] = set()
_secrets_lock = threading.Lock()


# -- secret hygiene ------------------------------------------------------------------------------


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every (non-empty) secret replaced by ``[redacted]``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def _remember_secret(secret: str) -> None:
    """Scrub ``secret`` from log records from now on (keys shorter than 8 characters are only
    scrubbed from this module's own texts, to keep the log filter from mangling common words)."""
    if len(secret) >= 8:
        with _secrets_lock:
            _secrets.add(secret)


class _SecretFilter(logging.Filter):
    """Scrubs the keys in use from log records (message, arguments and exception text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        with _secrets_lock:
            secrets = tuple(_secrets)
        if not secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken record is not ours to fix
            return True
        if any(s in message for s in secrets):
            record.msg, record.args = scrub(message, secrets), None
        if record.exc_info and record.exc_info[1] is not None:
            text = "".join(traceback.format_exception(*record.exc_info))
            if any(s in text for s in secrets):
                record.exc_text = scrub(text.rstrip("\n"), secrets)
                record.exc_info = None
        return True


_secret_filter = _SecretFilter()


def load_litellm() -> ModuleType:
    """Import litellm once, quiet, with secret scrubbing.

    The import takes seconds, so it happens on the first call, never at module import. It is
    offline (local price map, no network) when the process was prepared at its edge
    (:func:`arena.core.settings.prepare_process`); this function changes no environment.
    """
    global _litellm
    if _litellm is not None:
        return _litellm
    with _import_lock:
        if _litellm is None:
            if not settings.process_prepared():
                log.warning("importing litellm in a process that was not prepared: litellm will "
                            "try the network for its price map; call "
                            "arena.core.settings.prepare_process() at the start of the process")
            import litellm

            litellm.suppress_debug_info = True  # no "Give Feedback" banner on stdout
            for name in _SCRUBBED_LOGGERS:
                logger = logging.getLogger(name)
                if _secret_filter not in logger.filters:
                    logger.addFilter(_secret_filter)
            _litellm = litellm
    return _litellm


_warmed = False


def warm_calls() -> None:
    """Import litellm and what its first completion of a process imports besides (about 40
    modules, 0.4 s: HTTP/2, the proxy's types...), by one mocked completion (no request, no
    key), once per process. A fan-out calls it before its turns start: otherwise every turn's
    first call queues on the import locks of the first one, and the calls leave one by one."""
    global _warmed
    if _warmed:
        return
    litellm = load_litellm()
    with _import_lock:
        if not _warmed:
            try:
                litellm.completion(model="openai/warm-up", mock_response="-",
                                   messages=[{"role": "user", "content": "-"}])
            except Exception as exc:  # the first real call imports them instead
                log.debug("litellm's warm-up call failed: %s", exc)
            _warmed = True


# -- error classification ------------------------------------------------------------------------


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _is_transport_error(exc: BaseException) -> bool:
    """A timeout or a lost/refused connection anywhere in the exception chain."""
    for link in _chain(exc):
        if isinstance(link, (TimeoutError, ConnectionError)):
            return True
        package = type(link).__module__.split(".")[0]
        bases = {cls.__name__ for cls in type(link).__mro__}
        if package in ("httpx", "httpcore") and bases & {"TransportError", "TimeoutException"}:
            return True
        # The OpenAI SDK raises APIConnectionError for transport failures only; litellm's own
        # APIConnectionError (a subclass) is its catch-all for anything unmapped, so not that.
        if package == "openai" and "APIConnectionError" in bases:
            return True
    return False


def classify(exc: BaseException) -> tuple[str, bool]:
    """``(category, transient)`` of a failed litellm call.

    Transient (retried): ``timeout``, ``connection``, ``rate_limit`` (429 except an exhausted
    quota) and ``server`` (a 5xx or 408 the server really sent). Not retried: ``bad_request``
    (400, 413, 422), ``auth`` (401, 403), ``not_found`` (404), ``bad_response`` (a body litellm
    could not read, reported as a 500 without response headers) and anything else (``error``).
    """
    litellm = load_litellm()
    if isinstance(exc, litellm.Timeout):
        return "timeout", True
    status = getattr(exc, "status_code", None)
    real_response = getattr(exc, "litellm_response_headers", None) is not None
    if isinstance(exc, litellm.RateLimitError) or status == 429:
        quota = "insufficient_quota" in str(exc) or "quota" in str(getattr(exc, "code", ""))
        return "rate_limit", not quota
    if isinstance(status, int) and (status >= 500 or status == 408) and real_response:
        return "server", True
    if _is_transport_error(exc):
        timed_out = any(isinstance(link, TimeoutError) or "Timeout" in type(link).__name__
                        for link in _chain(exc))
        return ("timeout" if timed_out else "connection"), True
    if status in (401, 403):
        return "auth", False
    if status == 404:
        return "not_found", False
    if status in (400, 413, 422):
        return "bad_request", False
    if isinstance(status, int) and status >= 500:
        return "bad_response", False
    return "error", False


def _retry_after(exc: BaseException) -> float | None:
    """The server's ``Retry-After`` (seconds), when it sent one."""
    headers = getattr(exc, "litellm_response_headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000.0
        if headers.get("retry-after"):
            return float(headers["retry-after"])
    except (TypeError, ValueError):  # an HTTP date: fall back to our own backoff
        return None
    return None


# -- the call ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff between attempts: ``backoff_s`` doubling per retry (plus up to 25% jitter), or the
    server's ``Retry-After``; never more than ``max_backoff_s``."""

    backoff_s: float = 1.0
    max_backoff_s: float = 30.0

    def delay(self, retry: int, retry_after: float | None) -> float:
        wait = self.backoff_s * (2.0 ** retry) * (1.0 + 0.25 * random.random())
        if retry_after is not None:
            wait = retry_after
        return max(0.0, min(wait, self.max_backoff_s))


@dataclass(frozen=True)
class Completion:
    """The outcome of :func:`complete`: the answer text (``None`` on failure), its call record,
    and the raw litellm response of the successful attempt (tool calls, finish reason, ...)."""

    text: str | None
    record: CallRecord
    response: Any = None

    @property
    def error(self) -> str | None:
        return self.record.error


def _cost(litellm: ModuleType, spec: ContestantSpec, response: Any,
          tokens_in: int | None, tokens_out: int | None) -> float | None:
    if tokens_in is None or tokens_out is None:
        return None
    if spec.prices is not None:
        return spec.prices.cost(tokens_in, tokens_out)
    try:
        cost = litellm.completion_cost(completion_response=response, model=spec.model)
    except Exception:  # not in the price map
        return None
    return float(cost) if cost else None


def _usage(response: Any) -> tuple[int | None, int | None]:
    usage = getattr(response, "usage", None)
    tokens_in = getattr(usage, "prompt_tokens", None)
    tokens_out = getattr(usage, "completion_tokens", None)
    return (int(tokens_in) if tokens_in is not None else None,
            int(tokens_out) if tokens_out is not None else None)


def _tool_calls(response: Any) -> list[Any]:
    try:
        return list(response.choices[0].message.tool_calls or [])
    except (AttributeError, IndexError, TypeError):
        return []


def _content(response: Any) -> str:
    """The answer's text: ``""`` when the model sent none (an empty answer is still an answer)."""
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError):
        return ""
    return content if isinstance(content, str) else ""


@dataclass(frozen=True)
class _Call:
    """One model call as its records and log lines name it: the contestant and its role, the
    model, the secrets to scrub, the attempts' settings and what the call samples with."""

    name: str
    role: str
    model: str
    secrets: tuple[str, ...]
    timeout: float
    num_retries: int
    seed: int | None
    temperature: float | None
    replicate_of: str | None

    @classmethod
    def of(cls, spec: ContestantSpec, role: str, contestant: str | None, key: str,
           overrides: Mapping[str, Any]) -> _Call:
        """The call of ``spec`` in ``role`` (as ``contestant``, default the spec's name) with
        ``key``; its sampling the roster's params under the call's ``overrides`` (a replicate's
        instance: its model entry too)."""
        params = spec.params
        return cls(name=contestant or spec.name, role=role, model=spec.model or "",
                   secrets=(key,) if spec.api_key_env and key else (),
                   timeout=params.timeout, num_retries=params.num_retries,
                   seed=overrides.get("seed", params.seed),
                   temperature=overrides.get("temperature", params.temperature),
                   replicate_of=spec.replicate_of)

    def record(self, **measured: Any) -> CallRecord:
        """The call's record: who, which model, what it sampled with, and what was ``measured``."""
        return CallRecord(self.name, self.role, self.model, seed=self.seed,
                          temperature=self.temperature, replicate_of=self.replicate_of, **measured)

    def failed(self, error: str, retries: int = 0, latency: float = 0.0) -> Completion:
        """The call's failure: ``error`` scrubbed and cut to length, logged as a warning."""
        text = scrub(error, self.secrets)[:MAX_ERROR_CHARS]
        log.warning("%s (%s): %s", self.name, self.role, text)
        return Completion(None, self.record(latency_s=latency, retries=retries, error=text))

    def describe(self, exc: BaseException) -> str:
        """A failed attempt's error as its record tells it: its category, then the exception."""
        category = classify(exc)[0]
        if category == "timeout":
            return scrub(f"timeout: no answer within {self.timeout:g} s "
                         f"({type(exc).__name__}: {exc})", self.secrets)
        return scrub(f"{category}: {type(exc).__name__}: {exc}", self.secrets)


def complete(spec: ContestantSpec, messages: Sequence[Message], *, role: str,
             contestant: str | None = None, env: Mapping[str, str] | None = None,
             retry: RetryPolicy = RetryPolicy(), sleep: Callable[[float], None] = time.sleep,
             raw_messages: Sequence[Mapping[str, Any]] | None = None,
             **overrides: Any) -> Completion:
    """One model answer to ``messages`` through litellm, retrying transient failures.

    ``overrides`` are passed to ``litellm.completion`` on top of the roster's params (e.g.
    ``temperature`` for a debate role, ``tools`` for a researcher). Never raises for a failed
    call: the record's ``error`` says what happened (scrubbed of the key). ``latency_s`` is the
    wall time of the whole answer, retries and backoff included.
    """
    env = os.environ if env is None else env
    key = env.get(spec.api_key_env, "") if spec.api_key_env else NO_KEY
    call = _Call.of(spec, role, contestant, key, overrides)
    if spec.api_key_env and not key:
        return call.failed(f"missing_key: {spec.api_key_env} is not set")
    if call.secrets:
        _remember_secret(key)
    litellm = load_litellm()
    kwargs = _completion_kwargs(spec, messages, raw_messages, key, overrides)
    attempts = _attempts(call, retry, sleep)
    started = time.monotonic()
    try:
        response = attempts(litellm.completion, **kwargs)
    except Exception as exc:
        retries = attempts.statistics["attempt_number"] - 1
        suffix = f" after {retries + 1} attempts" if retries else ""
        return call.failed(call.describe(exc) + suffix, retries, time.monotonic() - started)
    retries = attempts.statistics["attempt_number"] - 1
    return _answered(call, litellm, spec, response, retries, time.monotonic() - started)


def _completion_kwargs(spec: ContestantSpec, messages: Sequence[Message],
                       raw_messages: Sequence[Mapping[str, Any]] | None, key: str,
                       overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of one ``litellm.completion`` attempt: the messages made storable, the key,
    the roster's params, exactly one HTTP request, then the call's ``overrides``."""
    params = spec.params
    kwargs: dict[str, Any] = {
        "model": spec.model or "",
        # raw_messages: OpenAI-format dicts (tool calls and tool results of a researcher); every
        # string made storable, the tool calls' arguments a model wrote included
        "messages": json_value(list(raw_messages) if raw_messages is not None
                               else [{"role": m.role, "content": m.content} for m in messages]),
        "api_key": key,
        "timeout": params.timeout,
        "num_retries": 0,  # retries are ours (see the module docstring)
        "max_retries": 0,  # nor the OpenAI SDK's own
        "drop_params": True,  # a parameter a provider does not support is dropped, not a 400
    }
    if spec.api_base:
        kwargs["api_base"] = spec.api_base
    if params.temperature is not None:
        kwargs["temperature"] = params.temperature
    if params.seed is not None:
        kwargs["seed"] = params.seed  # OpenAI's sampling seed (a replicate's instance has its own)
    if params.max_tokens is not None:
        kwargs["max_tokens"] = params.max_tokens
    kwargs.update(overrides)
    return kwargs


def _attempts(call: _Call, retry: RetryPolicy, sleep: Callable[[float], None]) -> Retrying:
    """The attempts of ``call``: transient failures (:func:`classify`) retried up to the roster's
    ``num_retries`` after ``retry``'s backoff (or the server's ``Retry-After``), each retry
    logged; the last failure raised."""

    def wait(state: RetryCallState) -> float:  # attempt n failed: the n-th retry's backoff
        exc = state.outcome.exception() if state.outcome else None
        retry_after = _retry_after(exc) if exc is not None else None
        return retry.delay(state.attempt_number - 1, retry_after)

    def log_retry(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        wait_s = state.next_action.sleep if state.next_action else 0.0
        log.info("%s (%s): retry %d/%d in %.2f s after %s", call.name, call.role,
                 state.attempt_number, call.num_retries, wait_s,
                 call.describe(exc)[:200] if exc else "")

    return Retrying(
        retry=retry_if_exception(lambda exc: isinstance(exc, Exception) and classify(exc)[1]),
        stop=stop_after_attempt(call.num_retries + 1), wait=wait,
        sleep=lambda seconds: sleep(float(seconds)), before_sleep=log_retry, reraise=True)


def _answered(call: _Call, litellm: ModuleType, spec: ContestantSpec, response: Any,
              retries: int, latency: float) -> Completion:
    """The completion of a call that got ``response``: its text (scrubbed), tokens and cost; a
    warning when the model returned neither text nor a tool call."""
    tokens_in, tokens_out = _usage(response)
    cost = _cost(litellm, spec, response, tokens_in, tokens_out)
    text = _content(response)
    if not text.strip() and not _tool_calls(response):  # a tool call is an answer without text
        log.warning("%s (%s): the model returned no text", call.name, call.role)
    record = call.record(tokens_in=tokens_in, tokens_out=tokens_out, latency_s=latency,
                         cost_usd=cost, retries=retries)
    return Completion(scrub(text, call.secrets), record, response)


# -- the contestant ------------------------------------------------------------------------------


def _finish_reason(response: Any) -> str | None:
    try:
        return response.choices[0].finish_reason
    except (AttributeError, IndexError, TypeError):
        return None


def reply_from(done: Completion, history: Sequence[Message],
               calls: Sequence[CallRecord] | None = None,
               extra: Mapping[str, Any] | None = None) -> Reply:
    """The contestant's reply for a finished call: the answer appended to ``history``, or the
    call's error (``calls`` default to this call's record)."""
    calls = tuple(calls) if calls is not None else (done.record,)
    extra = dict(extra or {})
    if done.text is None:
        return Reply(None, calls, tuple(history), error=done.error, extra=extra)
    return Reply(done.text, calls, (*history, Message("assistant", done.text)), extra=extra)


class LLMContestant(KeysStayBehind):
    """A roster contestant of kind ``llm``: one model call per answer, one per repair.

    ``env`` is where the key is looked up at call time (default: ``os.environ``); ``retry`` and
    ``sleep`` tune the backoff between attempts (tests make it fast).
    """

    kind = "llm"

    def __init__(self, spec: ContestantSpec, *, env: Mapping[str, str] | None = None,
                 retry: RetryPolicy = RetryPolicy(),
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if spec.model is None:
            raise ValueError(f"contestant {spec.name!r} has no model")
        self.spec = spec
        self.name = spec.name
        self._env = env
        self._retry = retry
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"LLMContestant({self.name!r}, model={self.spec.model!r})"

    def _secrets(self) -> tuple[str, ...]:
        if not self.spec.api_key_env:
            return ()
        env = os.environ if self._env is None else self._env
        key = env.get(self.spec.api_key_env, "")
        return (key,) if key else ()

    def _ask(self, messages: tuple[Message, ...], role: str) -> Reply:
        done = complete(self.spec, messages, role=role, env=self._env, retry=self._retry,
                        sleep=self._sleep)
        secrets = self._secrets()
        transcript = tuple(Message(m.role, scrub(m.content, secrets)) for m in messages)
        extra: dict[str, Any] = {}
        if done.response is not None:
            extra = {"finish_reason": _finish_reason(done.response),
                     "response_model": getattr(done.response, "model", None),
                     "response_id": getattr(done.response, "id", None)}
        return reply_from(done, transcript, extra=extra)

    def answer(self, briefing: Briefing) -> Reply:
        """The model's raw answer to the briefing's messages (never raises)."""
        return self._ask(tuple(briefing.messages), "decision")

    def repair(self, briefing: Briefing, previous: Reply, follow_up: str) -> Reply:
        """One follow-up in the same conversation: ``previous.transcript`` (the prompt and the
        assistant's answer) plus ``follow_up`` as a user message (never raises)."""
        history = tuple(previous.transcript) or tuple(briefing.messages)
        return self._ask((*history, Message("user", follow_up)), "repair")
