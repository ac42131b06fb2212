"""``arena season ...``: init, status, backfill, retry, add, retire, publish, verify."""

from __future__ import annotations

from typing import Annotated

import cyclopts
from cyclopts import Parameter

from arena.cli._options import (
    MAX_PLAYERS,
    PLAYERS_RANGE,
    SECONDS,
    Blind,
    BlindSectors,
    Candles,
    CryptoSource,
    Day,
    Days,
    Json,
    NoPublish,
    Roster,
    SeasonLake,
    Seed,
    StockSource,
    Symbols,
    whole,
)
from arena.cli._render import console, market_text, print_json, refused, text_table

Seconds = Annotated[float, Parameter(validator=SECONDS)]  # its help: the command's docstring
SomePlayers = Annotated[int | None, whole(
    1, MAX_PLAYERS,
    f"zero-skill players per asset (default 2,000; 20,000 for the final; {PLAYERS_RANGE})")]

season_app = cyclopts.App(name="season", help="a season: init, status, backfill or retry a "
                          "cycle, add or retire contestants, publish, verify", version_flags=[])


@season_app.command
def init(*, start: str | None = None, days: Days = 28, id: str | None = None,
         crypto: CryptoSource = "synthetic", stocks: StockSource = "synthetic",
         symbols: Symbols = None, roster: Roster = None, seed: Seed = None,
         call_timeout: Seconds = 60.0, cycle_deadline: Seconds = 600.0, dask: str | None = None,
         candles: Candles = "ohlcv", blind: Blind = False, blind_sectors: BlindSectors = False,
         lake: SeasonLake = None, league: str | None = None, json: Json = False) -> int:
    """Write a new season's config (and a copy of its roster) into a lake, or into the next
    lake of a league.

    Parameters
    ----------
    start
        first cycle day, ISO date (with --league: only for its first season; default: where the
        previous season ended)
    id
        season id (default: <start>-<providers>)
    roster
        roster YAML, copied into the season (default: the shipped one)
    call_timeout
        seconds a model call may take at most (above 0, at most a day and the cycle deadline)
    cycle_deadline
        seconds a cycle retries its failed contestants (above 0, at most a day)
    dask
        run the flows' contestant fan-out and luck simulations on a Dask cluster: its scheduler
        (tcp://host:8786) or 'local' (default: threads)
    league
        start the league's next season in a lake of its own, LEAGUE/SEASON-ID/, where the
        previous season ended (which must be closed)
    json
        print the season config as JSON
    """
    from arena.app.params import parse_day, symbol_list
    from arena.core.errors import BadArgument
    from arena.core.universe import load_universe
    from arena.data.lake import Lake
    from arena.pipeline.season_config import LIVE, default_providers, init_season, make_season

    universe = load_universe().select(symbol_list(symbols))
    settings = {"season_id": id, "seed": seed, "call_timeout_s": call_timeout,
                "cycle_deadline_s": cycle_deadline, "dask": dask, "candles": candles,
                "blind": blind}
    if blind_sectors and not blind:
        raise BadArgument("--blind-sectors shows sectors in a blind season: give --blind too")
    if league is not None:
        from arena.app.league import init_next

        if lake is not None:
            raise BadArgument("give --league or --lake, not both: a league's season lives in "
                              "its own lake, <league>/<season id>/")
        started = init_next(league, start=None if start is None else parse_day(start, "--start"),
                            days=days, symbols=universe.symbols,
                            providers=default_providers(crypto, stocks), roster=roster,
                            sectors=blind_sectors, **settings)
        where, config = started.lake, started.config
    else:
        if start is None:
            raise BadArgument("--start is needed (the season's first cycle day), unless "
                              "--league starts the league's next season where the last ended")
        where = Lake(lake)
        config = init_season(where, make_season(
            parse_day(start, "--start"), days, universe.symbols, mode=LIVE,
            providers=default_providers(crypto, stocks), **settings), roster=roster,
            sectors=blind_sectors)
    if json:
        print_json(config.to_json())
        return 0
    print(f"season {config.id} in {where.root}: {config.days} daily cycles at "
          f"{config.cycle_hour:02d}:00 UTC from {config.first:%Y-%m-%d} to {config.last:%Y-%m-%d}, "
          f"{len(config.symbols)} assets ({market_text(config)})"
          + (f"; it follows season {config.follows}" if config.follows else "")
          + ("; played BLIND (its names are revealed when it ends)" if config.blind else ""))
    return 0


@season_app.command
def status(*, lake: SeasonLake = None, json: Json = False) -> int:
    """Cycles done, missed and due; data freshness; each contestant's state; storage.
    """
    from arena.app.handle import SeasonHandle
    from arena.app.status import status as job
    from arena.pipeline.live.status import CYCLE_STATES, UPCOMING

    handle = SeasonHandle.open(lake)
    got = job(handle)
    if json:
        print_json(got.to_json())
        return 0
    out = console()
    config = handle.config
    out.print(f"season {config.id} ({config.mode}, {market_text(config)}): "
              f"{config.first:%Y-%m-%d} to {config.last:%Y-%m-%d}, lake {handle.lake.root}")
    counts = ", ".join(f"{n} {s}" for s in CYCLE_STATES if (n := got.count(s)))
    out.print(f"cycles: {counts}")
    out.print(got.storage.describe() if got.storage is not None else
              "storage unknown: never served (arena serve proves the lake keeps its data)")
    cycles = text_table("cycle", "state", ("missing", "wrap"))
    for c in got.cycles:
        if c.state != UPCOMING:
            why = "; ".join(f"{n} failed: {e}" for n, e in c.last_error.items())
            cycles.add_row(c.at.isoformat(), c.state,
                           ", ".join(c.missing) + (f" ({why})" if why else ""))
    out.print(cycles)
    out.print()
    out.print(_leading(got))
    out.print(f"percentiles as published after cycle {got.published_cycles}: luck pct among the "
              "zero-skill players (the market's direction included), skill pct among the "
              "contestant's matched players (its own book on assets drawn at random: direction "
              "held fixed; - without a position)" if got.published_cycles else
              "percentiles: none published yet (arena season publish)")
    _print_people(out, got.contestants)
    data = text_table("asset", "provider", "interval", "last price at", "state")
    for f in got.assets:
        data.add_row(f.symbol, f.provider, f.interval or "-",
                     "-" if f.printed_at is None else f"{f.printed_at:%Y-%m-%d %H:%M}", f.state)
    out.print()
    out.print(data)
    return 0


def _leading(got) -> str:
    """The line naming the leading contestant (a ruler never leads), or why there is none."""
    from arena.reporting.roles import CONTESTANT

    leader = got.leader
    if leader is not None:
        return f"leading contestant: {leader.contestant}, ${leader.equity:,.2f}"
    if any(c.role == CONTESTANT for c in got.contestants):
        return "leading contestant: none yet (no contestant has an equity)"
    return "no contestant in this season, only the house rules (rulers)"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _print_people(out, people) -> None:
    """Each contestant's state, the contestants first, then the rulers under their title."""
    from arena.reporting.leaderboard import BAND_TITLES
    from arena.reporting.roles import ROLES, RULER

    for role in ROLES:
        band = [c for c in people if c.role == role]
        if not band:
            continue
        shown = text_table(RULER if role == RULER else "contestant", ("cycles", "right"),
                           "last cycle", "last status", ("equity", "right"),
                           ("luck pct", "right"), ("skill pct", "right"), ("positions", "wrap"))
        for c in band:
            equity = "-" if c.equity is None else f"${c.equity:,.2f}"
            changed = f" ({'; '.join(c.roster)})" if c.roster else ""  # added or retired
            shown.add_row(f"{c.contestant}{changed}", str(c.cycles),
                          "-" if c.last_cycle is None else c.last_cycle.isoformat(),
                          c.last_status or "-", equity, _pct(c.luck_percentile),
                          _pct(c.skill_percentile), ", ".join(c.positions) or "-")
        out.print()
        if role == RULER:
            out.print(BAND_TITLES[RULER])
        out.print(shown)


@season_app.command
def backfill(date: Day, /, *, no_publish: NoPublish = False, lake: SeasonLake = None,
             json: Json = False) -> int:
    """Play a missed cycle, oldest first (an earlier missed cycle refuses it, naming the command
    that plays it), only while no later cycle exists; a recorded cycle is a no-op (exit 0).

    """
    from arena.app.cycle import Kind
    from arena.cli.cycle import play_and_show

    return play_and_show(Kind.BACKFILL, lake, at=date, json=json, no_publish=no_publish)


@season_app.command
def retry(date: Day, /, *, no_publish: NoPublish = False, lake: SeasonLake = None,
          json: Json = False) -> int:
    """Play a cycle again for the contestants without a record (their model failed), before
    the next cycle; a cycle every contestant has a record at is a no-op (exit 0).

    """
    from arena.app.cycle import Kind
    from arena.cli.cycle import play_and_show

    return play_and_show(Kind.RETRY, lake, at=date, json=json, no_publish=no_publish)


@season_app.command
def add(roster_file: str, /, *, lake: SeasonLake = None, json: Json = False) -> int:
    """Add contestants from the next cycle on (each starts with $10,000; a name the season used
    cannot come back).

    Parameters
    ----------
    roster_file
        roster YAML holding the new contestants
    """
    from arena.app.handle import SeasonHandle
    from arena.pipeline.season_roster import add_contestants

    with refused("nothing changed"):
        handle = SeasonHandle.open(lake)
        return _changes(add_contestants(handle.lake, handle.config, roster_file, _now()), json)


@season_app.command
def retire(*names: str, lake: SeasonLake = None, json: Json = False) -> int:
    """Retire contestants from the next cycle on (their books stay as they are).

    Parameters
    ----------
    names
        the contestants' names
    """
    from arena.app.handle import SeasonHandle
    from arena.core.errors import BadArgument
    from arena.pipeline.season_roster import retire_contestants

    with refused("nothing changed"):
        if not names:
            raise BadArgument("name the contestants to retire")
        handle = SeasonHandle.open(lake)
        return _changes(retire_contestants(handle.lake, handle.config, list(names), _now()),
                        json)


def _now():
    from arena.app.handle import wall_clock

    return wall_clock()


def _changes(changes, json: bool) -> int:
    if json:
        print_json([c.__dict__ for c in changes])
    else:
        for c in changes:
            print(f"{c.contestant}: {c.change} from the cycle of {c.from_cycle}")
    return 0


@season_app.command
def publish(*, players: SomePlayers = None, final: bool = False, mirror: str | None = None,
            lake: SeasonLake = None, json: Json = False) -> int:
    """Rebuild the luck tables, marts and report from the cycles so far (--final after the
    last cycle closes the season).

    Parameters
    ----------
    final
        after the season's last cycle: publish and close the season
    mirror
        then copy the lake to this mirror (a path or fsspec URI)
    """
    from arena.app.effects import Effects
    from arena.app.handle import SeasonHandle
    from arena.app.params import at_least
    from arena.app.publish import publish as job
    from arena.pipeline.live.publish import PublishError

    handle = SeasonHandle.open(lake)
    progress = None if json else (lambda m: print(f"  {m}", flush=True))
    done = job(handle, players=None if players is None else at_least(players, 1, "--players"),
               final=final, mirror=mirror, effects=Effects(progress=progress))
    if done.not_yet is not None:  # refused (the lake was still copied to the mirror)
        raise PublishError(done.not_yet)
    if json:
        print_json({"season": done.season, "report": str(done.report),
                    "marts": str(done.outputs.marts.marts), "closed": done.closed,
                    "seconds": done.outputs.seconds, "mirrored": done.mirrored})
        return 0
    print(f"season {done.season}: marts {done.outputs.marts.marts}, report {done.report}"
          + ("; the season is closed" if done.closed else ""))
    return 0


@season_app.command
def verify(*, repair: bool = False, restore_from: str | None = None, lake: SeasonLake = None,
           json: Json = False) -> int:
    """Check everything the season wrote against its recorded digests (season files, bars of
    every interval, publications, ledger, prompts, marts and warehouse); exit 1 while damage
    remains.

    Parameters
    ----------
    repair
        roll torn publications forward or back, derive disagreeing intervals again, write a
        missing ledger head from a whole chain
    restore_from
        a mirror (a path or fsspec URI): copy each damaged ledger record, prompt, season file
        and bar partition back from it, when the mirror's copy is the one recorded (the damaged
        one is quarantined)
    """
    from arena.app.handle import as_lake
    from arena.app.verify import LakeDamaged
    from arena.app.verify import verify as job

    progress = None if json else (lambda m: print(f"  checking {m}", flush=True))
    done = job(as_lake(lake), repair=repair, restore_from=restore_from, progress=progress)
    if json:
        print_json(done.to_json())
        return 1 if done.damaged else 0
    for finding in done.findings:
        print(finding.describe())
    chained = done.records - done.unchained
    before = f", {done.unchained} written before the chain" if done.unchained else ""
    summary = (f"{done.contestants} contestants ({chained} chained records{before}), "
               f"{done.partitions} bar partitions")
    if done.damaged:
        raise LakeDamaged(f"{len(done.damaged)} damaged in {done.lake} ({summary}): each is "
                          "listed above with how to restore it")
    fixed = f"; {len(done.findings)} fixed" if done.findings else ""
    print(f"whole: {summary}{fixed}")
    return 0
