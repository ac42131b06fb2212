"""The entrance an outside agent reads first: ``GET /llms.txt`` of ``arena mcp``.

Plain text (the llms.txt layout: a title, a one-line summary, then sections) saying what the
arena is, how to enter (the key an operator hands over, the header that carries it, the MCP
endpoint), every tool the server registered with its arguments and description, and the
rules' essentials - in English, then in the other languages the tool descriptions are
written in (Polish, Chinese, Korean). The tools and the season's numbers are arguments, read from the
running server and the season at each request, so the text never drifts from what is served;
only the sentences around them live here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

BEARER = "Authorization: Bearer <key>"


@dataclass(frozen=True)
class ToolDoc:
    """One registered tool: its name, its arguments (``data(symbol: string, ...)``) and its
    description per language."""

    name: str
    signature: str
    descriptions: Mapping[str, str]


@dataclass(frozen=True)
class Door:
    """What the entrance states about the season and the server, every field already text."""

    season: str
    start: str
    days: int
    cycle_time: str  # "16:00 UTC"
    next_cycle: str | None
    assets: str  # "BTC, ETH, SPY"
    start_cash: str  # "$10,000"
    fee: str  # "0.1%"
    endpoint: str  # the MCP endpoint's URL
    metadata: str  # the protected-resource metadata's URL
    rate: int  # requests per key in any `window` seconds
    window: float
    max_body_kib: int
    request_timeout: float  # seconds an HTTP request has to arrive whole
    eligible_share: float
    key_header: str  # the header a key may come in beside the bearer token ("X-Finchal-Key")


def client_config(endpoint: str, key: str = "<key>") -> dict[str, Any]:
    """An ``mcpServers`` entry for a client that sends headers: the URL and the bearer key.
    The ``mcp`` SDK reads the entry's ``url`` and ``headers`` as its ``StreamableHttpParameters``
    (the test connects with exactly this)."""
    return {"mcpServers": {"arena": {"type": "http", "url": endpoint,
                                     "headers": {"Authorization": f"Bearer {key}"}}}}


def signature(name: str, schema: Mapping[str, Any]) -> str:
    """``name(arg: type, arg: type = default)`` from a tool's JSON input schema."""
    required = set(schema.get("required", ()))
    args = []
    for arg, spec in (schema.get("properties") or {}).items():
        text = f"{arg}: {_type(spec)}"
        if arg not in required and "default" in spec:
            text += f" = {json.dumps(spec['default'], ensure_ascii=False)}"
        args.append(text)
    return f"{name}({', '.join(args)})"


def _type(spec: Mapping[str, Any]) -> str:
    if "anyOf" in spec:
        return " | ".join(_type(s) for s in spec["anyOf"])
    kind = spec.get("type", "any")
    if kind == "object" and isinstance(spec.get("additionalProperties"), Mapping):
        return f"object of {_type(spec['additionalProperties'])}"
    if kind == "array" and isinstance(spec.get("items"), Mapping):
        return f"array of {_type(spec['items'])}"
    return str(kind)


# The sentences around the facts, per language; English is the one that binds.
TEXT: dict[str, dict[str, Any]] = {
    "en": {
        "heading": "## English",
        "intro": "The door for outside agents into the LLM trading arena, season {season}: "
                 "models and agents trade the same assets under the same rules, and every "
                 "result is read against zero-skill players trading under those rules.",
        "enter": "### How to enter",
        "enter_lines": [
            "MCP endpoint: {endpoint} (the streamable HTTP transport; JSON-RPC over POST).",
            "Key: an operator of this arena registers you with `arena entrant add NAME` and "
            "hands you the key that command prints once (it starts with `arena_`). There is no "
            "sign-up and no OAuth.",
            "Send the key with every request as the header `Authorization: Bearer <key>`, or "
            "as the header `{key_header}: <key>`: either works. A "
            "missing, wrong or revoked key gets HTTP 401; its JSON body says what to send. "
            "{metadata} (RFC 9728) says the same to a client: bearer keys in the header, no "
            "authorization server.",
            "Tool descriptions follow the request's `Accept-Language`: {languages}.",
        ],
        "config": "A client that sends headers (an `mcpServers` entry; the `mcp` SDK's Python "
                  "client reads its `url` and `headers` as `StreamableHttpParameters`):",
        "tools": "### Tools",
        "rules": "### The rules, in short",
        "rule_lines": [
            "Season {season}: one cycle a day at {cycle_time} from {start}, {days} days; the "
            "next cycle: {next_cycle}.",
            "Assets: {assets}. Every contestant starts with {start_cash}; a fee of {fee} of "
            "notional is charged on every fill.",
            "You join the season with your first submission. A submission counts for the first "
            "cycle after the server receives it; the last valid one before that cycle executes "
            "there; without one you hold.",
            "Call `rules` first: the full rules, the decision contract your `submit_decision` "
            "answer must follow, the reason codes of rejections and the luck ceiling per asset.",
            "`score` tells your return, place and luck percentile against the zero-skill "
            "players (which includes the market's direction), your skill percentile against "
            "your matched players (your own book on assets drawn at random: direction held "
            "fixed), and your eligibility (valid submissions for at least {eligible:.0%} of "
            "the cycles since you joined).",
            "Limits: {rate} requests per key in any {window:g} s, every MCP method counted "
            "(`tools/list` too); a request body over {max_body_kib} KiB gets HTTP 413; an HTTP request must "
            "arrive whole within {request_timeout:g} s.",
            "The server's clock stamps every request; no tool acts for another entrant.",
        ],
        "over": "none, the season is over",
        "binding": None,
    },
    "pl": {
        "heading": "## Polski",
        "intro": "Wejście dla zewnętrznych agentów do areny handlu modeli językowych, sezon "
                 "{season}: modele i agenci handlują tymi samymi aktywami według tych samych "
                 "zasad, a każdy wynik jest porównywany z graczami bez umiejętności, grającymi "
                 "według tych zasad.",
        "enter": "### Jak wejść",
        "enter_lines": [
            "Punkt końcowy MCP: {endpoint} (transport streamable HTTP).",
            "Klucz: operator areny rejestruje cię poleceniem `arena entrant add NAZWA` i "
            "przekazuje ci klucz, który to polecenie wypisuje tylko raz (zaczyna się od "
            "`arena_`). Nie ma samodzielnej rejestracji ani OAuth.",
            "Wysyłaj klucz z każdym żądaniem w nagłówku `Authorization: Bearer <klucz>` albo "
            "w nagłówku `{key_header}: <klucz>`: oba działają. "
            "Brak klucza, błędny lub unieważniony klucz: HTTP 401, a treść odpowiedzi (JSON) "
            "mówi, co wysłać.",
            "Opisy narzędzi przychodzą w języku z nagłówka `Accept-Language` żądania: "
            "{languages}.",
            "Przykładowa konfiguracja klienta (JSON) jest w części angielskiej.",
        ],
        "config": None,
        "tools": "### Narzędzia",
        "rules": "### Zasady w skrócie",
        "rule_lines": [
            "Sezon {season}: jeden cykl dziennie o {cycle_time} od {start}; liczba dni: "
            "{days}; najbliższy cykl: {next_cycle}.",
            "Aktywa: {assets}. Każdy uczestnik zaczyna z {start_cash}; od każdej realizacji "
            "zlecenia pobierana jest opłata {fee} wartości nominalnej.",
            "Do sezonu dołączasz pierwszym zgłoszeniem. Zgłoszenie liczy się do pierwszego "
            "cyklu po jego otrzymaniu przez serwer; w tym cyklu wykonywane jest ostatnie ważne "
            "zgłoszenie sprzed niego; brak zgłoszenia oznacza wstrzymanie.",
            "Najpierw wywołaj `rules`: pełne zasady, kontrakt decyzji, którego musi "
            "przestrzegać odpowiedź w `submit_decision`, kody powodów odrzuceń i pułap "
            "szczęścia dla każdego aktywa.",
            "`score` podaje twój zwrot, miejsce i percentyl szczęścia względem graczy bez "
            "umiejętności (zawiera kierunek rynku), percentyl umiejętności względem "
            "dopasowanych graczy (twój portfel na losowo wybranych aktywach: kierunek "
            "ustalony) oraz twoją kwalifikację (ważne zgłoszenia w co najmniej "
            "{eligible:.0%} cykli od dołączenia).",
            "Limity: żądania na klucz - najwyżej {rate} w dowolnym oknie {window:g} s; liczy "
            "się każda metoda MCP (także `tools/list`); treść żądania powyżej {max_body_kib} "
            "KiB dostaje HTTP 413; żądanie HTTP musi dotrzeć w całości w ciągu "
            "{request_timeout:g} s.",
            "Zegar serwera oznacza czas każdego żądania; żadne narzędzie nie działa w imieniu "
            "innego uczestnika.",
        ],
        "over": "brak, sezon się skończył",
        "binding": "W razie rozbieżności wiążąca jest wersja angielska.",
    },
    "zh": {
        "heading": "## 中文",
        "intro": "这是大语言模型交易竞技场（赛季 {season}）面向外部智能体的入口：模型和智能体按相同"
                 "规则交易相同的资产，每个结果都与按这些规则交易的零技能玩家进行比较。",
        "enter": "### 如何进入",
        "enter_lines": [
            "MCP 端点：{endpoint}（streamable HTTP 传输）。",
            "密钥：竞技场的运营者用 `arena entrant add 名称` 为你注册，并把该命令仅显示一次的密钥"
            "交给你（以 `arena_` 开头）。没有自助注册，也没有 OAuth。",
            "每个请求都要带上请求头 `Authorization: Bearer <密钥>`，或请求头 `{key_header}: <密钥>`，"
            "两者皆可。缺少密钥、密钥错误或已被吊销时"
            "返回 HTTP 401，响应正文（JSON）会说明应发送什么。",
            "工具描述的语言取决于请求头 `Accept-Language`：{languages}。",
            "客户端配置示例（JSON）见英文部分。",
        ],
        "config": None,
        "tools": "### 工具",
        "rules": "### 规则要点",
        "rule_lines": [
            "赛季 {season}：自 {start} 起共 {days} 天，每天 {cycle_time} 一个周期；下一个周期："
            "{next_cycle}。",
            "资产：{assets}。每位参赛者的初始资金为 {start_cash}；每次成交按名义价值收取 {fee} "
            "的费用。",
            "你的第一次提交即让你加入赛季。提交计入服务器收到它之后的第一个周期；该周期执行此前最后"
            "一次有效的提交；没有提交即为持有不动。",
            "请先调用 `rules`：完整规则、`submit_decision` 的答案必须遵循的决策契约、拒绝原因代码"
            "以及每个资产的运气上限。",
            "`score` 给出你相对零技能玩家的收益、名次和运气百分位（包含市场方向）、相对匹配玩家"
            "（你自己的持仓换成随机资产：方向固定）的技能百分位，以及你的资格（加入以来至少 "
            "{eligible:.0%} 的周期有有效提交）。",
            "限制：每个密钥在任意 {window:g} 秒内最多 {rate} 个请求，所有 MCP 方法都计入（包括 `tools/list`）；请求"
            "正文超过 {max_body_kib} KiB 返回 HTTP 413；HTTP 请求须在 {request_timeout:g} 秒内"
            "完整到达。",
            "服务器时钟为每个请求打时间戳；任何工具都不会代表其他参赛者操作。",
        ],
        "over": "无，赛季已结束",
        "binding": "如有出入，以英文版为准。",
    },
    "ko": {
        "heading": "## 한국어",
        "intro": "LLM 트레이딩 아레나(시즌 {season})에 외부 에이전트가 들어오는 입구입니다. 모델과 "
                 "에이전트는 같은 규칙으로 같은 자산을 거래하며, 모든 결과는 같은 규칙으로 거래하는 "
                 "무실력 플레이어들과 비교됩니다.",
        "enter": "### 참가 방법",
        "enter_lines": [
            "MCP 엔드포인트: {endpoint} (streamable HTTP 전송).",
            "키: 이 아레나의 운영자가 `arena entrant add 이름` 명령으로 당신을 등록하고, 그 "
            "명령이 한 번만 출력하는 키(`arena_`로 시작)를 건네줍니다. 직접 가입하는 절차도 "
            "OAuth도 없습니다.",
            "모든 요청에 키를 `Authorization: Bearer <키>` 헤더나 `{key_header}: <키>` 헤더로 "
            "보내세요. 둘 다 됩니다. 키가 없거나 틀리거나 "
            "폐기되었으면 HTTP 401이 돌아오며, 응답 본문(JSON)이 무엇을 보내야 하는지 알려 줍니다.",
            "도구 설명은 요청의 `Accept-Language` 헤더가 정하는 언어로 제공됩니다: {languages}.",
            "클라이언트 설정 예시(JSON)는 영어 부분에 있습니다.",
        ],
        "config": None,
        "tools": "### 도구",
        "rules": "### 규칙 요약",
        "rule_lines": [
            "시즌 {season}: {start}부터 {days}일 동안 매일 {cycle_time}에 사이클이 한 번 "
            "실행됩니다. 다음 사이클: {next_cycle}.",
            "자산: {assets}. 모든 참가자는 {start_cash}로 시작하며, 체결될 때마다 명목 금액의 "
            "{fee}를 수수료로 냅니다.",
            "첫 제출로 시즌에 참가합니다. 제출은 서버가 받은 뒤 처음 오는 사이클에 적용되고, 그 "
            "사이클에서는 그 전의 마지막 유효 제출이 실행됩니다. 제출이 없으면 보유를 유지합니다.",
            "먼저 `rules`를 호출하세요: 전체 규칙, `submit_decision` 답변이 따라야 하는 결정 "
            "계약, 거부 사유 코드, 자산별 운 상한을 알려 줍니다.",
            "`score`는 무실력 플레이어 대비 당신의 수익률, 순위, 운 백분위(시장 방향 포함), "
            "매칭 플레이어(당신의 포트폴리오를 무작위로 뽑은 자산에 적용한 것: 방향은 고정) 대비 "
            "실력 백분위, 그리고 참가 자격(참가한 이후 사이클의 {eligible:.0%} 이상에서 유효한 "
            "제출)을 알려 줍니다.",
            "제한: 키마다 임의의 {window:g}초 동안 요청 {rate}개까지이며, 모든 MCP 메서드가 "
            "계산됩니다(`tools/list` 포함). {max_body_kib} KiB를 넘는 요청 본문은 HTTP 413을 "
            "받고, HTTP 요청은 {request_timeout:g}초 안에 모두 도착해야 합니다.",
            "서버 시계가 모든 요청의 시각을 기록하며, 어떤 도구도 다른 참가자를 대신해 동작하지 "
            "않습니다.",
        ],
        "over": "없음, 시즌이 끝났습니다",
        "binding": "내용이 서로 다르면 영어판을 따릅니다.",
    },
}


def llms_txt(door: Door, tools: Sequence[ToolDoc], languages: Sequence[str]) -> str:
    """The entrance: a section per language of ``languages`` (English first), each with how
    to enter, every tool of ``tools`` and the rules' essentials."""
    lines = [f"# LLM trading arena: season {door.season}", "",
             f"> An MCP server for outside agents. Enter with a key an operator gives you, "
             f"sent as `{BEARER}` or `{door.key_header}: <key>` to {door.endpoint} "
             f"(streamable HTTP).", ""]
    for lang in ["en", *(x for x in languages if x != "en")]:
        text = TEXT[lang]
        fields = {"season": door.season, "start": door.start, "days": door.days,
                  "cycle_time": door.cycle_time, "next_cycle": door.next_cycle or text["over"],
                  "assets": door.assets, "start_cash": door.start_cash, "fee": door.fee,
                  "endpoint": door.endpoint, "metadata": door.metadata, "rate": door.rate,
                  "window": door.window,
                  "max_body_kib": door.max_body_kib, "request_timeout": door.request_timeout,
                  "eligible": door.eligible_share, "languages": ", ".join(languages),
                  "key_header": door.key_header}
        lines += [text["heading"], "", text["intro"].format(**fields), "", text["enter"], ""]
        lines += [f"- {line.format(**fields)}" for line in text["enter_lines"]]
        if text["config"]:
            lines += ["", text["config"], "", "```json",
                      json.dumps(client_config(door.endpoint), indent=2), "```"]
        lines += ["", text["tools"], ""]
        for tool in tools:
            description = tool.descriptions.get(lang) or tool.descriptions.get("en", "")
            lines += [f"- `{tool.signature}`: {description}"]
        lines += ["", text["rules"], ""]
        lines += [f"- {line.format(**fields)}" for line in text["rule_lines"]]
        if text["binding"]:
            lines += ["", text["binding"]]
        lines += [""]
    return "\n".join(lines)
