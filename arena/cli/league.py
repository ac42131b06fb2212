"""``arena league ...``: status, publish - a league's seasons and its marts across them."""

from __future__ import annotations

from typing import Annotated, Literal

import cyclopts
from cyclopts import Parameter

from arena.cli._options import (
    Blind,
    BlindSectors,
    Candles,
    CryptoSource,
    Days,
    Drop,
    DropInterval,
    Json,
    Players,
    Roster,
    Seed,
    StockSource,
    Symbols,
    whole,
)
from arena.cli._render import console, print_json, text_table

LeagueDir = Annotated[str, Parameter(help="the league's folder (its seasons' lakes side by side)")]

league_app = cyclopts.App(name="league", help="a league of seasons: status, publish (the marts "
                          "across its seasons and the verdict on skill)", version_flags=[])


@league_app.command
def status(league: LeagueDir, /, *, json: Json = False) -> int:
    """The league's seasons in the order they start: id, dates, state, cycles, published or
    not, contestants.
    """
    from arena.app.league import status as job

    got = job(league)
    if json:
        print_json(got.to_json())
        return 0
    out = console()
    if not got.seasons:
        out.print(f"league {got.root}: no season yet (arena season init --league {got.root} "
                  "--start DATE)")
        return 0
    counted = sum(s.counted for s in got.seasons)
    n = len(got.seasons)
    out.print(f"league {got.root}: {n} season{'' if n == 1 else 's'}, {counted} counted (ended "
              "and published)")
    shown = text_table("season", "first cycle", "last cycle", "state", ("cycles", "right"),
                       "published", ("contestants", "right"), ("rulers", "right"), "after")
    for s in got.seasons:
        shown.add_row(s.id, f"{s.config.first:%Y-%m-%d %H:%M}", f"{s.config.last:%Y-%m-%d %H:%M}",
                      s.state, f"{s.cycles}/{s.config.days}", "yes" if s.published else "no",
                      str(len(s.contestants)), str(len(s.rulers)), s.after)
    out.print(shown)
    return 0


VerdictSeasons = Annotated[Literal["clean", "live", "historical", "all"], Parameter(
    help="the seasons the verdict reads: clean, every season not contaminated for the model "
         "(real prices from before its knowledge cutoff); live or historical, those of one "
         "kind, not contaminated; all, contaminated ones too")]


@league_app.command
def publish(league: LeagueDir, /, *, verdict_seasons: VerdictSeasons = "clean",
            json: Json = False) -> int:
    """Build the league's marts over its published seasons (results per season, totals, the
    verdict on skill) into LEAGUE/league.duckdb and LEAGUE/marts/.
    """
    from arena.app.effects import Effects
    from arena.app.league import publish as job

    progress = None if json else (lambda m: print(f"  {m}", flush=True))
    done = job(league, Effects(progress=progress), seasons=verdict_seasons)
    return _published(league, done, verdict_seasons, json)


@league_app.command
def replay(league: LeagueDir, /, *, from_: Annotated[str, Parameter(name="--from")],
           seasons: Annotated[int, whole(1, 520, "how many seasons, one after another (1 to "
                                                 "520)")],
           days: Days = 28, roster: Roster = None, symbols: Symbols = None, seed: Seed = None,
           players: Players = 20_000, candles: Candles = "ohlcv", blind: Blind = False,
           blind_sectors: BlindSectors = False, drop: Drop = None,
           drop_interval: DropInterval = "1h", crypto: CryptoSource = "synthetic",
           stocks: StockSource = "synthetic", verdict_seasons: VerdictSeasons = "clean",
           json: Json = False) -> int:
    """Replay historical seasons one after another into the league (the synthetic market,
    recorded bars with --drop, or the vendors' history with --crypto/--stocks), each starting
    where the last ended, then publish the league and its verdict on skill.
    Resumable: run it again and the seasons replayed are kept, the one cut short goes on.

    Parameters
    ----------
    from_
        the first season's first cycle day, ISO date
    """
    import os

    from arena.app.effects import Effects
    from arena.app.league import LeagueReplayPlan, replay_league
    from arena.app.params import at_least, parse_day, symbol_list
    from arena.app.replay import ReplayPlan

    step = ReplayPlan(parse_day(from_, "--from"), days, roster, symbol_list(symbols), seed,
                      at_least(players, 1, "--players"), candles=candles, blind=blind,
                      blind_sectors=blind_sectors, drop=drop, drop_interval=drop_interval,
                      crypto=crypto, stocks=stocks)
    say = None if json else (lambda m: print(f"  {m}", flush=True))

    def started(number: int, total: int, lake) -> None:
        if not json:
            print(f"season {number}/{total}: {lake.root.name}", flush=True)

    done = replay_league(league, LeagueReplayPlan(step.start, seasons, step), env=os.environ,
                         effects=Effects(progress=say), verdict_seasons=verdict_seasons,
                         on_season=started)
    if not json:
        print(f"league {league}: {len(done.played)} season(s) replayed now, {len(done.kept)} "
              "kept from before", flush=True)
    return _published(league, done.build, verdict_seasons, json)


def _published(league: str, done, verdict_seasons: str, json: bool) -> int:
    """The league's publication: its seasons and the verdict, as JSON or tables."""
    from arena.pipeline.league_marts import SELECTIONS

    verdict = done.verdict
    if json:
        print_json({"league": league, "warehouse": str(done.warehouse), "marts": str(done.marts),
                    "seasons": [s.id for s in done.published],
                    "counted": [s.id for s in done.counted],
                    "seconds": done.build.seconds,
                    "verdict": verdict.astype(object).where(verdict.notna(), None)
                    .to_dict(orient="records")})
        return 0
    out = console()
    n = len(done.published)
    out.print(f"league {league}: {n} published season{'' if n == 1 else 's'}, "
              f"{len(done.counted)} counted; marts {done.marts}, warehouse {done.warehouse}")
    shown = text_table("model", "role", ("seasons", "right"), ("Stouffer Z", "right"),
                       ("p", "right"), ("Holm p", "right"), ("verdict", "wrap"))
    for row in verdict.itertuples():
        shown.add_row(row.model, row.role, str(row.seasons), _number(row.stouffer_z, "+.2f"),
                      _number(row.p_value, ".4f"), _number(row.holm_p_value, ".4f"), row.verdict)
    out.print(shown)
    for row in verdict.itertuples():
        out.print(f"{row.model}: {row.in_words}")
    for null in dict.fromkeys(verdict["null_hypothesis"].dropna()):
        out.print(f"null hypothesis: {null}")
    for how in dict.fromkeys(verdict["method"]):  # one sentence per family (role)
        out.print(how)
    out.print(f"seasons read: {SELECTIONS[verdict_seasons]} (--verdict-seasons "
              f"{verdict_seasons})")
    return 0


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None or value != value else format(value, spec)
