"""``arena mcp``: the door through which outside agents enter a season, over the Model Context
Protocol (the official ``mcp`` SDK, streamable HTTP, 127.0.0.1 by default).

Every request carries an entrant's key as a bearer token (``arena entrant add`` prints it once);
a missing, wrong or revoked key gets HTTP 401 before any tool runs, and a tool only ever acts
for the entrant its key names - no tool takes another entrant's name. The tools are the ones of
:mod:`arena.pipeline.outside`: ``rules``, ``data``, ``submit_decision``, ``submissions``,
``submit_position`` and ``score``; the server's clock stamps every request.

Descriptions are served in the language of the request's ``Accept-Language`` (English, Polish,
Chinese; English otherwise). A request body over 64 KiB gets HTTP 413; an entrant calling more
than :data:`RATE` times a minute is told to wait. Bearer keys travel in clear over plain HTTP:
serve on loopback (the default, where the SDK also guards against DNS rebinding) or behind a
TLS proxy; bad arguments and refusals come back as tool
errors naming the problem. None of them touches the other entrants or stops the server.
A submission the decision contract cannot read is refused with the contract's reasons and
never kept (:func:`arena.pipeline.outside.submit_decision`), so the entrant's last valid
submission is the one that executes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from starlette.applications import Starlette

from arena.data.lake import Lake
from arena.doors.limits import SlidingWindow
from arena.pipeline.entrants import Entrant, EntrantError, authenticate, entrants
from arena.pipeline.outside import (
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
MAX_BODY = 64 * 1024  # bytes a request may carry
RATE = 60  # calls an entrant may make in any minute
LANGUAGES = ("en", "pl", "zh")

DESCRIPTIONS: dict[str, dict[str, str]] = {
    "rules": {
        "en": "The season's rules: assets, fees, cycle time and submission deadline, the "
              "decision contract, the reason codes of rejections, and the luck ceiling per "
              "asset so far.",
        "pl": "Zasady sezonu: aktywa, opłaty, godzina cyklu i termin zgłoszeń, kontrakt "
              "decyzji, kody powodów odrzuceń oraz dotychczasowy pułap szczęścia dla każdego "
              "aktywa.",
        "zh": "本赛季规则：资产、费用、周期时间与提交截止时间、决策契约、拒绝原因代码，以及迄今每个资产的运气上限。",
    },
    "data": {
        "en": "Candles of one asset and interval (15m, 1h, 4h, 1d, 1w) closed by now, the "
              "last `limit` of them; never a bar after the present. An asset or interval the "
              "arena does not hold is refused.",
        "pl": "Świece jednego aktywa i interwału (15m, 1h, 4h, 1d, 1w) zamknięte do teraz, "
              "ostatnie `limit` z nich; nigdy słupek z przyszłości. Aktywo lub interwał, "
              "którego arena nie ma, zostaje odrzucone.",
        "zh": "某资产在某周期（15m、1h、4h、1d、1w）截至当前已收盘的K线，最近 `limit` 根；绝不返回未来的K线。竞技场没有的资产或周期会被拒绝。",
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
    },
    "submissions": {
        "en": "Your own submissions for the coming cycle, oldest first, and the text of the "
              "last one (the one that counts).",
        "pl": "Twoje własne zgłoszenia na nadchodzący cykl, od najstarszego, oraz treść "
              "ostatniego (to ono się liczy).",
        "zh": "你为下一个周期提交的内容（按时间先后排列），以及最后一次提交的文本（以它为准）。",
    },
    "submit_position": {
        "en": "Single-asset track: a position in [-1, +1] per asset (-1 short, +1 long, 0 "
              "flat), held from the next bar's close; values outside are clipped and the "
              "reply says so.",
        "pl": "Ścieżka jednego aktywa: pozycja w [-1, +1] dla aktywa (-1 krótka, +1 długa, 0 "
              "brak), utrzymywana od zamknięcia następnego słupka; wartości spoza zakresu są "
              "przycinane, o czym mówi odpowiedź.",
        "zh": "单资产赛道：每个资产一个 [-1, +1] 区间的仓位（-1 做空，+1 做多，0 空仓），从下一根K线收盘起持有；超出范围的值会被截断，回复中会说明。",
    },
    "score": {
        "en": "Your return, place, luck percentile and rank score against the zero-skill "
              "players, your eligibility (valid submissions for at least 70% of the cycles "
              "since you joined) and your single-asset tracks.",
        "pl": "Twój zwrot, miejsce, percentyl szczęścia i wynik rangi względem graczy bez "
              "umiejętności, twoja kwalifikacja (ważne zgłoszenia w co najmniej 70% cykli od "
              "dołączenia) oraz twoje ścieżki jednego aktywa.",
        "zh": "你的收益、名次、相对零技能玩家的运气百分位和排名分、你的资格（加入以来至少70%的周期有有效提交）以及你的单资产赛道。",
    },
}


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
    """Bearer keys checked against the season's entrants (the SDK's TokenVerifier)."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake

    async def verify_token(self, token: str) -> AccessToken | None:
        entrant = authenticate(self.lake, token)
        return None if entrant is None else AccessToken(token=token, client_id=entrant.name,
                                                        scopes=[])


class RateLimit(SlidingWindow):
    """At most ``calls`` per entrant in any ``window`` seconds."""

    def __init__(self, calls: int = RATE, window: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(calls, window, clock)

    def check(self, name: str) -> None:
        wait = self.admit(name)
        if wait is not None:
            raise ToolError(f"rate limit: {self.calls} calls a {self.window:.0f} s per "
                            f"entrant; try again in {wait:.0f} s")


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


def build_server(lake: Lake, *, now: Callable[[], pd.Timestamp] | None = None,
                 rate: RateLimit | None = None) -> MCPServer:
    """The MCP server of the season in ``lake`` (which must hold one). ``now``: the server's
    clock (the wall clock by default; a test passes its own)."""
    arena = Arena(lake, load_season(lake))
    clock = now or (lambda: pd.Timestamp.now(tz="UTC"))
    limit = rate or RateLimit()
    server = MCPServer(
        "arena", instructions=f"The LLM trading arena, season {arena.season.id}: read the "
        "rules, fetch data, submit decisions before each cycle, see your score against luck.",
        token_verifier=_Keys(lake),
        auth=AuthSettings(issuer_url=f"http://{HOST}", resource_server_url=None),
        middleware=[_localised], log_level="WARNING")

    def caller() -> Entrant:
        token = get_access_token()
        found = next((e for e in entrants(lake) if token is not None
                      and e.name == token.client_id and e.active), None)
        if found is None:  # revoked while its session was open
            raise ToolError("this key was revoked")
        limit.check(found.name)
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
    def submit_position_tool(positions: dict[str, float]) -> dict[str, Any]:
        return guarded(submit_positions, arena, caller(), positions, clock())

    @tool("score")
    def score_tool() -> dict[str, Any]:
        return guarded(entrant_score, arena, caller(), clock())

    del rules_tool, data_tool, submit_decision_tool, submissions_tool, submit_position_tool
    del score_tool
    return server


def app(lake: Lake, host: str = HOST, **options: Any) -> Starlette:
    """The server as an ASGI app (one per start: the SDK's session manager runs once)."""
    return build_server(lake, **options).streamable_http_app(
        streamable_http_path=PATH, max_request_body_size=MAX_BODY, host=host)


def serve(lake_root: str | Path, host: str = HOST, port: int = PORT) -> None:
    """Serve until interrupted (``arena mcp``)."""
    uvicorn.run(app(Lake(lake_root), host=host), host=host, port=port, log_level="warning")

