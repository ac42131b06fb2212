"""``arena mcp``: the door through which outside agents enter a season, over the Model Context
Protocol (the official ``mcp`` SDK, streamable HTTP, 127.0.0.1 by default).

Every request carries an entrant's key (``arena entrant add`` prints it once) as a bearer token
or in the door's key header (:data:`KEY_HEADER` unless ``arena mcp --key-header`` names another:
the header contest clients of the FINCHAL style send, :class:`KeyHeader`); a missing, wrong or
revoked key gets HTTP 401 before any tool runs, and a tool only ever acts for the entrant its key
names - no tool takes another entrant's name. The tools are the ones of
:mod:`arena.pipeline.outside`: ``rules``, ``data``, ``submit_decision``, ``submissions``,
``submit_position`` and ``score``, and the names such contest clients call them by
(:data:`ALIASES`: ``get_rules``, ``get_data``, ``check_score``; ``submit_position`` takes
their ``asset`` and ``position`` as well as ``positions``), each the same implementation under
a second name; the server's clock stamps every request.

An agent finds the door without a key: ``GET /llms.txt`` (:mod:`arena.doors.entrance`) says how
to enter and lists the registered tools, in English, Polish, Chinese and Korean; the 401 says
in its JSON body what to send and where keys come from, and its ``WWW-Authenticate: Bearer``
challenge points at the RFC 9728 protected-resource metadata (:data:`METADATA_PATH`), which names bearer
keys in the header and no authorization server, so a client that follows the spec's discovery
learns there is no OAuth to start.

Descriptions are served in the language of the request's ``Accept-Language`` (English, Polish,
Chinese, Korean; English otherwise). A request body over 64 KiB gets HTTP 413; an entrant
making more than :data:`RATE` requests a minute - any MCP method, ``tools/list`` and ``initialize``
included - is told to wait (a tool error for a tool call, a JSON-RPC error otherwise). An HTTP
request must arrive whole within :data:`REQUEST_TIMEOUT` seconds of the connection being
ready for it, so a half-open connection is dropped (:func:`server_config`, the doors' one
uvicorn configuration: :mod:`arena.doors.deadline`). Bearer keys travel
in clear over plain HTTP: serve on loopback (the default, where the SDK also guards against DNS
rebinding) or behind a TLS proxy; bad arguments and refusals come back as tool
errors naming the problem. None of them touches the other entrants or stops the server.
A submission the decision contract cannot read is refused with the contract's reasons and
never kept (:func:`arena.pipeline.outside.submit_decision`), so the entrant's last valid
submission is the one that executes.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import pandas as pd
import uvicorn
from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.routes import build_resource_metadata_url, cors_middleware
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.auth import ProtectedResourceMetadata
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from arena.core.errors import BadArgument
from arena.data.lake import Lake
from arena.doors.deadline import REQUEST_TIMEOUT
from arena.doors.deadline import server_config as door_config
from arena.doors.entrance import BEARER, Door, ToolDoc, llms_txt, signature
from arena.doors.limits import SlidingWindow
from arena.market.sections import rule_fields
from arena.pipeline.entrants import KEY_PREFIX, Entrant, EntrantError, authenticate, entrants
from arena.pipeline.live.cycle import season_rules
from arena.pipeline.outside import (
    ELIGIBLE_SHARE,
    Arena,
    OutsideError,
    candles,
    entrant_score,
    own_submissions,
    rules,
    submit_decision,
    submit_positions,
)
from arena.pipeline.season_config import load_season

HOST, PORT, PATH = "127.0.0.1", 8765, "/mcp"
LLMS_PATH = "/llms.txt"
METADATA_PATH = "/.well-known/oauth-protected-resource"  # RFC 9728; + PATH for the endpoint's
MAX_BODY = 64 * 1024  # bytes a request may carry
RATE = 60  # requests (any MCP method) an entrant may make in any minute
RATE_LIMITED = -32029  # the JSON-RPC error code of a refused request (server-defined range)
LANGUAGES = ("en", "pl", "zh", "ko")
# the second header a key may come in, beside ``Authorization: Bearer``: the one contest clients
# of the FINCHAL style send (``arena mcp --key-header`` names another)
KEY_HEADER = "X-Finchal-Key"
FIELD_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}")  # an HTTP field name (RFC 9110 5.1)
# headers HTTP, the MCP transport or a proxy in front reads for something else: never a key's
TAKEN_HEADERS = frozenset({
    "authorization", "host", "content-type", "content-length", "content-encoding", "accept",
    "accept-language", "accept-encoding", "connection", "keep-alive", "transfer-encoding", "te",
    "upgrade", "expect", "cookie", "origin", "user-agent", "forwarded", "x-forwarded-for",
    "x-forwarded-proto", "x-forwarded-host", "mcp-session-id", "mcp-protocol-version",
    "last-event-id", "www-authenticate", "proxy-authorization"})
DAILY = "1d"  # the interval of ``get_data`` when it names none: daily closes
# what a key looks like (``arena entrant add``): anything else is refused without a lake read
KEY_SHAPE = re.compile(re.escape(KEY_PREFIX) + r"[A-Za-z0-9_-]{1,128}")
WHERE_KEYS_COME_FROM = (
    "an operator of this arena registers you with `arena entrant add NAME` and hands you the "
    "key that command prints once (it starts with 'arena_'); there is no sign-up and no OAuth")

DESCRIPTIONS: dict[str, dict[str, str]] = {
    "rules": {
        "en": "The season's rules: assets, fees, cycle time and submission deadline, the "
              "decision contract, the reason codes of rejections, and the luck ceiling per "
              "asset so far.",
        "pl": "Zasady sezonu: aktywa, opłaty, godzina cyklu i termin zgłoszeń, kontrakt "
              "decyzji, kody powodów odrzuceń oraz dotychczasowy pułap szczęścia dla każdego "
              "aktywa.",
        "zh": "本赛季规则：资产、费用、周期时间与提交截止时间、决策契约、拒绝原因代码，以及迄今每个资产的运气上限。",
        "ko": "이번 시즌의 규칙: 자산, 수수료, 사이클 시각과 제출 마감, 결정 계약, 거부 사유 코드, 그리고 "
              "지금까지의 자산별 운 상한.",
    },
    "data": {
        "en": "Candles of one asset and interval (15m, 1h, 4h, 1d, 1w) closed by now, the "
              "last `limit` of them; never a bar after the present. An asset or interval the "
              "arena does not hold is refused.",
        "pl": "Świece jednego aktywa i interwału (15m, 1h, 4h, 1d, 1w) zamknięte do teraz, "
              "ostatnie `limit` z nich; nigdy słupek z przyszłości. Aktywo lub interwał, "
              "którego arena nie ma, zostaje odrzucone.",
        "zh": "某资产在某周期（15m、1h、4h、1d、1w）截至当前已收盘的K线，最近 `limit` 根；绝不返回未来的K线。竞技场没有的资产或周期会被拒绝。",
        "ko": "한 자산의 한 주기(15m, 1h, 4h, 1d, 1w) 캔들 중 지금까지 마감된 마지막 `limit`개. "
              "현재 이후의 봉은 절대 주지 않습니다. 아레나에 없는 자산이나 주기는 거부됩니다.",
    },
    "submit_decision": {
        "en": "Submit an arena answer (a JSON object with a `decisions` list, as the rules' "
              "contract says) for the coming cycle. An answer the contract cannot read (not "
              "one JSON object with a `decisions` list, or a decision with a missing or "
              "mistyped field) is refused with the reasons and not kept. A readable one is "
              "checked at once against your portfolio and the latest prices: the rejections "
              "and reasons come back now, and you may submit again until the deadline. The "
              "last valid submission before the cycle executes there; none is a hold.",
        "pl": "Zgłoś odpowiedź areny (obiekt JSON z listą `decisions`, zgodnie z kontraktem z "
              "zasad) na nadchodzący cykl. Odpowiedź, której kontrakt nie potrafi odczytać "
              "(nie jeden obiekt JSON z listą `decisions` albo decyzja z brakującym polem lub "
              "polem złego typu), zostaje odrzucona wraz z powodami i nie jest zachowywana. "
              "Odczytana jest od razu sprawdzana względem twojego portfela i najnowszych cen: "
              "odrzucenia i powody wracają natychmiast i możesz zgłaszać ponownie do terminu. "
              "Wykonywane jest ostatnie ważne zgłoszenie przed cyklem; brak zgłoszenia oznacza "
              "wstrzymanie.",
        "zh": "为下一个周期提交竞技场答案（按规则中的契约，一个包含 `decisions` 列表的 JSON 对象）。契约无法读取的答案（不是一个带 `decisions` 列表的 JSON 对象，或某个决策缺少字段、字段类型错误）会被拒绝并返回原因，且不会保存。可读取的答案会立即根据你的投资组合和最新价格进行检查：拒绝及原因会马上返回，截止前你可以再次提交。周期前最后一次有效的提交将在该周期执行；没有提交即为持有不动。",
        "ko": "다가오는 사이클에 아레나 답변(규칙의 계약대로 `decisions` 목록을 가진 JSON 객체)을 "
              "제출합니다. 계약이 읽을 수 없는 답변(`decisions` 목록을 가진 JSON 객체 하나가 "
              "아니거나, 어떤 결정에 필드가 빠졌거나 형식이 틀린 경우)은 사유와 함께 거부되며 "
              "보관되지 않습니다. 읽을 수 있는 답변은 즉시 당신의 포트폴리오와 최신 가격으로 "
              "점검되어 거부 항목과 사유가 바로 돌아오고, 마감 전까지 다시 제출할 수 있습니다. "
              "사이클 전 마지막 유효 제출이 그 사이클에서 실행되며, 제출이 없으면 보유 유지입니다.",
    },
    "submissions": {
        "en": "Your own submissions for the coming cycle, oldest first, and the text of the "
              "last one (the one that counts).",
        "pl": "Twoje własne zgłoszenia na nadchodzący cykl, od najstarszego, oraz treść "
              "ostatniego (to ono się liczy).",
        "zh": "你为下一个周期提交的内容（按时间先后排列），以及最后一次提交的文本（以它为准）。",
        "ko": "다가오는 사이클에 대한 당신의 제출들(오래된 것부터)과 마지막 제출(유효한 것)의 본문.",
    },
    "submit_position": {
        "en": "Single-asset track: a position in [-1, +1] per asset (-1 short, +1 long, 0 "
              "flat), held from the first bar close at or after it arrives; values outside are clipped and the "
              "reply says so. Send `positions` (asset to position, several at once) or one "
              "`asset` with its `position`.",
        "pl": "Ścieżka jednego aktywa: pozycja w [-1, +1] dla aktywa (-1 krótka, +1 długa, 0 "
              "brak), utrzymywana od pierwszego zamknięcia słupka w chwili jej nadejścia lub później; wartości spoza zakresu są "
              "przycinane, o czym mówi odpowiedź. Wyślij `positions` (aktywo → pozycja, kilka "
              "naraz) albo jedno `asset` z jego `position`.",
        "zh": "单资产赛道：每个资产一个 [-1, +1] 区间的仓位（-1 做空，+1 做多，0 空仓），从其到达时或之后的第一根K线收盘起持有；超出范围的值会被截断，回复中会说明。"
              "发送 `positions`（资产到仓位的映射，可一次多个），或一个 `asset` 及其 `position`。",
        "ko": "단일 자산 트랙: 자산별로 [-1, +1] 범위의 포지션(-1 숏, +1 롱, 0 무포지션)이며 도착 "
              "시점 또는 그 이후 첫 봉의 종가부터 유지됩니다. 범위를 벗어난 값은 잘리고 응답이 그렇게 알려 줍니다. "
              "`positions`(자산 → 포지션, 한 번에 여러 개) 또는 하나의 `asset`과 그 `position`을 "
              "보내세요.",
    },
    "score": {
        "en": "Your return, place, luck percentile and rank score against the zero-skill "
              "players, your skill percentile against your matched players (your own book on "
              "assets drawn at random), your eligibility (valid submissions for at least 70% of the cycles "
              "since you joined) and your single-asset tracks; name an `asset` for its track "
              "alone.",
        "pl": "Twój zwrot, miejsce, percentyl szczęścia i wynik rangi względem graczy bez "
              "umiejętności, percentyl umiejętności względem dopasowanych graczy (twój portfel "
              "na losowo wybranych aktywach), twoja kwalifikacja (ważne zgłoszenia w co najmniej 70% cykli od "
              "dołączenia) oraz twoje ścieżki jednego aktywa; podaj `asset`, aby zobaczyć tylko "
              "ścieżkę tego aktywa.",
        "zh": "你的收益、名次、相对零技能玩家的运气百分位和排名分、相对匹配玩家（你自己的持仓换成随机资产）的技能百分位、你的资格（加入以来至少70%的周期有有效提交）以及你的单资产赛道；指定 `asset` 则只返回该资产的赛道。",
        "ko": "무실력 플레이어 대비 당신의 수익률, 순위, 운 백분위와 순위 점수, 매칭 플레이어(당신의 "
              "포트폴리오를 무작위로 뽑은 자산에 적용한 것) 대비 실력 백분위, 참가 자격(참가한 "
              "이후 사이클의 70% 이상에서 유효한 제출), 그리고 단일 자산 트랙. `asset`을 지정하면 "
              "그 자산의 트랙만 보여 줍니다.",
    },
}

# The names contest clients of the FINCHAL style call the door's tools by (``submit_position``
# is the same name in both): a second name for one implementation, its arguments mapped to the
# door's (:func:`_aliases`), described by what it is and by the door tool's own description.
ALIASES: dict[str, str] = {"get_rules": "rules", "get_data": "data", "check_score": "score"}
ALIAS_NOTES: dict[str, dict[str, str]] = {
    "get_rules": {"en": "`rules` under another name.", "pl": "`rules` pod inną nazwą.",
                  "zh": "`rules` 的另一个名称。", "ko": "`rules`의 다른 이름입니다."},
    "get_data": {
        "en": f"`data` under another name: `asset` is its `symbol`, `bars` its `limit`, and "
              f"the interval is {DAILY} unless you name one.",
        "pl": f"`data` pod inną nazwą: `asset` to jego `symbol`, `bars` to `limit`, a interwał "
              f"to {DAILY}, jeśli nie podasz innego.",
        "zh": f"`data` 的另一个名称：`asset` 即 `symbol`，`bars` 即 `limit`，未指定周期时为 {DAILY}。",
        "ko": f"`data`의 다른 이름입니다. `asset`은 `symbol`, `bars`는 `limit`이며, 주기를 "
              f"지정하지 않으면 {DAILY}입니다.",
    },
    "check_score": {"en": "`score` under another name.", "pl": "`score` pod inną nazwą.",
                    "zh": "`score` 的另一个名称。", "ko": "`score`의 다른 이름입니다."},
}
DESCRIPTIONS.update({alias: {lang: f"{note} {DESCRIPTIONS[ALIASES[alias]][lang]}"
                             for lang, note in ALIAS_NOTES[alias].items()}
                     for alias in ALIASES})


def language(accept: str | None) -> str:
    """The best of :data:`LANGUAGES` for an ``Accept-Language`` header (English otherwise)."""
    ranked = []
    for n, part in enumerate((accept or "").split(",")):
        tag, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for param in params:
            if param.startswith("q="):
                try:
                    q = float(param[2:])
                except ValueError:
                    q = 0.0
        ranked.append((-q, n, tag.lower().split("-")[0]))
    return next((tag for q, _, tag in sorted(ranked) if q < 0 and tag in LANGUAGES), "en")


class _Keys:
    """Bearer keys checked against the season's entrants (the SDK's TokenVerifier). A token
    that cannot be a key is refused without reading the lake."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake

    async def verify_token(self, token: str) -> AccessToken | None:
        if not KEY_SHAPE.fullmatch(token):
            return None
        entrant = authenticate(self.lake, token)
        return None if entrant is None else AccessToken(token=token, client_id=entrant.name,
                                                        scopes=[])


class RateLimit(SlidingWindow):
    """At most ``calls`` requests per entrant in any ``window`` seconds."""

    def __init__(self, calls: int = RATE, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(calls, window, clock)

    def refusal(self, name: str) -> tuple[str, float] | None:
        """Count a request of ``name``: None when admitted, else what to tell it and the
        seconds to wait."""
        wait = self.admit(name)
        if wait is None:
            return None
        return (f"rate limit: {self.calls} calls a {self.window:.0f} s per entrant, every MCP "
                f"request counted; try again in {math.ceil(wait)} s", wait)


def _limited(limit: RateLimit) -> Callable[..., Any]:
    """Every request of an entrant counted against its rate - ``initialize``, ``tools/list``,
    a tool call with bad arguments alike - before the SDK validates or runs anything. A tool
    call over the rate is a tool error (a model reads it); any other request a JSON-RPC error
    (:data:`RATE_LIMITED`). Notifications carry no answer and are not counted."""

    async def middleware(ctx: ServerRequestContext[Any, Any], call_next: CallNext
                         ) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        token = get_access_token()
        refused = limit.refusal(token.client_id if token is not None else "")
        if refused is None:
            return await call_next(ctx)
        message, wait = refused
        if ctx.method == "tools/call":
            return CallToolResult(content=[TextContent(type="text", text=message)],
                                  is_error=True)
        raise MCPError(RATE_LIMITED, message, {"retry_after_s": math.ceil(wait)})

    return middleware


async def _localised(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """tools/list in the request's language (its ``Accept-Language``)."""
    result = await call_next(ctx)
    if ctx.method == "tools/list" and isinstance(result, dict):
        headers = getattr(ctx.request, "headers", None)
        lang = language(headers.get("accept-language") if headers is not None else None)
        for tool in result.get("tools", []):
            texts = DESCRIPTIONS.get(tool.get("name", ""))
            if texts:
                tool["description"] = texts.get(lang, texts["en"])
    return result


class KeyResourceMetadata(ProtectedResourceMetadata):
    """RFC 9728 metadata of a resource whose bearer keys no authorization server issues: the
    SDK's model requires ``authorization_servers``, which the RFC leaves optional."""

    authorization_servers: list[AnyHttpUrl] | None = None  # type: ignore[assignment]


def _urls(conn: HTTPConnection) -> dict[str, str]:
    """The endpoint, entrance and metadata URLs as the client reached this server (its
    ``Host``, and the scheme a trusted proxy forwarded)."""
    base = str(conn.base_url).rstrip("/")
    return {"endpoint": base + PATH, "llms_txt": base + LLMS_PATH,
            "resource_metadata": str(build_resource_metadata_url(AnyHttpUrl(base + PATH)))}


def key_header(name: str) -> str:
    """``name`` as the door's second key header (``arena mcp --key-header``): an HTTP field
    name that no client or proxy sends for something else; else :class:`BadArgument`."""
    if not FIELD_NAME.fullmatch(name):
        raise BadArgument(f"key header {name!r} is not an HTTP header name (letters, digits "
                          f"and '-', at most 64: e.g. {KEY_HEADER})")
    if name.lower() in TAKEN_HEADERS:
        raise BadArgument(f"key header {name!r} is a header HTTP or MCP already uses for "
                          f"something else; name one of your own (e.g. {KEY_HEADER})")
    return name


class KeyHeader:
    """ASGI middleware, outermost of the app's: a request that carries its key in the door's
    key header and sends no ``Authorization`` reaches the SDK's bearer authentication as
    ``Authorization: Bearer <key>``, so both ways in meet one check. ``Authorization``, when
    sent, is the one read (as before the key header existed)."""

    def __init__(self, app: ASGIApp, name: str = KEY_HEADER) -> None:
        self.app, self.name = app, key_header(name).lower().encode("latin-1")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = scope["headers"]
            key = next((v.strip() for k, v in headers if k == self.name and v.strip()), None)
            if key is not None and not any(k == b"authorization" for k, _ in headers):
                scope = {**scope, "headers": [*headers, (b"authorization", b"Bearer " + key)]}
        await self.app(scope, receive, send)


def _unauthorized(conn: HTTPConnection, header: str) -> JSONResponse:
    """The 401 of the MCP endpoint: what to send (the bearer token, or the key in
    ``header``), where keys come from, and a bearer challenge whose ``resource_metadata``
    names the protected-resource metadata."""
    sent = conn.headers.get("authorization")
    if not sent:  # RFC 6750 3.1: no error code when no credentials were sent
        error, why = "missing_token", "no key was sent"
    elif not sent.lower().startswith("bearer "):
        error, why = "invalid_request", "the Authorization header is not 'Bearer <key>'"
    else:
        error, why = "invalid_token", ("the key is not an active entrant's key (wrong, "
                                       "mistyped or revoked)")
    urls = _urls(conn)
    challenge = ['realm="arena"']
    if sent:
        challenge += [f'error="{error}"', f'error_description="{why}"']
    challenge.append(f'resource_metadata="{urls["resource_metadata"]}"')
    either = f"{header}: <key>"
    return JSONResponse(
        {"error": error, "error_description": f"{why}: send your entrant key with every "
                                              f"request as the header '{BEARER}' or "
                                              f"'{either}'",
         "send": BEARER, "or_send": either, "keys": WHERE_KEYS_COME_FROM, **urls},
        status_code=401, headers={"WWW-Authenticate": "Bearer " + ", ".join(challenge)})


class KeyRequired:
    """ASGI middleware, innermost of the app's: a request to the MCP endpoint that the SDK's
    bearer authentication did not admit gets :func:`_unauthorized` (the SDK's own 401 says
    only "Authentication required" and names no metadata)."""

    def __init__(self, app: ASGIApp, path: str = PATH, header: str = KEY_HEADER) -> None:
        self.app, self.path, self.header = app, path, header

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] != "http" or scope["path"] != self.path
                or isinstance(scope.get("user"), AuthenticatedUser)):
            await self.app(scope, receive, send)
            return
        await _unauthorized(HTTPConnection(scope), self.header)(scope, receive, send)


def build_server(lake: Lake, *, now: Callable[[], pd.Timestamp] | None = None,
                 rate: RateLimit | None = None, request_timeout: float = REQUEST_TIMEOUT,
                 header: str = KEY_HEADER) -> MCPServer:
    """The MCP server of the season in ``lake`` (which must hold one). ``now``: the server's
    clock (the wall clock by default; a test passes its own); ``request_timeout`` and
    ``header`` (the second key header): what the entrance says of them (the transport
    enforces the one, :func:`server_config`; :func:`asgi_app` reads the other)."""
    arena = Arena(lake, load_season(lake))
    clock = now or (lambda: pd.Timestamp.now(tz="UTC"))
    limit = rate or RateLimit()
    server = MCPServer(
        "arena", instructions=f"The LLM trading arena, season {arena.season.id}: read the "
        "rules, fetch data, submit decisions before each cycle, see your score against luck.",
        token_verifier=_Keys(lake),
        auth=AuthSettings(issuer_url=f"http://{HOST}", resource_server_url=None),
        middleware=[_limited(limit), _localised], log_level="WARNING")
    _aliases(server, _tools(server, arena, clock))
    _entrance(server, arena, clock, limit, request_timeout, key_header(header))
    return server


def _tools(server: MCPServer, arena: Arena, clock: Callable[[], pd.Timestamp]
           ) -> dict[str, Callable[..., dict[str, Any]]]:
    """Register the door's own tools on ``server``; each by its name, for :func:`_aliases`."""
    lake = arena.lake

    def caller() -> Entrant:
        token = get_access_token()
        found = next((e for e in entrants(lake) if token is not None
                      and e.name == token.client_id and e.active), None)
        if found is None:  # revoked while its session was open
            raise ToolError("this key was revoked")
        return found

    def guarded(fn: Callable[..., dict[str, object]], *args: object) -> dict[str, object]:
        try:
            return fn(*args)
        except (OutsideError, EntrantError) as exc:
            raise ToolError(str(exc)) from None

    def tool(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return server.tool(name=name, description=DESCRIPTIONS[name]["en"])

    @tool("rules")
    def rules_tool() -> dict[str, Any]:
        caller()
        return guarded(rules, arena, clock())

    @tool("data")
    def data_tool(symbol: str, interval: str, limit: int = 200) -> dict[str, Any]:
        caller()
        return guarded(candles, arena, symbol, interval, clock(), limit)

    @tool("submit_decision")
    def submit_decision_tool(answer: str) -> dict[str, Any]:
        return guarded(submit_decision, arena, caller(), answer, clock(), clock)

    @tool("submissions")
    def submissions_tool() -> dict[str, Any]:
        return guarded(own_submissions, arena, caller(), clock())

    @tool("submit_position")
    def submit_position_tool(positions: dict[str, float] | None = None, asset: str | None = None,
                             position: float | None = None) -> dict[str, Any]:
        return guarded(lambda: submit_positions(arena, caller(), _positions(
            positions, asset, position), clock()))

    @tool("score")
    def score_tool(asset: str | None = None) -> dict[str, Any]:
        return guarded(_score, arena, caller(), clock(), asset)

    return {"rules": rules_tool, "data": data_tool, "submit_decision": submit_decision_tool,
            "submissions": submissions_tool, "submit_position": submit_position_tool,
            "score": score_tool}


def _aliases(server: MCPServer, tools: Mapping[str, Callable[..., dict[str, Any]]]) -> None:
    """Register :data:`ALIASES` on ``server``: each calls the door's tool it names, with its
    arguments mapped to that tool's (``get_data``'s ``asset`` and ``bars`` are ``data``'s
    ``symbol`` and ``limit``, its interval :data:`DAILY` unless named)."""

    def alias(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return server.tool(name=name, description=DESCRIPTIONS[name]["en"])

    @alias("get_rules")
    def get_rules() -> dict[str, Any]:
        return tools[ALIASES["get_rules"]]()

    @alias("get_data")
    def get_data(asset: str, bars: int = 200, interval: str = DAILY) -> dict[str, Any]:
        return tools[ALIASES["get_data"]](symbol=asset, interval=interval, limit=bars)

    @alias("check_score")
    def check_score(asset: str | None = None) -> dict[str, Any]:
        return tools[ALIASES["check_score"]](asset=asset)


def _positions(positions: Mapping[str, float] | None, asset: str | None,
               position: float | None) -> Mapping[str, float]:
    """The positions a ``submit_position`` call asks for: its ``positions``, or its one
    ``asset`` and ``position``; both ways at once, or neither whole, is refused."""
    if positions is not None:
        if asset is not None or position is not None:
            raise OutsideError("send either `positions` or `asset` with `position`, not both")
        return positions
    if asset is None or position is None:
        missing = "`asset`" if asset is None else "`position`"
        raise OutsideError(f"no position given ({missing} is missing): send `positions` (a map "
                           "of asset to a number in [-1, 1]) or `asset` with its `position`")
    return {asset: position}


def _score(arena: Arena, entrant: Entrant, now: pd.Timestamp, asset: str | None
           ) -> dict[str, object]:
    """The entrant's score (:func:`entrant_score`); with ``asset`` (one of the season's, else
    refused), its single-asset track of that asset alone."""
    if asset is None:
        return entrant_score(arena, entrant, now)
    arena.asset(asset)
    score = entrant_score(arena, entrant, now)
    tracks = [t for t in cast(list[dict[str, object]], score["single_asset"])
              if t["symbol"] == asset]
    out = {**score, "asset": asset, "single_asset": tracks}
    if not tracks:
        out["note"] = (f"no position of yours on {asset} yet: submit_position starts its "
                       "track")
    return out


def _entrance(server: MCPServer, arena: Arena, clock: Callable[[], pd.Timestamp],
              limit: RateLimit, request_timeout: float, header: str) -> None:
    """The routes served without a key: ``/llms.txt`` and the protected-resource metadata."""
    season = arena.season
    numbers = rule_fields(season_rules(season), [b.symbol for b in arena.universe.benchmarks])

    @server.custom_route(LLMS_PATH, methods=["GET"])
    async def llms(request: Request) -> Response:
        tools = [ToolDoc(t.name, signature(t.name, t.input_schema),
                         {**DESCRIPTIONS.get(t.name, {}), "en": t.description or ""})
                 for t in await server.list_tools()]
        upcoming = season.next_after(clock())
        urls = _urls(request)
        door = Door(season=season.id, start=season.start.isoformat(), days=season.days,
                    cycle_time=f"{season.cycle_hour:02d}:00 UTC",
                    next_cycle=None if upcoming is None else upcoming.isoformat(),
                    assets=", ".join(a.symbol for a in arena.universe),
                    start_cash=numbers["start_cash"], fee=numbers["fee_pct"],
                    endpoint=urls["endpoint"], metadata=urls["resource_metadata"],
                    rate=limit.calls, window=limit.window, max_body_kib=MAX_BODY // 1024,
                    request_timeout=request_timeout, eligible_share=ELIGIBLE_SHARE,
                    key_header=header)
        return PlainTextResponse(llms_txt(door, tools, LANGUAGES))

    async def metadata(request: Request) -> Response:
        urls = _urls(request)
        document = KeyResourceMetadata(
            resource=AnyHttpUrl(urls["endpoint"]), bearer_methods_supported=["header"],
            resource_name=f"LLM trading arena, season {season.id}",
            resource_documentation=AnyHttpUrl(urls["llms_txt"]))
        return await ProtectedResourceMetadataHandler(document).handle(request)

    # RFC 9728 3.1: the endpoint's own (the well-known prefix before its path), and the
    # origin's, which clients try when no challenge named one
    for path in (METADATA_PATH + PATH, METADATA_PATH):
        server.custom_route(path, methods=["GET", "OPTIONS"])(
            cors_middleware(metadata, ["GET", "OPTIONS"]))  # type: ignore[arg-type]


def app(lake: Lake, host: str = HOST, header: str = KEY_HEADER, **options: Any) -> Starlette:
    """The server as an ASGI app (one per start: the SDK's session manager runs once), taking
    keys as bearer tokens and in ``header``. ``options``: :func:`build_server`'s."""
    return asgi_app(build_server(lake, header=header, **options), host, header)


def asgi_app(server: MCPServer, host: str = HOST, header: str = KEY_HEADER) -> Starlette:
    """``server`` (from :func:`build_server`, with the same ``header``) as an ASGI app:
    streamable HTTP at :data:`PATH`, the entrance's routes, keys in ``header`` read as bearer
    tokens (:class:`KeyHeader`), and :class:`KeyRequired`'s 401."""
    asgi = server.streamable_http_app(streamable_http_path=PATH, max_request_body_size=MAX_BODY,
                                      host=host)
    # outermost: before the SDK's authentication reads the Authorization header
    asgi.user_middleware.insert(0, Middleware(KeyHeader, name=header))
    # innermost of the app's middleware: after the SDK's authentication set the user
    asgi.user_middleware.append(Middleware(KeyRequired, path=PATH, header=header))
    return asgi


def server_config(asgi: ASGIApp, host: str = HOST, port: int = PORT, *,
                  request_timeout: float = REQUEST_TIMEOUT, **options: Any) -> uvicorn.Config:
    """How uvicorn serves ``asgi``: the doors' one configuration
    (:func:`arena.doors.deadline.server_config`: a deadline on reading every request, a limit
    on its request line and headers, idle keep-alive connections closed, no WebSocket
    upgrade) on this door's address. ``options``: further ``uvicorn.Config`` arguments."""
    return door_config(asgi, host, port, request_timeout=request_timeout, **options)


def serve(lake_root: str | Path, host: str = HOST, port: int = PORT,
          request_timeout: float = REQUEST_TIMEOUT, header: str = KEY_HEADER) -> None:
    """Serve until interrupted (``arena mcp``); keys come as bearer tokens or in ``header``."""
    asgi = app(Lake(lake_root), host=host, header=header, request_timeout=request_timeout)
    uvicorn.Server(server_config(asgi, host, port, request_timeout=request_timeout)).run()
