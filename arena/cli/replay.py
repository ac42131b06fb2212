"""``arena replay``, ``arena demo`` and ``arena report``: the replay job
(:func:`arena.app.replay.replay`) and the report job (:func:`arena.app.publish.report`)."""

from __future__ import annotations

import sys
import time

from arena.cli._options import (
    Blind,
    BlindSectors,
    Candles,
    CryptoSource,
    Days,
    Drop,
    DropInterval,
    Ingest,
    Json,
    Lake,
    Players,
    Roster,
    SeasonLake,
    Seed,
    StockSource,
    Symbols,
)
from arena.cli._render import market_text, print_json, print_leaderboard


def replay(*, start: str, days: Days = 28, roster: Roster = None, symbols: Symbols = None,
           seed: Seed = None, players: Players = 20_000, ingest: Ingest = "season",
           candles: Candles = "ohlcv", blind: Blind = False, blind_sectors: BlindSectors = False,
           drop: Drop = None, drop_interval: DropInterval = "1h",
           crypto: CryptoSource = "synthetic", stocks: StockSource = "synthetic",
           lake: SeasonLake = None, json: Json = False) -> int:
    """Replay a season on the synthetic market, on recorded bars (--drop) or on the vendors'
    history (--crypto ccxt --stocks yfinance), resumable, then build the luck tables, the marts
    and the report.

    Parameters
    ----------
    start
        first cycle day, ISO date
    """
    from arena.data.lake import default_root

    return run_replay("arena replay", start=start, days=days, roster=roster, symbols=symbols,
                      seed=seed, players=players, ingest=ingest, candles=candles,
                      lake=lake or str(default_root()), json=json, blind=blind,
                      blind_sectors=blind_sectors, drop=drop, drop_interval=drop_interval,
                      crypto=crypto, stocks=stocks)


def demo(*, start: str | None = None, days: Days = 28, roster: Roster = None,
         model: str | None = None, api_base: str | None = None, symbols: Symbols = None,
         seed: Seed = None, players: Players = 20_000, ingest: Ingest = "season",
         candles: Candles = "ohlcv", lake: str | None = None, json: Json = False) -> int:
    """Replay the demo season offline (28 days from 2026-10-01 on the synthetic market), build
    the marts and the report.

    Parameters
    ----------
    start
        first cycle day, ISO date (default 2026-10-01)
    model
        PROVIDER/MODEL: a language model plays beside the house rules, called through litellm
        (a hosted model's key from its usual environment variable, e.g. OPENAI_API_KEY)
    api_base
        the base URL of a local OpenAI-compatible server for --model (Ollama, llama.cpp's
        server, vLLM), e.g. http://127.0.0.1:8000/v1
    lake
        lake root of the season (default: $ARENA_LAKE/demo or ./data_lake/demo; with --model,
        ./data_lake/demo-<model>)
    """
    import os
    import tempfile
    from pathlib import Path

    from arena import DEMO_START
    from arena.app.demo_model import check_model, model_name, model_roster
    from arena.core.errors import BadArgument
    from arena.data.lake import default_root

    if model is None:
        if api_base is not None:
            raise BadArgument("--api-base is the server of --model: give --model PROVIDER/MODEL")
        return run_replay("arena demo", start=start or DEMO_START, days=days, roster=roster,
                          symbols=symbols, seed=seed, players=players, ingest=ingest,
                          candles=candles, lake=lake or str(default_root() / "demo"),
                          json=json, invite=True)
    check_model(model, api_base, os.environ)
    where = lake or str(default_root() / f"demo-{model_name(model)}")
    with tempfile.TemporaryDirectory() as tmp:  # the season keeps its own copy of the roster
        mine = model_roster(roster, model, api_base, Path(tmp) / "roster.yaml")
        return run_replay("arena demo", start=start or DEMO_START, days=days, roster=str(mine),
                          symbols=symbols, seed=seed, players=players, ingest=ingest,
                          candles=candles, lake=where, json=json)


def run_replay(name: str, *, start: str, days: int, roster: str | None, symbols: str | None,
               seed: int | None, players: int, ingest: Ingest, lake: str, json: bool,
               candles: Candles = "ohlcv", invite: bool = False, blind: bool = False,
               blind_sectors: bool = False, drop: str | None = None,
               drop_interval: str = "1h", crypto: str = "synthetic",
               stocks: str = "synthetic") -> int:
    """The replay job, its progress and its leaderboard; at the end, the site command to
    open, and (``invite``: a demo without a model) how to add a language model."""
    import os

    from arena.app.effects import Effects
    from arena.app.params import at_least, parse_day, symbol_list
    from arena.app.replay import ReplayPlan
    from arena.app.replay import replay as job
    from arena.data.lake import Lake

    began = time.perf_counter()
    say = (lambda _m: None) if json else (lambda m: print(f"  {m}", flush=True))

    def started(handle, contestants: int) -> None:
        if not json:
            shown = " (played BLIND)" if handle.config.blind else ""
            market = (f"recorded bars from {drop}" if drop else "the SYNTHETIC market"
                      if handle.config.synthetic else market_text(handle.config))
            print(f"replaying {days} days from {handle.config.first:%Y-%m-%d} on {market}"
                  f"{shown} ({contestants} contestants) into {handle.lake.root}", flush=True)

    def progress(day, done: int, total: int) -> None:
        fills = sum(o.fills for o in day.outcomes) + day.automatic_closes
        say(f"day {done:>2}/{total}  {day.at:%Y-%m-%d %H:%M}  fills {fills:>3}  "
            f"({day.seconds:.1f} s, {time.perf_counter() - began:.0f} s elapsed)")

    plan = ReplayPlan(parse_day(start, "--start"), days, roster, symbol_list(symbols), seed,
                      at_least(players, 1, "--players"), ingest=ingest, candles=candles,
                      blind=blind, blind_sectors=blind_sectors, drop=drop,
                      drop_interval=drop_interval, crypto=crypto, stocks=stocks)
    done = job(Lake(lake), plan, env=os.environ, effects=Effects(progress=say),
               on_start=started, on_day=progress)
    for s in done.skipped:
        print(f"  {s.spec.name}: {s.reason}", file=sys.stderr)
    marts = done.outputs.marts
    if json:
        from arena.reporting.leaderboard import best_contestant, json_rows

        best = best_contestant(done.board)
        print_json({"start": done.played.start.isoformat(), "lake": str(done.season.lake.root),
                    "report": str(done.outputs.report), "warehouse": str(marts.warehouse),
                    "marts": str(marts.marts), "seconds": done.outputs.seconds,
                    "best_contestant": None if best is None else best["contestant"],
                    "leaderboard": json_rows(done.board),
                    "days": [{"at": d.at.isoformat(), "automatic_closes": d.automatic_closes,
                              "outcomes": [o.as_dict() for o in d.outcomes]}
                             for d in done.played.days]})
        return 0
    print_leaderboard(done.board, done.replicates)
    seconds = done.outputs.seconds
    print(f"\nluck: {seconds['luck']:.1f} s, dbt: {marts.count('model')} models and "
          f"{marts.count('test') + marts.count('unit_test')} tests in {seconds['dbt']:.1f} s; "
          f"{time.perf_counter() - began:.0f} s in all")
    print(f"warehouse: {marts.warehouse}  (marts as Parquet: {marts.marts})")
    print(f"daily reports: {done.season.lake.root / 'reports' / 'daily'}")
    print(f"season report: {done.outputs.report}")
    print(f"open the site: arena web --lake {done.season.lake.root}  (http://127.0.0.1:8780/)")
    if invite:
        from arena.app.demo_model import HOW

        print(f"to see a language model play: {HOW}")
    return 0


def report(*, lake: Lake = None, out: str | None = None) -> int:
    """Write the season report from the published marts.

    Parameters
    ----------
    out
        HTML file to write (default: <lake>/reports/season.html)
    """
    from pathlib import Path

    from arena.app.publish import report as job
    from arena.data.lake import Lake

    print(job(Lake(lake), Path(out) if out else None))
    return 0
