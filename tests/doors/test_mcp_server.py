"""The MCP door: the SDK's own client over streamable HTTP against ``arena mcp``'s server,
started on 127.0.0.1 by the test, over a live synthetic season."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
import httpx2
import pandas as pd
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import TextContent

from arena.doors.mcp_server import (
    DESCRIPTIONS,
    MAX_BODY,
    PATH,
    RateLimit,
    app,
    language,
    server_config,
)
from arena.ledger.store import Ledger
from arena.pipeline.entrants import add_entrant, revoke_entrant
from arena.pipeline.live.cycle import play_season_cycle
from arena.pipeline.season_config import load_season, season_contestants
from arena.pipeline.season_tables import TRACK_DIR
from tests import serving
from tests.conftest import ts
from tests.market_lakes import season_lake
from tests.serving import Clock

HOUSE = "contestants:\n  - {name: momentum, kind: house, strategy: momentum}\n"
MON, TUE = ts("2025-11-24 16:00"), ts("2025-11-25 16:00")
ANSWER = {"reasoning": "outside view", "decisions": [
    {"action": "open_long", "symbol": "ETH", "percent_of_equity": 20, "confidence": 0.9,
     "invalidation_price": 1.0, "thesis": "outside thesis", "invalidation": "a collapse"}]}


class Served(serving.Served):
    """``arena mcp``'s app in a uvicorn thread on a free loopback port, served as ``arena mcp``
    serves it (:func:`server_config`: the request deadline, keep-alive, header limit);
    entering gives the MCP endpoint's URL."""

    def __init__(self, asgi, **options) -> None:
        super().__init__(server_config(asgi, "127.0.0.1", 0, lifespan="on", **options))

    def __enter__(self) -> str:
        return super().__enter__() + PATH


@pytest.fixture
def season(tmp_path_factory, tmp_path, universe):
    lake = season_lake(tmp_path_factory, universe, tmp_path / "lake", HOUSE, start="2025-11-24",
                       days=3)
    keys = {name: add_entrant(lake, load_season(lake), name, MON - pd.Timedelta(days=1))[1]
            for name in ("alice", "bob")}
    return lake, keys


@asynccontextmanager
async def session(url: str, key: str | None, lang: str | None = None
                  ) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    if lang:
        headers["Accept-Language"] = lang
    async with (httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write) as client):
        await client.initialize()
        yield client


def text(result) -> str:
    return "".join(c.text for c in result.content if isinstance(c, TextContent))


async def call(client: ClientSession, tool: str, **args) -> dict:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text(result)
    return result.structured_content or json.loads(text(result))


def run(test: Callable) -> None:
    anyio.run(test)


def test_an_entrant_reads_the_rules_and_data_submits_and_plays_the_next_cycle(season):
    lake, keys = season
    clock = Clock(MON - pd.Timedelta(hours=3))

    async def scenario(url: str) -> None:
        async with session(url, keys["alice"]) as alice:
            rules = await call(alice, "rules")
            assert rules["next_cycle"] == MON.isoformat() and "decisions" in rules["contract"]
            bars = (await call(alice, "data", symbol="ETH", interval="1h", limit=3))["bars"]
            assert len(bars) == 3
            assert pd.Timestamp(bars[-1]["open_time"]) + pd.Timedelta(hours=1) <= clock.at
            refused = await alice.call_tool("data", {"symbol": "ETH", "interval": "2h"})
            assert refused.is_error and "unknown interval '2h'" in text(refused)
            bad = {**ANSWER, "decisions": [{**ANSWER["decisions"][0], "confidence": 0.5}]}
            got = await call(alice, "submit_decision", answer=json.dumps(bad))
            assert [r["code"] for r in got["dry_run"]["rejections"]] == ["low_confidence"]
            assert got["joined_from"] == MON.isoformat()
            clock.at += pd.Timedelta(hours=1)
            got = await call(alice, "submit_decision", answer=json.dumps(ANSWER))
            assert got["dry_run"]["rejections"] == []
            mine = await call(alice, "submissions")
            assert len(mine["submissions"]) == 2
        async with session(url, keys["bob"]) as bob:  # alice's submissions are hers alone
            assert (await call(bob, "submissions"))["submissions"] == []
            assert (await call(bob, "score"))["entrant"] == "bob"

    with Served(app(lake, now=clock)) as url:
        run(lambda: scenario(url))
    contestants, _ = season_contestants(lake, {}, at=MON)
    assert sorted(c.name for c in contestants) == ["alice", "momentum"]  # bob never submitted
    play_season_cycle(lake, load_season(lake), contestants, MON, now=MON + pd.Timedelta(minutes=5))
    assert [(f.symbol, f.kind) for f in Ledger(lake).fills("alice")] == [("ETH", "open")]
    clock.at = MON + pd.Timedelta(hours=1)

    async def after(url: str) -> None:
        async with session(url, keys["alice"]) as alice:
            score = await call(alice, "score")
            assert score["arena"]["cycles"] == 1
            assert (score["arena"]["of"], score["arena"]["rulers"]) == (1, 1)  # momentum rules
            assert score["eligibility"]["valid_submissions"] == 1

    with Served(app(lake, now=clock)) as url:
        run(lambda: after(url))


def test_positions_are_clipped_and_scored_against_the_assets_zero_skill_players(season):
    lake, keys = season
    clock = Clock(ts("2025-11-24 10:30"))

    async def scenario(url: str) -> None:
        async with session(url, keys["alice"]) as alice:
            kept = await call(alice, "submit_position", positions={"ETH": 3, "BTC": -0.25})
            assert kept["positions"] == {"ETH": 1.0, "BTC": -0.25}
            assert kept["clipped"] == {"ETH": {"asked": 3.0, "kept": 1.0}}
            clock.at = ts("2025-11-25 17:00")  # after the second cycle: a window to score
            tracks = {t["symbol"]: t for t in (await call(alice, "score"))["single_asset"]}
            assert set(tracks) == {"BTC", "ETH"}
            assert 0.0 <= tracks["ETH"]["luck_percentile"] <= 1.0
            refused = await alice.call_tool("submit_position", {"positions": {"NOPE": 1}})
            assert refused.is_error and "not an asset of season" in text(refused)

    with Served(app(lake, now=clock)) as url:
        run(lambda: scenario(url))


def test_after_the_last_cycle_a_decision_or_a_position_is_refused(season):
    """Regression (issue 44): after the season's last cycle ``submit_position`` was kept - a
    position no bar of the season would ever hold. A position or a decision now gets a tool
    error saying the season is over, nothing is kept; the rules and the score stay readable."""
    lake, keys = season
    config = load_season(lake)
    clock = Clock(config.last - pd.Timedelta(minutes=1))
    over = (f"season {config.id} has no cycle after {config.last.isoformat()}: it is over "
            f"(its last cycle was at {config.last.isoformat()})")

    async def scenario(url: str) -> None:
        async with session(url, keys["alice"]) as alice:
            await call(alice, "submit_position", positions={"ETH": 0.5})  # a minute before
            clock.at = config.last
            for tool, args, what in (
                    ("submit_position", {"positions": {"ETH": -1.0}}, "position"),
                    ("submit_decision", {"answer": json.dumps(ANSWER)}, "decision")):
                refused = await alice.call_tool(tool, args)
                assert refused.is_error, tool
                assert f"{over}; it takes no {what}" in text(refused), text(refused)
            assert (await call(alice, "rules"))["next_cycle"] is None
            assert (await call(alice, "score"))["entrant"] == "alice"

    with Served(app(lake, now=clock)) as url:
        run(lambda: scenario(url))
    assert len(list((lake.root / TRACK_DIR / "alice").iterdir())) == 1  # the one before


def test_a_wrong_or_revoked_key_is_refused(season):
    lake, keys = season

    async def refused(url: str, key: str | None) -> None:
        with pytest.raises(BaseException) as caught:  # the SDK wraps it in exception groups
            async with session(url, key):
                pass
        leaves = list(_leaves(caught.value))
        assert any(isinstance(e, MCPError) for e in leaves), leaves

    async def status(url: str, key: str | None) -> int:
        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        async with httpx2.AsyncClient() as raw:
            response = await raw.post(url, headers=headers, json={
                "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}})
            return response.status_code

    async def scenario(url: str) -> None:
        assert await status(url, None) == 401 and await status(url, "arena_wrong") == 401
        await refused(url, keys["alice"] + "x")
        async with session(url, keys["alice"]) as alice:
            await call(alice, "rules")
        revoke_entrant(lake, "alice", MON)
        assert await status(url, keys["alice"]) == 401
        async with session(url, keys["bob"]) as bob:  # the others play on
            await call(bob, "rules")

    with Served(app(lake, now=Clock(MON - pd.Timedelta(hours=2)))) as url:
        run(lambda: scenario(url))


def _leaves(exc: BaseException):
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


def test_descriptions_follow_the_callers_language(season):
    lake, keys = season

    async def scenario(url: str) -> None:
        for header, lang in (("pl-PL,pl;q=0.9,en;q=0.5", "pl"), ("zh-CN", "zh"), ("en", "en"),
                             ("fr", "en"), (None, "en"), ("de,zh;q=0.3", "zh"),
                             ("ko-KR,ko;q=0.9,en;q=0.8", "ko")):
            async with session(url, keys["bob"], header) as bob:
                tools = {t.name: t for t in (await bob.list_tools()).tools}
                assert set(tools) == set(DESCRIPTIONS)
                for name, tool in tools.items():
                    assert tool.description == DESCRIPTIONS[name][lang], (header, name)

    with Served(app(lake, now=Clock(MON))) as url:
        run(lambda: scenario(url))
    assert language("pl;q=0, zh;q=0.1") == "zh" and language("xx") == "en"
    assert language("en;q=0.5, ko") == "ko"


def test_bad_input_gets_a_clear_error_and_hurts_no_one(season):
    lake, keys = season

    async def scenario(url: str) -> None:
        async with session(url, keys["alice"]) as alice:
            wrong = await alice.call_tool("data", {"symbol": "ETH", "interval": "1h",
                                                   "limit": "many"})
            assert wrong.is_error and "limit" in text(wrong)
            missing = await alice.call_tool("data", {"symbol": "ETH"})
            assert missing.is_error and "interval" in text(missing)
            junk = await alice.call_tool("submit_decision", {"answer": "not json at all"})
            assert junk.is_error and "the answer must start with '{'" in text(junk)
            with pytest.raises(MCPError):  # over 64 KiB: HTTP 413, the session survives
                await alice.call_tool("submit_decision", {"answer": "x" * (MAX_BODY + 1)})
            await call(alice, "rules")
            flood = [await alice.call_tool("rules", {}) for _ in range(4)]
            limited = [text(r) for r in flood if r.is_error]
            assert limited and "rate limit" in limited[0]
        async with session(url, keys["bob"]) as bob:  # another entrant is not limited
            await call(bob, "rules")

    # a rate limit of 6 requests a minute, on a clock that stands still: every request counts
    # (initialize, the three bad calls, rules: 5), the 413 never reaches the server's methods
    limit = RateLimit(calls=6, window=60.0, clock=lambda: 0.0)
    with Served(app(lake, now=Clock(MON - pd.Timedelta(hours=2)), rate=limit)) as url:
        run(lambda: scenario(url))


def test_an_unreadable_submission_is_refused_and_the_last_valid_one_executes(season):
    """Regression (issue 27): "not json at all" was kept with isError false and became the
    answer that executed - a hold in place of the entrant's valid answer."""
    lake, keys = season
    clock = Clock(MON - pd.Timedelta(hours=3))
    mistyped = {**ANSWER, "decisions": [{**ANSWER["decisions"][0], "percent_of_equity": "20"},
                                        {"symbol": "BTC"}]}
    unreadable = {"not json at all": "the answer must start with '{'",
                  json.dumps({"decisions": "all in"}): '"decisions" must be a list',
                  json.dumps({"reasoning": "no decisions"}): 'has no "decisions" list',
                  json.dumps(ANSWER) + " and more": "there is text after the JSON object",
                  json.dumps(mistyped): "decision 0: percent_of_equity"}

    async def scenario(url: str) -> None:
        async with session(url, keys["alice"]) as alice:
            for answer, reason in unreadable.items():  # before any valid one: none is kept
                refused = await alice.call_tool("submit_decision", {"answer": answer})
                assert refused.is_error and reason in text(refused), text(refused)
                assert "not kept" in text(refused)
            assert (await call(alice, "submissions"))["submissions"] == []
            kept = await call(alice, "submit_decision", answer=json.dumps(ANSWER))
            assert kept["dry_run"]["rejections"] == []
            for answer, reason in unreadable.items():
                clock.at += pd.Timedelta(minutes=5)
                refused = await alice.call_tool("submit_decision", {"answer": answer})
                assert refused.is_error and reason in text(refused)
            mine = await call(alice, "submissions")
            assert len(mine["submissions"]) == 1 and mine["last_answer"] == json.dumps(ANSWER)
        async with session(url, keys["bob"]) as bob:  # a refusal joins no one to the season
            refused = await bob.call_tool("submit_decision", {"answer": "{}"})
            assert refused.is_error and 'has no "decisions" list' in text(refused)
            tools = {t.name: t.description for t in (await bob.list_tools()).tools}
            assert "The last valid submission before the cycle executes" in \
                tools["submit_decision"]
            assert "refused with the reasons and not kept" in tools["submit_decision"]

    with Served(app(lake, now=clock)) as url:
        run(lambda: scenario(url))
    contestants, _ = season_contestants(lake, {}, at=MON)
    assert sorted(c.name for c in contestants) == ["alice", "momentum"]  # bob was refused
    play_season_cycle(lake, load_season(lake), contestants, MON, now=MON + pd.Timedelta(minutes=5))
    assert [(f.symbol, f.kind) for f in Ledger(lake).fills("alice")] == [("ETH", "open")]


def test_the_readme_client_enters_submits_and_sees_its_score(season, tmp_path):
    """An outside agent with nothing but the MCP guide: its client snippet, run as a program of
    its own against the served season."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    lake, keys = season
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "mcp.md").read_text()
    [snippet] = re.findall(r"```python\n(.*?)```", guide, re.S)
    script = tmp_path / "client.py"
    script.write_text(snippet)
    with Served(app(lake, now=Clock(MON - pd.Timedelta(hours=2)))) as url:
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "ARENA_KEY": keys["alice"],
                                                "ARENA_MCP_URL": url})
    assert done.returncode == 0, done.stderr
    assert f"next cycle {MON.isoformat()}" in done.stdout
    assert "rejections []" in done.stdout and "'valid_submissions'" in done.stdout
