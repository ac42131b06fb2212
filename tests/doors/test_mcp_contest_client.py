"""A client configured as the FINCHAL contest's documents configure theirs plays through
``arena mcp`` as written (issue 45, item 3): its key in an ``X-Finchal-Key`` header (no
bearer token), its tool names (``get_rules``, ``get_data``, ``submit_position``,
``check_score``) and their arguments (``asset``, ``bars``, ``position``), its Korean. A real
server on 127.0.0.1 and the SDK's own clients, over the live season of test_mcp_server."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx2
import pandas as pd
from mcp import ClientSession
from mcp.client.session_group import ClientSessionGroup, StreamableHttpParameters
from mcp.client.streamable_http import streamable_http_client

from arena.cli import main
from arena.doors.mcp_server import ALIASES, DESCRIPTIONS, KEY_HEADER, PATH, app
from arena.pipeline.entrants import revoke_entrant
from arena.pipeline.season_tables import TRACK_DIR
from tests.conftest import ts
from tests.doors import test_mcp_server
from tests.doors.test_mcp_server import MON, Clock, Served, call, run, text

season = test_mcp_server.season  # the same live season and entrants (a fixture)

CONTEST_TOOLS = {"get_rules", "get_data", "submit_position", "check_score"}


@asynccontextmanager
async def contest_client(url: str, key: str, header: str = KEY_HEADER, lang: str = "ko"
                         ) -> AsyncIterator[ClientSession]:
    """A session that sends its key as the documents' client does: in ``header``, alone."""
    headers = {header: key, "Accept-Language": lang}
    async with (httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as client):
        await client.initialize()
        yield client


def initialize(url: str, **headers: str) -> httpx2.Response:
    """A raw ``initialize`` POST with ``headers``: what the door answers before any tool."""
    with httpx2.Client(timeout=30) as http:
        return http.post(url, headers={"Accept": "application/json, text/event-stream",
                                       "Content-Type": "application/json", **headers}, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "contest", "version": "0"}}})


def test_the_documents_client_plays_with_its_header_its_tool_names_and_arguments(season):
    lake, keys = season
    clock = Clock(ts("2025-11-24 10:30"))

    async def scenario(url: str) -> None:
        async with ClientSessionGroup() as group:  # the configuration the documents show
            await group.connect_to_server(StreamableHttpParameters(
                url=url, headers={KEY_HEADER: keys["alice"]}))
            assert set(group.tools) >= CONTEST_TOOLS
        async with contest_client(url, keys["alice"]) as alice:
            listed = {t.name: t for t in (await alice.list_tools()).tools}
            for name in CONTEST_TOOLS:  # described in the caller's Korean
                assert listed[name].description == DESCRIPTIONS[name]["ko"], name
            assert listed["get_data"].input_schema["required"] == ["asset"]
            rules = await call(alice, "get_rules")
            assert rules == await call(alice, "rules")  # one implementation
            assert rules["next_cycle"] == MON.isoformat()
            got = await call(alice, "get_data", asset="ETH", bars=5)
            assert got == await call(alice, "data", symbol="ETH", interval="1d", limit=5)
            assert got["interval"] == "1d" and len(got["bars"]) == 5
            assert pd.Timestamp(got["bars"][-1]["open_time"]) + pd.Timedelta(days=1) <= clock.at
            hourly = await call(alice, "get_data", asset="ETH", bars=2, interval="1h")
            assert len(hourly["bars"]) == 2 and hourly["interval"] == "1h"
            kept = await call(alice, "submit_position", asset="ETH", position=0.5)
            assert kept["positions"] == {"ETH": 0.5} and kept["clipped"] == {}
            clock.at += pd.Timedelta(minutes=1)  # one submission per asset, as the documents'
            kept = await call(alice, "submit_position", asset="BTC", position=-3)
            assert kept["clipped"] == {"BTC": {"asked": -3.0, "kept": -1.0}}
            clock.at = ts("2025-11-25 17:00")  # after the second cycle: a window to score
            score = await call(alice, "check_score", asset="ETH")
            assert score == await call(alice, "score", asset="ETH")
            [track] = score["single_asset"]
            assert (score["entrant"], score["asset"], track["symbol"]) == ("alice", "ETH", "ETH")
            assert 0.0 <= track["luck_percentile"] <= 1.0
            both = await call(alice, "check_score")  # no asset: every track, as `score`
            assert {t["symbol"] for t in both["single_asset"]} == {"BTC", "ETH"}

    with Served(app(lake, now=clock)) as url:
        run(lambda: scenario(url))
    assert len(list((lake.root / TRACK_DIR / "alice").iterdir())) == 2


def test_a_missing_or_wrong_key_in_the_header_is_refused_as_a_bearer_key_is(season):
    lake, keys = season
    with Served(app(lake, now=Clock(MON))) as url:
        refused = {"none": initialize(url), "empty": initialize(url, **{KEY_HEADER: ""}),
                   "wrong": initialize(url, **{KEY_HEADER: "arena_" + "x" * 43}),
                   "mistyped": initialize(url, **{KEY_HEADER: keys["alice"] + "x"}),
                   # Authorization, when sent, is the one read: a wrong one is not mended
                   "wrong bearer": initialize(url, **{KEY_HEADER: keys["alice"],
                                                      "Authorization": "Bearer arena_nope"})}
        assert initialize(url, **{KEY_HEADER: keys["alice"]}).status_code == 200
        assert initialize(url, **{KEY_HEADER.lower(): keys["bob"]}).status_code == 200
        revoke_entrant(lake, "alice", MON)
        refused["revoked"] = initialize(url, **{KEY_HEADER: keys["alice"]})
    for case, response in refused.items():
        assert response.status_code == 401, case
        body = response.json()
        assert (body["send"], body["or_send"]) == ("Authorization: Bearer <key>",
                                                   f"{KEY_HEADER}: <key>"), case
        assert f"or '{KEY_HEADER}: <key>'" in body["error_description"], case
    assert {c: refused[c].json()["error"] for c in refused} == {
        "none": "missing_token", "empty": "missing_token", "wrong": "invalid_token",
        "mistyped": "invalid_token", "wrong bearer": "invalid_token", "revoked": "invalid_token"}


def test_the_key_header_is_the_operators_choice(season, capsys):
    """``arena mcp --key-header``: another header replaces the documents' one (the bearer
    token stays), the entrance says which; a name that is no header or that HTTP or MCP
    uses already is refused before anything is served."""
    lake, keys = season
    with Served(app(lake, now=Clock(MON), header="X-Contest-Key")) as url:
        assert initialize(url, **{"X-Contest-Key": keys["bob"]}).status_code == 200
        assert initialize(url, Authorization=f"Bearer {keys['bob']}").status_code == 200
        assert initialize(url, **{KEY_HEADER: keys["bob"]}).status_code == 401
        with httpx2.Client(timeout=30) as http:
            page = http.get(url.removesuffix(PATH) + "/llms.txt").text
    assert "`X-Contest-Key: <key>`" in page and "`X-Contest-Key: <키>`" in page
    assert KEY_HEADER not in page
    for name, why in (("X Key", "is not an HTTP header name"),
                      ("Authorization", "is a header HTTP or MCP already uses"),
                      ("mcp-session-id", "is a header HTTP or MCP already uses")):
        assert main(["mcp", "--key-header", name, "--lake", str(lake.root)]) == 2, name
        err = capsys.readouterr().err
        assert f"arena mcp: key header {name!r} {why}" in err, err
        assert len(err.strip().splitlines()) == 1, err


def test_submit_position_takes_one_asset_or_a_map_and_refuses_the_rest(season):
    lake, keys = season
    clock = Clock(ts("2025-11-24 10:30"))

    async def scenario(url: str) -> None:
        async with contest_client(url, keys["alice"], lang="en") as alice:
            for args, reason in (
                    ({}, "no position given (`asset` is missing)"),
                    ({"asset": "ETH"}, "no position given (`position` is missing)"),
                    ({"position": 1}, "no position given (`asset` is missing)"),
                    ({"asset": "ETH", "position": 1, "positions": {"BTC": 1}},
                     "send either `positions` or `asset` with `position`, not both"),
                    ({"asset": "NOPE", "position": 1}, "'NOPE' is not an asset of season"),
                    ({"asset": "ETH", "position": "long"}, "position")):
                refused = await alice.call_tool("submit_position", args)
                assert refused.is_error and reason in text(refused), (args, text(refused))
            for tool, args in (("check_score", {"asset": "NOPE"}),
                               ("get_data", {"asset": "NOPE", "bars": 3})):
                refused = await alice.call_tool(tool, args)
                assert refused.is_error and "'NOPE' is not an asset of season" in text(refused)
            missing = await alice.call_tool("get_data", {"bars": 3})
            assert missing.is_error and "asset" in text(missing)
            untracked = await call(alice, "check_score", asset="BTC")
            assert untracked["single_asset"] == [] and "no position of yours on BTC" in \
                untracked["note"]

    with Served(app(lake, now=clock)) as url:
        run(lambda: scenario(url))
    assert not (lake.root / TRACK_DIR / "alice").exists()  # nothing refused was kept


def test_llms_txt_serves_korean_and_names_both_ways_in(season):
    lake, _ = season
    with (Served(app(lake, now=Clock(MON - pd.Timedelta(hours=2)))) as url,
          httpx2.Client(timeout=30) as http):
        page = http.get(url.removesuffix(PATH) + "/llms.txt").text
    sections = dict(re.findall(r"^## (\S+)\n(.*?)(?=^## |\Z)", page, flags=re.M | re.S))
    korean = sections["한국어"]
    assert "`Authorization: Bearer <키>` 헤더나 `X-Finchal-Key: <키>` 헤더로 보내세요" in korean
    assert f"MCP 엔드포인트: {url}" in korean and "`arena entrant add 이름`" in korean
    assert f"다음 사이클: {MON.isoformat()}" in korean
    for name in CONTEST_TOOLS | set(ALIASES.values()):
        assert f"- `{name}(" in korean and DESCRIPTIONS[name]["ko"] in korean, name
    assert f"`{KEY_HEADER}: <key>`" in page.split("\n## ", 1)[0]  # the summary line
    assert f"or as the header `{KEY_HEADER}: <key>`" in sections["English"]
