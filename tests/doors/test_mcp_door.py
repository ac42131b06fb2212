"""Agents find the door of ``arena mcp`` (issue 30, item 7): ``/llms.txt`` without a key, a
401 that says what to send with protected-resource metadata naming bearer keys, half-open
connections dropped, every MCP request rate-limited, and the documented client configuration
connecting. A real server on 127.0.0.1 and the SDK's own client, as in test_mcp_server."""

from __future__ import annotations

import json
import re
import selectors
import socket
import threading
import time

import anyio
import httpx2
import pandas as pd
import pytest
from mcp import ClientSession
from mcp.client.session_group import ClientSessionGroup, StreamableHttpParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

import arena.doors.mcp_server as door
from arena.doors.entrance import client_config
from arena.doors.mcp_server import (
    DESCRIPTIONS,
    LANGUAGES,
    METADATA_PATH,
    PATH,
    RATE_LIMITED,
    REQUEST_TIMEOUT,
    RateLimit,
    app,
    asgi_app,
    build_server,
    server_config,
)
from arena.pipeline.season_config import load_season
from tests.doors import test_mcp_server
from tests.doors.test_mcp_server import (
    MON,
    Clock,
    Served,
    call,
    run,
    session,
    text,
)

season = test_mcp_server.season  # the same live season and entrants (a fixture)

SIGNATURES = {"rules": "rules()", "data": "data(symbol: string, interval: string, limit: "
              "integer = 200)", "submit_decision": "submit_decision(answer: string)",
              "submissions": "submissions()",
              "submit_position": "submit_position(positions: object of number | null = null, "
                                 "asset: string | null = null, position: number | null = null)",
              "score": "score(asset: string | null = null)",
              # the names contest clients of the FINCHAL style call them by (issue 45)
              "get_rules": "get_rules()",
              "get_data": 'get_data(asset: string, bars: integer = 200, interval: string = "1d")',
              "check_score": "check_score(asset: string | null = null)"}


def origin(url: str) -> str:
    return url.removesuffix(PATH)


def get(url: str, **headers: str) -> httpx2.Response:
    with httpx2.Client(timeout=30) as http:
        return http.get(url, headers=headers)


def post(url: str, key: str | None = None, authorization: str | None = None,
         http: httpx2.Client | None = None) -> httpx2.Response:
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    if key or authorization:
        headers["Authorization"] = authorization or f"Bearer {key}"
    if http is None:
        with httpx2.Client(timeout=30) as http:
            return post(url, key, authorization, http)
    return http.post(url, headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}})


def json_block(page: str) -> dict:
    [block] = re.findall(r"```json\n(.*?)```", page, re.S)
    return json.loads(block)


def test_llms_txt_tells_an_agent_without_a_key_how_to_enter(season):
    lake, _ = season
    clock = Clock(MON - pd.Timedelta(hours=2))
    server = build_server(lake, now=clock)

    @server.tool(name="extra", description="A tool registered after the others.")
    def extra(n: int = 3) -> dict:
        return {"n": n}

    with Served(asgi_app(server)) as url:
        got = get(origin(url) + "/llms.txt")  # no key
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/plain")
    page = got.text
    assert page.startswith("# LLM trading arena: season ")
    for needed in (f"MCP endpoint: {url} (the streamable HTTP transport",
                   "`Authorization: Bearer <key>`", "`arena entrant add NAME`",
                   f"{origin(url)}{METADATA_PATH}{PATH} (RFC 9728)",
                   f"the next cycle: {MON.isoformat()}", "Call `rules` first",
                   "60 requests per key in any 60 s, every MCP method counted"):
        assert needed in page, needed
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    assert [s.splitlines()[0] for s in sections] == ["English", "Polski", "中文", "한국어"]
    for lang, section in zip(LANGUAGES, sections, strict=True):
        for name, signature in SIGNATURES.items():  # every tool, in the section's language
            assert f"- `{signature}`: {DESCRIPTIONS[name][lang]}" in section, (lang, name)
        # a tool the server registers shows up, with its own description where none is
        # translated: the list is the server's, not a copy
        assert "- `extra(n: integer = 3)`: A tool registered after the others." in section
        assert f"{url}" in section and "arena entrant add" in section
    assert "`Authorization: Bearer <klucz>`" in sections[1]
    assert "`Authorization: Bearer <密钥>`" in sections[2]
    assert "`Authorization: Bearer <키>`" in sections[3]
    assert json_block(page) == client_config(url)


def test_a_missing_or_wrong_key_gets_a_401_that_says_what_to_send(season):
    lake, keys = season
    with Served(app(lake, now=Clock(MON))) as url:
        metadata_url = f"{origin(url)}{METADATA_PATH}{PATH}"
        refused = {"none": post(url), "wrong": post(url, "arena_" + "x" * 43),
                   "mistyped": post(url, keys["alice"] + "x"), "no shape": post(url, "letmein"),
                   "basic": post(url, authorization="Basic YWxpY2U6eA=="),
                   "stream": get(url, Accept="text/event-stream")}
        documents = [get(metadata_url), get(origin(url) + METADATA_PATH)]
        assert post(url, keys["alice"]).status_code == 200
    for case, response in refused.items():
        assert response.status_code == 401, case
        body = response.json()
        assert body["send"] == "Authorization: Bearer <key>", case
        assert "arena entrant add NAME" in body["keys"] and "no OAuth" in body["keys"]
        assert "send your entrant key with every request as the header 'Authorization: " \
               "Bearer <key>'" in body["error_description"]
        assert (body["endpoint"], body["llms_txt"]) == (url, origin(url) + "/llms.txt")
        challenge = response.headers["www-authenticate"]
        assert challenge.startswith('Bearer realm="arena"'), challenge
        assert f'resource_metadata="{metadata_url}"' in challenge, challenge
    assert "error=" not in refused["none"].headers["www-authenticate"]  # RFC 6750 3.1
    assert refused["none"].json()["error"] == "missing_token"
    for case in ("wrong", "mistyped", "no shape"):
        assert 'error="invalid_token"' in refused[case].headers["www-authenticate"]
    assert refused["basic"].json()["error"] == "invalid_request"
    for document in documents:  # RFC 9728: bearer keys in the header, no authorization server
        assert document.status_code == 200
        assert document.json() == {
            "resource": url, "bearer_methods_supported": ["header"],
            "resource_name": f"LLM trading arena, season {load_season(lake).id}",
            "resource_documentation": origin(url) + "/llms.txt"}  # no authorization_servers


def test_a_client_configured_as_documented_lists_the_tools(season):
    """The configuration /llms.txt shows (and the MCP guide copies): its ``url`` and ``headers``,
    the key in place of ``<key>``, read by the SDK's client as they stand."""
    lake, keys = season

    async def scenario(url: str, entry: dict) -> None:
        async with ClientSessionGroup() as group:  # the SDK's config-driven client
            await group.connect_to_server(StreamableHttpParameters(**entry))
            assert set(group.tools) == set(DESCRIPTIONS)
        async with (httpx2.AsyncClient(headers=entry["headers"], timeout=30) as http,
                    streamable_http_client(entry["url"], http_client=http) as (read, write),
                    ClientSession(read, write) as client):
            await client.initialize()
            assert {t.name for t in (await client.list_tools()).tools} == set(DESCRIPTIONS)

    with Served(app(lake, now=Clock(MON))) as url:
        [entry] = json_block(get(origin(url) + "/llms.txt").text)["mcpServers"].values()
        assert entry["headers"] == {"Authorization": "Bearer <key>"} and entry["url"] == url
        entry["headers"] = {"Authorization": f"Bearer {keys['alice']}"}
        run(lambda: scenario(url, entry))


def test_every_mcp_request_counts_against_the_rate_and_a_keyless_flood_gets_401s(season,
                                                                                 monkeypatch):
    lake, keys = season
    now = [0.0]
    limit = RateLimit(calls=3, window=60.0, clock=lambda: now[0])
    looked_up = []
    real = door.authenticate
    monkeypatch.setattr(door, "authenticate",
                        lambda lake_, key: looked_up.append(key) or real(lake_, key))

    async def scenario(url: str) -> None:
        async with session(url, keys["alice"]) as alice:  # initialize: 1
            await alice.list_tools()  # 2
            await alice.send_ping()  # 3
            with pytest.raises(MCPError) as caught:
                await alice.list_tools()
            assert caught.value.code == RATE_LIMITED and "rate limit" in caught.value.message
            assert caught.value.data == {"retry_after_s": 60}
            with pytest.raises(MCPError, match="rate limit"):
                await alice.send_ping()
            limited = await alice.call_tool("rules", {})  # a tool call: a tool error
            assert limited.is_error and "rate limit: 3 calls a 60 s" in text(limited)
            async with session(url, keys["bob"]) as bob:  # the others are not limited
                await bob.list_tools()
                await call(bob, "rules")
            now[0] += 61
            assert {t.name for t in (await alice.list_tools()).tools} == set(DESCRIPTIONS)

    with Served(app(lake, now=Clock(MON - pd.Timedelta(hours=2)), rate=limit)) as url:
        with httpx2.Client(timeout=30) as http:  # one connection, kept alive
            started = time.perf_counter()
            flood = ([post(url, http=http) for _ in range(100)]
                     + [post(url, "nope", http=http) for _ in range(100)]
                     + [post(url, "arena_" + "y" * 43, http=http) for _ in range(100)])
            took = time.perf_counter() - started
        assert [r.status_code for r in flood] == [401] * 300
        assert took < 10, took  # a few milliseconds each
        assert all("mcp-session-id" not in r.headers for r in flood)
        # only a token shaped like a key is looked up in the lake
        assert looked_up == ["arena_" + "y" * 43] * 100
        run(lambda: scenario(url))  # and the flood spent none of alice's requests


def test_half_open_connections_are_dropped_while_clients_are_served(season):
    lake, keys = season
    timeout = 1.5
    assert server_config(app(lake)).http.request_timeout == REQUEST_TIMEOUT == 10.0
    with Served(app(lake, now=Clock(MON - pd.Timedelta(hours=2))),
                request_timeout=timeout) as url:
        port = int(origin(url).rsplit(":", 1)[1])
        head = (f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Content-Type: application/json\r\nAccept: application/json, text/event-stream"
                "\r\nContent-Length: 100\r\n")
        sends = ([b""] * 20 + [b"POST /mcp HTT"] * 10 + [head.encode()] * 5  # no blank line
                 + [(head + "\r\n").encode() + b'{"jsonrpc"'] * 10  # no key: 401 at once
                 + [(head + f"Authorization: Bearer {keys['alice']}\r\n\r\n").encode()
                    + b'{"jsonrpc"'] * 5)  # a key, half a body: the app waits for the rest
        opened = time.monotonic()
        socks = []
        for data in sends:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(data)
            socks.append(sock)
        watcher = Watcher(socks, opened)
        watcher.start()

        async def scenario() -> None:  # a client served while the 50 hang, for longer
            async with session(url, keys["bob"]) as bob:
                await call(bob, "rules")
                await anyio.sleep(2 * timeout)  # its session outlives the deadline
                await bob.list_tools()
                await call(bob, "rules")

        run(scenario)
        watcher.join(timeout + 15)
        assert not watcher.is_alive(), f"{len(watcher.open)} connections still open"
    got = watcher.got
    assert len(got) == 50
    for n, (_, closed_after) in enumerate(got):
        assert closed_after < timeout + 8, (n, closed_after)
        if n < 35:  # nothing or part of the headers: kept until the deadline, not at once
            assert closed_after > timeout * 0.8, (n, closed_after)
    assert all(got[n][0] == b"" for n in range(20))  # silent: closed without a word
    assert all(got[n][0].startswith(b"HTTP/1.1 408 ") for n in range(20, 35))
    assert all(got[n][0].startswith(b"HTTP/1.1 401 ") for n in range(35, 45))
    assert all(got[n][0] == b"" for n in range(45, 50))


class Watcher(threading.Thread):
    """Reads every socket to its end: what came and when it closed (seconds after opened)."""

    def __init__(self, socks: list[socket.socket], opened: float) -> None:
        super().__init__(daemon=True)
        self.opened, self.selector = opened, selectors.DefaultSelector()
        self.data = {n: b"" for n in range(len(socks))}
        self.closed: dict[int, float] = {}
        self.open = set(range(len(socks)))
        for n, sock in enumerate(socks):
            sock.setblocking(False)
            self.selector.register(sock, selectors.EVENT_READ, n)

    @property
    def got(self) -> list[tuple[bytes, float]]:
        return [(self.data[n], self.closed[n]) for n in sorted(self.closed)]

    def run(self) -> None:
        deadline = time.monotonic() + 60
        while self.open and time.monotonic() < deadline:
            for key, _ in self.selector.select(timeout=0.1):
                n = key.data
                try:
                    chunk = key.fileobj.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    self.data[n] += chunk
                    continue
                self.closed[n] = time.monotonic() - self.opened
                self.open.discard(n)
                self.selector.unregister(key.fileobj)
                key.fileobj.close()
