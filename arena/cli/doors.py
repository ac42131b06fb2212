"""The doors for outside software: ``arena entrant add|list|revoke`` and ``arena mcp`` (outside
agents), ``arena signal-server`` and ``arena signal-marts`` (trading terminals)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import cyclopts

from arena.cli._options import MAX_DAILY_CALLS, Port, SeasonLake, whole
from arena.cli._render import print_json, refused, say

entrant_app = cyclopts.App(name="entrant", help="outside entrants of the season (they play "
                           "through arena mcp): add one and print its key once, list, revoke",
                           version_flags=[])


def _public(entrant) -> dict:
    return {k: v for k, v in entrant.__dict__.items() if k != "key_sha256"}


@entrant_app.command
def add(name: str, /, *, lake: SeasonLake = None, json: bool = False) -> int:
    """Register an entrant; prints its key once (the lake keeps only its hash).

    Parameters
    ----------
    name
        kebab-case, unused in the season
    json
        print the name and key as JSON
    """
    from arena.app.handle import SeasonHandle, wall_clock
    from arena.pipeline.entrants import add_entrant

    with refused("nothing changed"):
        handle = SeasonHandle.open(lake)
        entrant, key = add_entrant(handle.lake, handle.config, name, wall_clock())
    if json:
        print_json({"name": entrant.name, "key": key})
    else:
        print(f"entrant {entrant.name} added to season {handle.id}; its key, shown this once "
              f"(the lake keeps only its hash):\n{key}")
    return 0


@entrant_app.command(name="list")
def list_(*, lake: SeasonLake = None, json: bool = False) -> int:
    """The season's entrants (never their keys).

    Parameters
    ----------
    json
        print the entrants as JSON
    """
    from arena.app.handle import SeasonHandle
    from arena.pipeline.entrants import entrants

    handle = SeasonHandle.open(lake)
    items = entrants(handle.lake)
    if json:
        print_json([_public(e) for e in items])
        return 0
    for e in items:
        state = "revoked " + e.revoked_at if e.revoked_at else "active"
        joined = f"plays from {e.joined_from}" if e.joined_from else "no submission yet"
        print(f"{e.name}: {state}, added {e.added_at}, {joined}")
    if not items:
        print(f"season {handle.id} has no outside entrant (arena entrant add NAME)")
    return 0


@entrant_app.command
def revoke(name: str, /, *, lake: SeasonLake = None, json: bool = False) -> int:
    """Revoke an entrant's key (its records stay; with no submission it holds).

    Parameters
    ----------
    name
        the entrant's name
    json
        print the revoked entrant as JSON
    """
    from arena.app.handle import SeasonHandle, wall_clock
    from arena.pipeline.entrants import revoke_entrant

    with refused("nothing changed"):
        revoked = revoke_entrant(SeasonHandle.open(lake).lake, name, wall_clock())
    if json:
        print_json(_public(revoked))
    else:
        print(f"entrant {revoked.name}: key revoked (its records stay; with no submission it "
              "holds)")
    return 0


DailyCalls = Annotated[int, whole(1, MAX_DAILY_CALLS,
                                  f"model calls a UTC day at most (1 to {MAX_DAILY_CALLS:,})")]


def mcp(*, host: str = "127.0.0.1", port: Port = 8765, lake: SeasonLake = None,
        key_header: str = "X-Finchal-Key") -> int:
    """Serve the season to outside agents over MCP (streamable HTTP, keys from arena entrant
    add as bearer tokens or in the key header), until Ctrl-C.

    Parameters
    ----------
    host
        address to listen on
    key_header
        the header a key may also come in, beside Authorization: Bearer (the one contest
        clients of the FINCHAL style send)
    """
    from arena.app.handle import SeasonHandle
    from arena.doors import mcp_server

    header = mcp_server.key_header(key_header)  # refused before the lake is read
    handle = SeasonHandle.open(lake)
    print(f"arena mcp: season {handle.id} at http://{host}:{port}{mcp_server.PATH} (streamable "
          f"HTTP; each entrant's key as a bearer token or in {header}; Ctrl-C stops)")
    mcp_server.serve(handle.lake.root, host=host, port=port, header=header)
    return 0


def signal_server(*, host: str = "127.0.0.1", port: Port = 8971, token: str | None = None,
                  store: str = "signal_store", contestant: str | None = None,
                  roster: str | None = None, daily_calls: DailyCalls = 2000,
                  split_at_low_risk: bool = False, lone_analyst: bool = False) -> int:
    """Serve bull/bear/risk debates to trading terminals over a WebSocket (PRICES, DEBATE,
    CHAT, CLEAR, STOP), until Ctrl-C.

    Parameters
    ----------
    host
        address (any other than 127.0.0.1 needs --token)
    token
        the token terminals must send (Authorization: Bearer, or ?token=), or several,
        comma-separated, one per terminal (their outcomes stay apart); default
        $ARENA_SIGNAL_TOKEN
    store
        where debates and outcomes are kept
    contestant
        the roster entry whose model answers (default: the rule-based analysts, no key needed)
    roster
        roster file (default: the shipped one)
    split_at_low_risk
        a rule beyond the committee's three: the analysts' split at LOW risk goes to the
        stronger argument too (by default it holds)
    lone_analyst
        a rule beyond the committee's three: one analyst leaning alone is followed when strong
        enough (6 at LOW risk, 8 at MEDIUM; by default it holds)
    """
    import os

    from arena.agents.roster import RosterError, load_roster
    from arena.core.environment import setting
    from arena.doors.judge import JudgeRules
    from arena.doors.signal_server import Budget, ModelPanel, SignalServer, check_bind, run
    from arena.doors.signal_store import SignalStore

    token = token or setting("signal_token")
    check_bind(host, token)
    panel = None
    if contestant:
        entries = load_roster(roster)
        spec = next((c for c in entries if c.name == contestant), None)
        if spec is None or not spec.uses_model:
            raise RosterError(f"the roster has no model contestant {contestant!r} (its models: "
                              f"{', '.join(c.name for c in entries if c.uses_model)})")
        if spec.api_key_env and not os.environ.get(spec.api_key_env):
            say("arena signal-server", f"{spec.api_key_env} is not set: the rule-based "
                                       "analysts answer instead")
        else:
            panel = ModelPanel(spec)
    rules = JudgeRules(split_at_low=split_at_low_risk, lone_analyst=lone_analyst)
    server = SignalServer(SignalStore(store), panel, budget=Budget(daily_calls), rules=rules)
    who = f"{panel.model} (roster entry {contestant})" if panel else "rule-based analysts"
    extras = f"; extra rules: {', '.join(rules.extras)}" if rules.extras else ""
    say("arena signal-server", f"ws://{host}:{port} ({who}; store {store}{extras}; Ctrl-C "
                               "stops)")
    run(server, host, port, token)
    return 0


def signal_marts(*, store: str = "signal_store", lake: str | None = None) -> int:
    """Build the signal server's mart: which patterns of disagreement were followed by which
    returns.

    Parameters
    ----------
    store
        the server's store
    lake
        first attach outcomes from this lake's bars to the debates on its symbols
    """
    from arena.app.handle import wall_clock
    from arena.core.errors import BadArgument
    from arena.data.lake import Lake
    from arena.doors.signal_store import SignalStore, attach_from_lake, build_signal_marts

    if not Path(store).is_dir():
        raise BadArgument(f"no signal store at {store} (arena signal-server --store DIR keeps "
                          "one)")
    kept = SignalStore(store)
    if lake:
        found = attach_from_lake(kept, Lake(lake), wall_clock())
        print(f"outcomes from {lake}: {found} attached")
    out = build_signal_marts(kept)
    print(f"signal_patterns: {out} (and {Path(store) / 'dbt' / 'warehouse.duckdb'})")
    return 0
