"""The ``arena`` command. Heavy libraries (Great Expectations, Prefect, vendor SDKs) are imported
only by the subcommand that needs them, so ``arena --help`` stays instant."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from arena.core.settings import Interrupted, prepare_process, stop_signals
from arena.data.errors import MarketError

EXIT_OK, EXIT_FAILED, EXIT_UNUSABLE = 0, 1, 2


def _json_default(value: object) -> object:
    return str(value)


def _print_json(payload: object) -> None:
    print(json.dumps(payload, indent=2, default=_json_default))


# ---------------------------------------------------------------------------------------- ingest
def _cmd_ingest(args: argparse.Namespace) -> int:
    import pandas as pd

    from arena.core.sessions import utc
    from arena.core.universe import UniverseError, load_universe
    from arena.data.ingest import IngestError, LakeWriteError, default_window, run_ingest
    from arena.data.lake import Lake
    from arena.data.providers import make_provider
    from arena.pipeline.season_config import SeasonConfigError, find_season
    from arena.pipeline.season_ingest import season_ingest

    try:
        universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
        source, seed, instead_of = args.source, args.seed, args.instead_of
        season = find_season(Lake(args.lake))
        if season is not None:  # the season decides the providers and the assets
            plan = season_ingest(season, universe, source, seed, explicit=bool(args.symbols),
                                 instead_of=instead_of)
            universe, source, seed = plan.universe, plan.source, plan.seed
        elif instead_of is not None:
            raise ValueError("--instead-of is for a season's lake (arena season init): the "
                             "files folder fills the partitions of the season's vendor")
        provider = make_provider(source or "synthetic", seed=seed, drop=args.drop,
                                 drop_interval=args.drop_interval, instead_of=instead_of)
        now = pd.Timestamp.now(tz="UTC")
        start, end = default_window(now)
        start = utc(args.start) if args.start else start
        end = utc(args.end) if args.end else end
    except (UniverseError, SeasonConfigError, ValueError) as exc:
        print(f"arena ingest: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    lake = Lake(args.lake)
    try:
        with _progress(enabled=not args.json and sys.stderr.isatty()) as notify:
            result = run_ingest(provider, universe, start=start, end=end, lake=lake, now=now,
                                progress=notify, full=args.full)
    except LakeWriteError:  # a full or read-only lake: main() says so in one line
        raise
    except IngestError as exc:  # one asset or more did not publish; the others did
        if season is not None:
            _watch_held(lake, season, provider.name, exc.manifest, now, args)
        if args.json:
            _print_json(exc.manifest)
        print(f"arena ingest: {exc}", file=sys.stderr)
        assets = exc.manifest.get("assets") or {}
        for symbol, outcome in assets.items():
            why = f": {outcome['reason']}" if outcome.get("reason") else ""
            print(f"  {symbol:<8} {outcome['status']}{why}", file=sys.stderr)
        return EXIT_FAILED
    except ValueError as exc:  # a window in the future, a provider that serves none of the assets
        print(f"arena ingest: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    watch_failed = season is not None and not _watch_held(lake, season, provider.name,
                                                          result.manifest, now, args)
    if args.json:
        _print_json(result.manifest)
    else:
        print(render_ingest_summary(result.manifest))
    return EXIT_FAILED if watch_failed else EXIT_OK


def _watch_held(lake, season, provider: str, manifest: dict, now, args: argparse.Namespace
                ) -> bool:
    """After an ingest into a season's lake: the held stocks' 15-minute bars (the monitor's,
    :func:`arena.pipeline.season_ingest.watch_after_ingest`). False (said on stderr) when they
    could not be published."""
    from arena.core.sessions import utc
    from arena.pipeline.season_ingest import watch_after_ingest

    symbols, problems = watch_after_ingest(lake, season, provider,
                                           end=utc(manifest["asked"]["end_used"]), now=now,
                                           drop=args.drop if args.instead_of else None)
    for source, why in problems.items():
        print(f"arena ingest: the 15-minute bars of the held {', '.join(symbols)} for the "
              f"monitor ({source}): {why}", file=sys.stderr)
    return not problems


class _progress:
    """A rich progress bar on stderr for long ingests (silent when not a terminal)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar = None
        self._tasks: dict[str, object] = {}

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.__enter__()
        return self._notify

    def _notify(self, stage: str, done: int, total: int) -> None:
        assert self._bar is not None
        if stage not in self._tasks:
            self._tasks[stage] = self._bar.add_task(stage, total=total)
        self._bar.update(self._tasks[stage], completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)


def render_ingest_summary(manifest: dict) -> str:
    """A short human summary of a published ingest run."""
    got = manifest["got"]
    asked = manifest["asked"]
    label = "SYNTHETIC market data (embedded default, not real prices)" if manifest["synthetic"] \
        else f"market data from {manifest['provider']}"
    per_interval: dict[str, int] = {}
    for key, rows in manifest["partitions"].items():
        parts = key.split("/")
        if parts[0] not in ("funding", "earnings"):
            per_interval[parts[1]] = per_interval.get(parts[1], 0) + rows
    t = manifest["timings_seconds"]
    lines = [
        f"arena ingest {manifest['run_id']}: {label}",
        f"  window      {asked['start']} .. {asked['end']}  ({len(got)} assets, base {asked['base_interval']})",
        "  bars        " + ", ".join(f"{iv} {n:,}" for iv, n in per_interval.items()),
        f"  new bars    {sum(s['new'] for s in got.values()):,} base bars added, "
        f"{sum(s['revised'] for s in got.values())} revised",
        f"  validation  {manifest['validation']['summary']}",
        "  timings     " + ", ".join(f"{k} {v:.2f}s" for k, v in t.items()),
        f"  validation  {manifest['validation']['page']} (every run: "
        f"{manifest['validation']['index']}; Data Docs, online: "
        f"{manifest['validation']['data_docs']})",
        f"  published   {manifest['market'].rstrip('/')}/bars (manifest {manifest['run_id']}.json)",
    ]
    return "\n".join(lines)


# -------------------------------------------------------------------------------------- validate
def _cmd_validate(args: argparse.Namespace) -> int:
    from arena.core.sessions import CalendarError, utc
    from arena.data.validation.checks import UnusableInputError, validate_file

    path = Path(args.path)
    interval, calendar, symbol = args.interval, args.calendar, args.symbol
    if path.is_dir():  # a lake partition: read its address from the path
        parts = dict(p.split("=", 1) for p in path.parts if "=" in p)
        symbol = symbol or parts.get("symbol")
        interval = interval or parts.get("interval")
        if calendar is None and symbol:
            from arena.core.universe import UniverseError, load_universe

            try:
                calendar = load_universe()[symbol].calendar
            except UniverseError:
                calendar = None
        path = path / "data.parquet"
    try:
        as_of = utc(args.as_of) if args.as_of else None
        report = validate_file(path, interval=interval or "1d", calendar=calendar or "XNYS",
                               as_of=as_of, symbol=symbol)
    except (UnusableInputError, CalendarError, FileNotFoundError) as exc:
        if args.json:
            _print_json({"path": str(path), "usable": False, "error": str(exc)})
        print(f"arena validate: unusable input: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.json:
        _print_json({"path": str(path), "usable": True, **report.to_dict()})
    else:
        print(f"{path}: {report.summary()}")
        for r in report.failed():
            print(f"  FAILED {r.check}: {r.message}")
    return EXIT_OK if report.success else EXIT_FAILED


# ----------------------------------------------------------------------------------------- check
def _cmd_check(args: argparse.Namespace) -> int:
    from arena.core.sessions import CalendarError, utc
    from arena.engine.check import CheckInputError, render_check, run_check

    try:
        report = run_check(Path(args.state), Path(args.answer), Path(args.prices),
                           utc(args.at))
    except (CheckInputError, CalendarError, ValueError) as exc:
        print(f"arena check: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.json:
        _print_json(report)
    else:
        print(render_check(report))
    return EXIT_OK if report["parsed"] and not report["rejections"] else EXIT_FAILED


# --------------------------------------------------------------------------- score, luck, rules
def _scoring_inputs(args: argparse.Namespace):
    from arena.data.validation.checks import UnusableInputError, load_price_file
    from arena.market.clocks import infer_grid
    from arena.scoring.scorer import ScorerInputError, default_cost_rate

    try:
        bars = load_price_file(args.prices)
    except (UnusableInputError, FileNotFoundError) as exc:
        raise ScorerInputError(f"prices file {args.prices}: {exc}") from exc
    if len(bars) < 2:
        raise ScorerInputError(f"prices file {args.prices} has {len(bars)} bar(s); need two")
    calendar, grid = infer_grid(pd_index(bars))
    default = default_cost_rate(calendar)
    return bars, (default if args.cost_rate is None else args.cost_rate), calendar, grid


def _scoring(name: str, command):
    """Exit 2 on unusable input, 1 when the scorer's self-check fails (nothing is scored)."""

    def run(args: argparse.Namespace) -> int:
        from arena.scoring.scorer import ScorerInputError
        from arena.scoring.self_check import ScorerSelfCheckError

        try:
            return command(args)
        except ScorerInputError as exc:
            print(f"arena {name}: {exc}", file=sys.stderr)
            return EXIT_UNUSABLE
        except ScorerSelfCheckError as exc:
            print(f"arena {name}: {exc}", file=sys.stderr)
            return EXIT_FAILED

    return run


def pd_index(bars):
    import pandas as pd

    return pd.DatetimeIndex(bars["timestamp"])


def _score(args: argparse.Namespace) -> int:
    from arena.scoring.rules_table import load_positions
    from arena.scoring.scorer import score
    from arena.scoring.self_check import ensure_self_checked

    ensure_self_checked()
    bars, rate, calendar, grid = _scoring_inputs(args)
    closes = bars.set_index("timestamp")["close"]
    result = score(closes, load_positions(args.positions, closes.index), rate)
    payload = {**result.as_dict(), "cost_rate": rate, "grid": grid, "calendar": calendar}
    if args.json:
        _print_json(payload)
    else:
        print(f"return {result.total_return:+.4%}  turnover {result.turnover:.2f}  "
              f"fees {result.fees:.4%}  valid {result.valid_share:.0%}  "
              f"({len(closes)} {grid} bars, cost rate {rate:g})")
    return EXIT_OK


def _luck(args: argparse.Namespace) -> int:
    from arena.scoring.asset_luck import luck
    from arena.scoring.rules_table import load_positions
    from arena.scoring.scorer import score
    from arena.scoring.self_check import ensure_self_checked

    ensure_self_checked()
    bars, rate, calendar, grid = _scoring_inputs(args)
    closes = bars.set_index("timestamp")["close"]
    result = luck(closes, players=args.players, seed=args.seed, cost_rate=rate,
                  step=args.step, calendar=calendar, draw=args.draw)
    payload = {**result.as_dict(), "grid": grid, "calendar": calendar}
    if args.entrant:
        entrant = score(closes, load_positions(args.entrant, closes.index), rate)
        p, rank = result.place(entrant.total_return)
        payload.update(entrant_return=entrant.total_return, percentile=p, rank_score=rank)
    if args.json:
        _print_json(payload)
        return EXIT_OK
    q = payload["quantiles"]
    print(f"{payload['players']:,} zero-skill players on {payload['bars']} {grid} bars "
          f"({payload['steps']} decisions, cost rate {rate:g}, seed {args.seed})")
    print("  quantiles  " + "  ".join(f"{k}: {v:+.2%}" for k, v in q.items()))
    print(f"  luck ceiling (95th percentile): {payload['ceiling']:+.2%}")
    if args.entrant:
        print(f"  entrant {payload['entrant_return']:+.2%}: percentile {payload['percentile']:.3f}, "
              f"rank score {payload['rank_score']:.2f}")
    return EXIT_OK


def _rules(args: argparse.Namespace) -> int:
    from arena.market.clocks import PERIODS_PER_YEAR
    from arena.scoring.rules_table import rules_table

    bars, rate, calendar, grid = _scoring_inputs(args)
    table, ruler = rules_table(bars, cost_rate=rate, start=args.start, players=args.players,
                               seed=args.seed, calendar=calendar,
                               periods_per_year=PERIODS_PER_YEAR[(calendar, grid)])
    if args.json:
        _print_json({"grid": grid, "calendar": calendar, "cost_rate": rate,
                     "luck": ruler.as_dict(), "rules": table.to_dict(orient="records")})
        return EXIT_OK
    print(f"reference rules on {ruler.bars} {grid} bars (cost rate {rate:g}); luck ceiling "
          f"{ruler.ceiling:+.2%} from {ruler.players:,} zero-skill players")
    shown = _text_table(("#", "right"), "rule", ("return", "right"), ("turnover", "right"),
                        ("fees", "right"), ("percentile", "right"), ("rank score", "right"))
    for row in table.itertuples():  # row._3: the "return" column (a keyword, so no attribute)
        shown.add_row(str(int(row.rank)) if row.kind == "rule" else "", row.rule, f"{row._3:+.2%}",
                      f"{row.turnover:.1f}", f"{row.fees:.2%}", f"{row.percentile:.3f}",
                      f"{row.rank_score:.2f}")
    _console().print(shown)
    return EXIT_OK


# ----------------------------------------------------------------------------------------- cycle
def _cmd_cycle(args: argparse.Namespace, *, backfill: bool = False, retry: bool = False) -> int:
    """``arena cycle`` (the season's current cycle), ``arena season backfill DATE`` and
    ``arena season retry DATE``."""
    import os

    import pandas as pd

    from arena.agents.roster import RosterError
    from arena.core.sessions import CalendarError, utc
    from arena.data.lake import Lake
    from arena.engine.outcomes import FAILED
    from arena.pipeline.live import CycleRefused, current_cycle, play_season_cycle
    from arena.pipeline.season_config import SeasonConfigError, load_season, season_contestants

    name = "season backfill" if backfill else "season retry" if retry else "cycle"
    lake = Lake(args.lake)
    now = pd.Timestamp.now(tz="UTC")
    try:
        season = load_season(lake)
        if backfill or retry:
            at = season.cycle_time(utc(args.date))
        else:
            at = utc(args.at) if args.at else current_cycle(season, now)
        contestants, skipped = season_contestants(lake, os.environ,
                                                  call_timeout=season.call_timeout_s, at=at)
        run = play_season_cycle(lake, season, contestants, at, now=now, backfill=backfill,
                                retry=retry, force_time=getattr(args, "force_time", False))
    except (SeasonConfigError, RosterError, CalendarError, CycleRefused) as exc:
        print(f"arena {name}: {exc} (nothing recorded)", file=sys.stderr)
        return EXIT_UNUSABLE
    outcomes = run.outcomes
    rows = [o.as_dict() for o in outcomes]
    if args.json:
        _print_json({"season": season.id, "at": at.isoformat(), "outcomes": rows,
                     "automatic_closes": run.automatic_closes, "stale": run.plan.stale,
                     "rounds": run.attempts,
                     "forfeits": [{"cycle_at": c.isoformat(), "contestant": n}
                                  for c, n in run.forfeits],
                     "skipped": [{"contestant": s.spec.name, "reason": s.reason} for s in skipped]})
    else:
        what = "backfilled cycle" if backfill else "retried cycle" if retry else "decision cycle"
        print(f"{what} {at.isoformat()} of season {season.id} ({_market_text(season)})")
        for cycle, who in run.forfeits:
            print(f"  {who}: recorded as forfeited at {cycle.isoformat()} (no answer by this cycle)")
        if run.automatic_closes:
            print(f"  monitor: {run.automatic_closes} automatic close(s) since "
                  f"{run.plan.monitor_from.isoformat()}")
        if run.plan.stale:
            print(f"  stale (not traded): {', '.join(run.plan.stale)}")
        shown = _text_table("contestant", "status", "recorded", ("fills", "right"),
                            ("rejections", "right"), ("tokens", "right"), ("cost", "right"),
                            ("detail", "wrap"))
        for o in outcomes:
            shown.add_row(o.contestant, o.status, o.recorded, str(o.fills), str(o.rejections),
                          f"{o.tokens_in}/{o.tokens_out}",
                          "" if o.cost_usd is None else f"${o.cost_usd:.4f}",
                          f"error: {o.error}" if o.error else "")
        for s in skipped:  # not played, so not recorded: setting the key lets a re-run play it
            shown.add_row(s.spec.name, "skipped", "not recorded", "", "", "", "",
                          s.reason.removeprefix("skipped: "))
        _console().print(shown)
    return EXIT_FAILED if any(o.status == FAILED for o in outcomes) else EXIT_OK


def _market_text(season) -> str:
    from arena.data.providers import provider_note

    names = sorted(set(season.providers.values()))
    if len(names) == 1:
        return provider_note(names[0])
    return "market data: " + ", ".join(f"{c} from {p}" for c, p in season.providers.items())


# ---------------------------------------------------------------------------------------- season
def _cmd_season_init(args: argparse.Namespace) -> int:
    from arena.agents.roster import RosterError
    from arena.core.universe import UniverseError, load_universe
    from arena.data.lake import Lake
    from arena.pipeline.season_config import (
        LIVE,
        SeasonConfigError,
        default_providers,
        init_season,
        make_season,
    )

    lake = Lake(args.lake)
    try:
        universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
        season = make_season(args.start, args.days, universe.symbols, mode=LIVE,
                             providers=default_providers(args.crypto, args.stocks),
                             season_id=args.id, seed=args.seed,
                             call_timeout_s=args.call_timeout, cycle_deadline_s=args.cycle_deadline,
                             dask=args.dask)
        season = init_season(lake, season, roster=args.roster)
    except (SeasonConfigError, RosterError, UniverseError, ValueError) as exc:
        print(f"arena season init: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.json:
        _print_json(season.to_json())
        return EXIT_OK
    print(f"season {season.id} in {lake.root}: {season.days} daily cycles at "
          f"{season.cycle_hour:02d}:00 UTC from {season.first:%Y-%m-%d} to {season.last:%Y-%m-%d}, "
          f"{len(season.symbols)} assets ({_market_text(season)})")
    return EXIT_OK


def _season_of(args: argparse.Namespace, command: str):
    """(lake, its season) of ``--lake``; the season is None, with the reason printed, when the
    lake holds none."""
    from arena.data.lake import Lake
    from arena.pipeline.season_config import SeasonConfigError, load_season

    lake = Lake(args.lake)
    try:
        return lake, load_season(lake)
    except SeasonConfigError as exc:
        print(f"arena {command}: {exc}", file=sys.stderr)
        return lake, None


def _cmd_serve(args: argparse.Namespace) -> int:
    import datetime as dt

    from arena.data.lake import Lake
    from arena.data.persistence import MirrorError, restore_lake
    from arena.pipeline.season_config import find_season

    if args.mirror and find_season(Lake(args.lake)) is None and not args.list:
        try:  # a lake without its season: the disk was replaced; bring the season back first
            restored = restore_lake(Lake(args.lake), args.mirror, dt.datetime.now(dt.UTC))
            print(f"arena serve: restored {', '.join(restored)} from {args.mirror}",
                  file=sys.stderr)
        except MirrorError as exc:
            print(f"arena serve: {exc}", file=sys.stderr)
            return EXIT_FAILED
    lake, season = _season_of(args, "serve")
    if season is None:
        return EXIT_UNUSABLE
    from arena.data.persistence import lake_checked, restore_failed

    failed = restore_failed(lake)
    if failed is not None and not args.list:  # the lake is part of a restore: never serve it
        print(f"arena serve: the restore of {failed['at']} from {failed['mirror']} failed "
              f"({failed['error']}): move the lake aside and restore it again (--mirror)",
              file=sys.stderr)
        return EXIT_FAILED
    if args.lake_checked and lake_checked(lake):
        print("arena serve: the lake was checked: uploads to the mirror resume", file=sys.stderr)
    from arena.flows.alerts import alert_webhook
    from arena.flows.deployments import season_jobs, serve_season

    jobs = season_jobs(lake, season, mirror=args.mirror)
    try:
        webhook = alert_webhook(args.alert_webhook)
    except ValueError as exc:
        print(f"arena serve: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.json:
        _print_json([j.as_dict() for j in jobs])
    else:
        console = _console()
        console.print(f"season {season.id}: {len(jobs)} deployments (cron in UTC)")
        table = _text_table("deployment", "schedule", ("flow", "wrap"))
        for j in jobs:
            table.add_row(j.name, j.cron, j.flow)
        console.print(table)
    if args.list:
        return EXIT_OK
    if webhook is None:
        print("arena serve: no alerts (set --alert-webhook or $ARENA_ALERT_WEBHOOK to be told "
              "of a failed, late or overdue run)", file=sys.stderr)
    else:
        from arena.flows.alerts import install_alerts

        alerts = install_alerts(season.id, webhook, cycle_deadline_s=season.cycle_deadline_s)
        print(f"arena serve: alerts {', '.join(alerts.automations)} post to the webhook "
              f"(block {alerts.block})", file=sys.stderr)
    from prefect import tags

    from arena.flows.persistence import StorageVolatile, check_persistence

    try:  # a run of the season (its tag): a volatile lake fails it, which alerts
        with tags(f"season:{season.id}", "job:storage"):
            boot = check_persistence(lake, season.id)
        print(f"arena serve: {boot.describe()}", file=sys.stderr)
    except StorageVolatile as exc:
        print(f"arena serve: {exc}; the mirror is not updated until the lake is restored from "
              "it or checked (--lake-checked): README, runbook", file=sys.stderr)
    serve_season(lake, jobs)  # until Ctrl-C or SIGTERM
    return EXIT_OK


def _cmd_entrant(args: argparse.Namespace) -> int:
    import pandas as pd

    from arena.pipeline.entrants import EntrantError, add_entrant, entrants, revoke_entrant

    command = f"entrant {args.entrant_command}"
    lake, season = _season_of(args, command)
    if season is None:
        return EXIT_UNUSABLE
    now = pd.Timestamp.now(tz="UTC")
    try:
        if args.entrant_command == "add":
            entrant, key = add_entrant(lake, season, args.name, now)
            if args.json:
                _print_json({"name": entrant.name, "key": key})
            else:
                print(f"entrant {entrant.name} added to season {season.id}; its key, shown "
                      f"this once (the lake keeps only its hash):\n{key}")
            return EXIT_OK
        if args.entrant_command == "revoke":
            revoked = revoke_entrant(lake, args.name, now)
            if args.json:
                _print_json({k: v for k, v in revoked.__dict__.items() if k != "key_sha256"})
            else:
                print(f"entrant {revoked.name}: key revoked (its records stay; with no "
                      "submission it holds)")
            return EXIT_OK
    except EntrantError as exc:
        print(f"arena {command}: {exc} (nothing changed)", file=sys.stderr)
        return EXIT_UNUSABLE
    items = entrants(lake)
    if args.json:
        _print_json([{k: v for k, v in e.__dict__.items() if k != "key_sha256"} for e in items])
    else:
        for e in items:
            state = "revoked " + e.revoked_at if e.revoked_at else "active"
            joined = f"plays from {e.joined_from}" if e.joined_from else "no submission yet"
            print(f"{e.name}: {state}, added {e.added_at}, {joined}")
        if not items:
            print(f"season {season.id} has no outside entrant (arena entrant add NAME)")
    return EXIT_OK


def _cmd_mcp(args: argparse.Namespace) -> int:
    from arena.doors.mcp_server import PATH, serve

    lake, season = _season_of(args, "mcp")
    if season is None:
        return EXIT_UNUSABLE
    print(f"arena mcp: season {season.id} at http://{args.host}:{args.port}{PATH} "
          "(streamable HTTP; each entrant's key as a bearer token; Ctrl-C stops)")
    serve(lake.root, host=args.host, port=args.port)
    return EXIT_OK


def _cmd_signal_server(args: argparse.Namespace) -> int:
    import os

    from arena.agents.roster import RosterError, load_roster
    from arena.doors.signal_server import (
        Budget,
        ModelPanel,
        ProtocolError,
        SignalServer,
        check_bind,
        run,
    )
    from arena.doors.signal_store import SignalStore

    token = args.token or os.environ.get("ARENA_SIGNAL_TOKEN") or None
    try:
        check_bind(args.host, token)
    except ProtocolError as exc:
        print(f"arena signal-server: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    panel = None
    if args.contestant:
        try:
            roster = load_roster(args.roster)
        except RosterError as exc:
            print(f"arena signal-server: {exc}", file=sys.stderr)
            return EXIT_UNUSABLE
        spec = next((c for c in roster if c.name == args.contestant), None)
        if spec is None or not spec.uses_model:
            print(f"arena signal-server: the roster has no model contestant "
                  f"{args.contestant!r} (its models: "
                  f"{', '.join(c.name for c in roster if c.uses_model)})", file=sys.stderr)
            return EXIT_UNUSABLE
        if spec.api_key_env and not os.environ.get(spec.api_key_env):
            print(f"arena signal-server: {spec.api_key_env} is not set: the rule-based analysts "
                  "answer instead", file=sys.stderr)
        else:
            panel = ModelPanel(spec)
    server = SignalServer(SignalStore(args.store), panel, budget=Budget(args.daily_calls))
    who = f"{panel.model} (roster entry {args.contestant})" if panel else "rule-based analysts"
    print(f"arena signal-server: ws://{args.host}:{args.port} ({who}; store {args.store}; "
          "Ctrl-C stops)", file=sys.stderr)
    run(server, args.host, args.port, token)
    return EXIT_OK


def _cmd_signal_marts(args: argparse.Namespace) -> int:
    import pandas as pd

    from arena.data.lake import Lake
    from arena.doors.signal_store import SignalStore, attach_from_lake, build_signal_marts
    from arena.pipeline.warehouse import MartsError

    if not Path(args.store).is_dir():
        print(f"arena signal-marts: no signal store at {args.store} (arena signal-server "
              "--store DIR keeps one)", file=sys.stderr)
        return EXIT_UNUSABLE
    store = SignalStore(args.store)
    if args.lake:
        found = attach_from_lake(store, Lake(args.lake), pd.Timestamp.now(tz="UTC"))
        print(f"outcomes from {args.lake}: {found} attached")
    try:
        out = build_signal_marts(store)
    except MartsError as exc:
        print(f"arena signal-marts: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(f"signal_patterns: {out} (and {Path(args.store) / 'dbt' / 'warehouse.duckdb'})")
    return EXIT_OK


def _cmd_lake_market(args: argparse.Namespace) -> int:
    from arena.data.lake import Lake

    lake = Lake(args.lake)
    if args.location is not None:
        market = lake.set_market(args.location)
        print(f"the market data of {lake.root} lives at {market.describe()}")
    count = len(lake.partitions())
    where = lake.market.describe()
    if args.json:
        _print_json({"lake": str(lake.root), "market": where, "partitions": count})
    elif args.location is None:
        print(f"{lake.root}: market data at {where} ({count} bar partitions)")
    return EXIT_OK


def _cmd_season_roster(args: argparse.Namespace) -> int:
    import pandas as pd

    from arena.agents.roster import RosterError
    from arena.pipeline.season_config import SeasonConfigError
    from arena.pipeline.season_roster import add_contestants, retire_contestants

    command = f"season {args.season_command}"
    lake, season = _season_of(args, command)
    if season is None:
        return EXIT_UNUSABLE
    now = pd.Timestamp.now(tz="UTC")
    try:
        if args.season_command == "add":
            changes = add_contestants(lake, season, args.roster_file, now)
        else:
            changes = retire_contestants(lake, season, args.names, now)
    except (SeasonConfigError, RosterError) as exc:
        print(f"arena {command}: {exc} (nothing changed)", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.json:
        _print_json([c.__dict__ for c in changes])
    else:
        for c in changes:
            print(f"{c.contestant}: {c.change} from the cycle of {c.from_cycle}")
    return EXIT_OK


def _cmd_season_status(args: argparse.Namespace) -> int:
    import pandas as pd

    from arena.agents.roster import RosterError, load_roster
    from arena.pipeline.live import season_status
    from arena.pipeline.season_config import roster_path

    lake, season = _season_of(args, "season status")
    if season is None:
        return EXIT_UNUSABLE
    try:
        roster = load_roster(roster_path(lake)).names
    except RosterError as exc:
        print(f"arena season status: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    status = season_status(lake, season, roster, pd.Timestamp.now(tz="UTC"))
    if args.json:
        _print_json(status.to_json())
        return EXIT_OK
    console = _console()
    console.print(f"season {season.id} ({season.mode}, {_market_text(season)}): "
                  f"{season.first:%Y-%m-%d} to {season.last:%Y-%m-%d}, lake {lake.root}")
    counts = ", ".join(f"{n} {s}" for s in ("done", "partial", "failed (retry allowed)", "due",
                                           "missed", "missed (backfill allowed)", "upcoming")
                       if (n := status.count(s)))
    console.print(f"cycles: {counts}")
    console.print(status.storage.describe() if status.storage is not None else
                  "storage unknown: never served (arena serve proves the lake keeps its data)")
    cycles = _text_table("cycle", "state", ("missing", "wrap"))
    for c in status.cycles:
        if c["state"] != "upcoming":
            why = "; ".join(f"{n} failed: {e}" for n, e in c["last_error"].items())
            cycles.add_row(str(c["at"]), str(c["state"]),
                           ", ".join(c["missing"]) + (f" ({why})" if why else ""))
    console.print(cycles)
    people = _text_table("contestant", ("cycles", "right"), "last cycle", "last status",
                         ("equity", "right"), ("positions", "wrap"))
    for c in status.contestants:
        equity = "-" if c["equity"] is None else f"${c['equity']:,.2f}"
        changed = f" ({'; '.join(c['roster'])})" if c["roster"] else ""  # added or retired
        people.add_row(f"{c['contestant']}{changed}", str(c["cycles"]), str(c["last_cycle"] or "-"),
                       str(c["last_status"] or "-"), equity, ", ".join(c["positions"]) or "-")
    console.print()
    console.print(people)
    data = _text_table("asset", "provider", "interval", "last price at", "state")
    for f in status.assets:
        data.add_row(f.symbol, f.provider, f.interval or "-",
                     "-" if f.printed_at is None else f"{f.printed_at:%Y-%m-%d %H:%M}", f.state)
    console.print()
    console.print(data)
    return EXIT_OK


def _cmd_season_backfill(args: argparse.Namespace) -> int:
    return _cmd_cycle(args, backfill=True)


def _cmd_season_retry(args: argparse.Namespace) -> int:
    return _cmd_cycle(args, retry=True)


def _cmd_monitor(args: argparse.Namespace) -> int:
    import os

    import pandas as pd

    from arena.agents.roster import RosterError
    from arena.core.sessions import CalendarError, utc
    from arena.data.lake import Lake
    from arena.ledger.store import LedgerError
    from arena.pipeline.live import MonitorRefused, run_monitor
    from arena.pipeline.season_config import SeasonConfigError, load_season, season_contestants

    lake = Lake(args.lake)
    try:
        season = load_season(lake)
        now = pd.Timestamp.now(tz="UTC")
        tick = utc(args.at) if args.at else now
        contestants, _ = season_contestants(lake, os.environ, at=tick)
        run = run_monitor(lake, season, contestants, tick, now=now)
    except (SeasonConfigError, RosterError, CalendarError, MonitorRefused) as exc:
        print(f"arena monitor: {exc} (nothing recorded)", file=sys.stderr)
        return EXIT_UNUSABLE
    except LedgerError as exc:
        print(f"arena monitor: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        _print_json({"season": season.id, "end": run.end.isoformat(), "held": run.held,
                     "contestants": run.contestants, "automatic_closes": run.automatic_closes})
    else:
        print(f"monitor of season {season.id} up to {run.end.isoformat()}: {len(run.held)} "
              f"symbol(s) held, {run.automatic_closes} automatic close(s)")
    return EXIT_OK


def _cmd_season_publish(args: argparse.Namespace) -> int:
    import duckdb

    from arena.pipeline.live import LIVE_PLAYERS, PublishError, publish_season
    from arena.pipeline.season_tables import AnalyticsError
    from arena.pipeline.warehouse import MartsError
    from arena.reporting.season import ReportError
    from arena.scoring.asset_luck import DEFAULT_PLAYERS

    lake, season = _season_of(args, "season publish")
    if season is None:
        return EXIT_UNUSABLE
    say = (lambda _m: None) if args.json else (lambda m: print(f"  {m}", flush=True))
    try:
        players = args.players or (DEFAULT_PLAYERS if args.final else LIVE_PLAYERS)
        out = publish_season(lake, season, players=players, final=args.final, progress=say)
    except PublishError as exc:
        print(f"arena season publish: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except (AnalyticsError, MartsError, ReportError, duckdb.Error, OSError) as exc:
        print(f"arena season publish: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        _print_json({"season": season.id, "report": str(out.report), "marts": str(out.marts.marts),
                     "closed": args.final, "seconds": out.seconds})
        return EXIT_OK
    print(f"season {season.id}: marts {out.marts.marts}, report {out.report}"
          + ("; the season is closed" if args.final else ""))
    return EXIT_OK


# ---------------------------------------------------------------------------------------- replay


def _console():
    """A rich Console on stdout: on a terminal its width and colours; otherwise 120 columns and
    no colour or style codes, so piped and captured output is stable. Cell text is never read
    as rich markup or emoji codes (a contestant name or an error may hold brackets or colons)."""
    from rich.console import Console

    tty = sys.stdout.isatty()
    return Console(file=sys.stdout, width=None if tty else 120,
                   color_system="auto" if tty else None, markup=False, emoji=False,
                   highlight=False)


def _text_table(*columns: str | tuple[str, str]):
    """A borderless rich Table for the terminal: a header line, then one line per row, each row
    starting at the left margin with its first cell. A column is a name, or ``(name, "right")``
    for right-justified numbers, or ``(name, "wrap")`` for long text that may wrap; no other
    column ever wraps."""
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in columns:
        name, how = (column, "") if isinstance(column, str) else column
        table.add_column(name, justify="right" if how == "right" else "left",
                         no_wrap=how != "wrap", overflow="fold")
    return table


def _print_leaderboard(board) -> None:
    shown = _text_table(("#", "right"), "contestant", ("return", "right"), ("luck pct", "right"),
                        ("rank", "right"), ("Sharpe", "right"), ("max DD", "right"),
                        ("trades", "right"), ("calls $", "right"))
    for r in board.itertuples():
        sharpe = "-" if r.sharpe != r.sharpe or r.sharpe is None else f"{r.sharpe:.2f}"
        cost = "-" if r.cost_usd is None or r.cost_usd != r.cost_usd else f"{r.cost_usd:.4f}"
        shown.add_row(str(r.place), r.contestant, f"{r.total_return:+.2%}",
                      f"{r.zero_skill_percentile:.1%}", f"{r.rank_score:.2f}", sharpe,
                      f"{r.max_drawdown:.2%}", str(r.trades), cost)
    print()
    _console().print(shown)


def _cmd_replay(args: argparse.Namespace) -> int:
    import os
    import time

    import duckdb

    from arena.agents.factory import contestants_from_roster
    from arena.agents.roster import RosterError
    from arena.core.sessions import CalendarError, utc
    from arena.core.universe import UniverseError, load_universe
    from arena.data.ingest import IngestError
    from arena.data.lake import Lake
    from arena.data.providers import make_provider
    from arena.pipeline.season import SeasonError, cycle_times, finish_season, replay_season
    from arena.pipeline.season_config import (
        REPLAY,
        SeasonConfigError,
        default_providers,
        init_season,
        make_season,
    )
    from arena.pipeline.season_tables import AnalyticsError
    from arena.pipeline.warehouse import MartsError
    from arena.reporting.season import ReportError

    name = args.command
    try:
        start = utc(args.start)
        contestants, skipped = contestants_from_roster(args.roster, os.environ)
        universe = load_universe().select(args.symbols.split(",") if args.symbols else None)
        provider = make_provider("synthetic", seed=args.seed)
    except (RosterError, CalendarError, UniverseError, ValueError) as exc:
        print(f"arena {name}: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if args.days < 1:
        print(f"arena {name}: --days must be at least 1", file=sys.stderr)
        return EXIT_UNUSABLE
    for s in skipped:
        print(f"  {s.spec.name}: {s.reason}", file=sys.stderr)
    lake = Lake(args.lake)
    try:  # the replay is a synthetic season of its own lake, resumed when run again
        init_season(lake, make_season(start.date(), args.days, universe.symbols, mode=REPLAY,
                                      providers=default_providers(), seed=args.seed),
                    roster=args.roster)
    except (SeasonConfigError, RosterError) as exc:
        print(f"arena {name}: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    began = time.perf_counter()
    say = (lambda _m: None) if args.json else (lambda m: print(f"  {m}", flush=True))

    def progress(day, done: int, total: int) -> None:
        trades = sum(o.fills for o in day.outcomes) + day.automatic_closes
        say(f"day {done:>2}/{total}  {day.at:%Y-%m-%d %H:%M}  trades {trades:>3}  "
            f"({day.seconds:.1f} s, {time.perf_counter() - began:.0f} s elapsed)")

    if not args.json:
        print(f"replaying {args.days} days from {start.date()} on the SYNTHETIC market "
              f"({len(contestants)} contestants) into {lake.root}")
    try:
        report = replay_season(provider, universe, contestants, start, args.days, lake=lake,
                               ingest=args.ingest, progress=progress, say=say)
        say(f"season played: {len(report.days)} cycles, {report.trades} trades, "
            f"{time.perf_counter() - began:.0f} s; building the luck tables, marts and report")
        done = finish_season(lake, provider.name, universe, cycle_times(start, args.days),
                             players=args.players, quiet=True, progress=say)
    except (IngestError, SeasonError, AnalyticsError, MartsError, ReportError,
            duckdb.Error, OSError) as exc:
        print(f"arena {name}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    import pandas as pd

    board = pd.read_parquet(done.marts.marts / "leaderboard.parquet").sort_values(
        ["place", "contestant"], ignore_index=True)
    if args.json:
        _print_json({"start": report.start.isoformat(), "lake": str(lake.root),
                     "report": str(done.report), "warehouse": str(done.marts.warehouse),
                     "marts": str(done.marts.marts), "seconds": done.seconds,
                     "leaderboard": board.to_dict(orient="records"),
                     "days": [{"at": d.at.isoformat(), "automatic_closes": d.automatic_closes,
                               "outcomes": [o.as_dict() for o in d.outcomes]}
                              for d in report.days]})
        return EXIT_OK
    _print_leaderboard(board)
    print(f"\nluck: {done.seconds['luck']:.1f} s, dbt: {done.marts.count('model')} models and "
          f"{done.marts.count('test') + done.marts.count('unit_test')} tests in "
          f"{done.seconds['dbt']:.1f} s; {time.perf_counter() - began:.0f} s in all")
    print(f"warehouse: {done.marts.warehouse}  (marts as Parquet: {done.marts.marts})")
    print(f"daily reports: {lake.root / 'reports' / 'daily'}")
    print(f"season report: {done.report}")
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from arena.data.lake import Lake
    from arena.reporting.season import ReportError, write_season_report

    try:
        path = write_season_report(Lake(args.lake), Path(args.out) if args.out else None)
    except ReportError as exc:
        print(f"arena report: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    print(path)
    return EXIT_OK


# ------------------------------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    from arena.core.sessions import CALENDARS, INTERVAL_ORDER
    from arena.data.providers import SOURCES

    parser = argparse.ArgumentParser(
        prog="arena", description="An LLM trading arena with a luck ceiling.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ing = sub.add_parser("ingest", help="fetch/generate bars into the lake (validated, atomic)")
    ing.add_argument("--source", choices=SOURCES,
                     help="market-data provider (default: the season's, when the lake holds one; "
                          "else synthetic, the embedded default)")
    ing.add_argument("--start", help="window start, ISO-8601 UTC (default: 200 days before --end)")
    ing.add_argument("--end", help="window end, exclusive, ISO-8601 UTC (default: now, whole hour)")
    ing.add_argument("--symbols", help="comma-separated house symbols (default: whole universe)")
    ing.add_argument("--seed", type=int, help="seed of the synthetic market")
    ing.add_argument("--drop", help="drop folder of the files source (or $ARENA_DROP_DIR)")
    ing.add_argument("--drop-interval", default="1h", choices=INTERVAL_ORDER,
                     help="finest interval the drop folder holds (default 1h)")
    ing.add_argument("--instead-of", choices=[x for x in SOURCES if x != "files"],
                     help="while a season's vendor blocks: the drop folder (--source files) "
                          "stands in for it, filling its partitions")
    ing.add_argument("--full", action="store_true",
                     help="re-fetch every stored bar to look for restatements (default: the last "
                          "two days are re-fetched)")
    ing.add_argument("--lake", help="lake root (default: $ARENA_LAKE or ./data_lake)")
    ing.add_argument("--json", action="store_true", help="print the run manifest as JSON")
    ing.set_defaults(func=_cmd_ingest)

    val = sub.add_parser("validate", help="run the candle expectations on a price file or lake partition")
    val.add_argument("path", help="CSV/Parquet price file, or a lake partition directory")
    val.add_argument("--interval", choices=INTERVAL_ORDER,
                     help="bar interval (default 1d; a partition's own)")
    val.add_argument("--calendar", choices=CALENDARS,
                     help="trading calendar (default XNYS; FX: Sunday to Friday 5 pm New York, "
                          "intraday only)")
    val.add_argument("--symbol", help="symbol to name in messages")
    val.add_argument("--as-of", help="judge staleness at this time (default: the file's last bar)")
    val.add_argument("--json", action="store_true", help="machine-readable result")
    val.set_defaults(func=_cmd_validate)

    chk = sub.add_parser("check", help="dry-run one answer against a portfolio state and prices")
    chk.add_argument("--state", required=True, help="STATE.json: cash, positions, cycle so far")
    chk.add_argument("--answer", required=True, help="the model's raw answer (JSON, maybe fenced)")
    chk.add_argument("--prices", required=True, help="PRICES.json: symbol -> cycle price")
    chk.add_argument("--at", required=True, help="cycle time, ISO-8601 UTC")
    chk.add_argument("--json", action="store_true", help="machine-readable result")
    chk.set_defaults(func=_cmd_check)

    def season_lake_args(p: argparse.ArgumentParser, func, json_help: str | None = "machine-"
                         "readable result") -> None:
        p.add_argument("--lake", help="lake root of the season (default: $ARENA_LAKE or "
                       "./data_lake)")
        if json_help is not None:
            p.add_argument("--json", action="store_true", help=json_help)
        p.set_defaults(func=func)

    ent = sub.add_parser("entrant", help="outside entrants of the season (they play through "
                         "arena mcp): add one and print its key once, list, revoke")
    ent_sub = ent.add_subparsers(dest="entrant_command", required=True, metavar="ACTION")
    eadd = ent_sub.add_parser("add", help="register an entrant; prints its key once")
    eadd.add_argument("name", help="kebab-case, unused in the season")
    season_lake_args(eadd, _cmd_entrant, json_help="print the name and key as JSON")
    elist = ent_sub.add_parser("list", help="the season's entrants (never their keys)")
    season_lake_args(elist, _cmd_entrant, json_help="print the entrants as JSON")
    erev = ent_sub.add_parser("revoke", help="revoke an entrant's key")
    erev.add_argument("name")
    season_lake_args(erev, _cmd_entrant, json_help="print the revoked entrant as JSON")

    mcp = sub.add_parser("mcp", help="serve the season to outside agents over MCP (streamable "
                         "HTTP, bearer keys from arena entrant add)")
    mcp.add_argument("--host", default="127.0.0.1", help="address to listen on (default "
                     "127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    season_lake_args(mcp, _cmd_mcp, json_help=None)

    sig = sub.add_parser("signal-server", help="serve bull/bear/risk debates to trading "
                         "terminals over a WebSocket (PRICES, DEBATE, CHAT, CLEAR, STOP)")
    sig.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1; any "
                     "other needs --token)")
    sig.add_argument("--port", type=int, default=8971, help="port (default 8971)")
    sig.add_argument("--token", help="the token terminals must send (Authorization: Bearer, or "
                     "?token=); default $ARENA_SIGNAL_TOKEN")
    sig.add_argument("--store", default="signal_store", help="where debates and outcomes are "
                     "kept (default ./signal_store)")
    sig.add_argument("--contestant", help="the roster entry whose model answers (default: the "
                     "rule-based analysts, no key needed)")
    sig.add_argument("--roster", help="roster file (default: the shipped one)")
    sig.add_argument("--daily-calls", type=int, default=2000, help="model calls a UTC day at "
                     "most (default 2000)")
    sig.set_defaults(func=_cmd_signal_server)
    sgm = sub.add_parser("signal-marts", help="build the signal server's mart: which patterns "
                         "of disagreement were followed by which returns")
    sgm.add_argument("--store", default="signal_store", help="the server's store (default "
                     "./signal_store)")
    sgm.add_argument("--lake", help="first attach outcomes from this lake's bars to the debates "
                     "on its symbols")
    sgm.set_defaults(func=_cmd_signal_marts)

    lak = sub.add_parser("lake", help="the lake's own settings: where its market data lives")
    lake_sub = lak.add_subparsers(dest="lake_command", required=True, metavar="ACTION")
    mkt = lake_sub.add_parser("market", help="show, or set, where the lake's market data (bars, "
                              "funding, earnings) lives: its own folders (the default), another "
                              "path, or an object-store URI such as s3://bucket/prefix")
    mkt.add_argument("location", nargs="?",
                     help="a path or URI (credentials and endpoint from the environment: "
                          "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL); "
                          "only while the lake holds no market data")
    mkt.add_argument("--lake", help="lake root (default: $ARENA_LAKE or ./data_lake)")
    mkt.add_argument("--json", action="store_true", help="print the lake and its market as JSON")
    mkt.set_defaults(func=_cmd_lake_market)

    srv = sub.add_parser("serve", help="serve the season's scheduled deployments (ingest hourly, "
                         "monitor every 15 minutes, cycle daily, publish nightly) until stopped")
    srv.add_argument("--list", action="store_true",
                     help="print the deployments and their schedules, serve nothing")
    srv.add_argument("--mirror", metavar="URI",
                     help="a copy of the lake (path or fsspec URI): restored into an empty lake "
                     "at start, updated after the nightly publish")
    srv.add_argument("--lake-checked", action="store_true",
                     help="the lake a start found volatile was checked and is kept: uploads to "
                     "the mirror resume")
    srv.add_argument("--alert-webhook", metavar="URL",
                     help="post an alert there when a run fails, crashes or is late, or a cycle "
                     "is overdue (default: $ARENA_ALERT_WEBHOOK; none: no alerts)")
    season_lake_args(srv, _cmd_serve, json_help="print the deployments as JSON")

    cyc = sub.add_parser("cycle", help="run the season's current decision cycle (after its "
                         "monitor window), only when it is sound")
    cyc.add_argument("--at", help="cycle time, ISO-8601 UTC (default: the season's current cycle)")
    cyc.add_argument("--force-time", action="store_true",
                     help="run at a time off the season's schedule (inside the season)")
    season_lake_args(cyc, _cmd_cycle)

    mon = sub.add_parser("monitor", help="one live monitor tick: close the positions whose "
                         "invalidation level the 15-minute bars reached since the last tick")
    mon.add_argument("--at", help="the tick, ISO-8601 UTC (default: now; floored to 15 minutes)")
    season_lake_args(mon, _cmd_monitor)

    sea = sub.add_parser("season", help="a season: init, status, backfill a missed cycle")
    season_sub = sea.add_subparsers(dest="season_command", required=True, metavar="ACTION")
    ini = season_sub.add_parser("init", help="write a new season's config into a lake")
    ini.add_argument("--start", required=True, help="first cycle day, ISO date")
    ini.add_argument("--days", type=int, default=28, help="season length in days (default 28)")
    ini.add_argument("--id", help="season id (default: <start>-<providers>)")
    ini.add_argument("--crypto", default="synthetic", choices=SOURCES,
                     help="provider of the crypto assets (default synthetic; ccxt for real)")
    ini.add_argument("--stocks", default="synthetic", choices=SOURCES,
                     help="provider of the stocks and ETFs (default synthetic; yfinance for real)")
    ini.add_argument("--symbols", help="comma-separated house symbols (default: whole universe)")
    ini.add_argument("--roster", help="roster YAML, copied into the season (default: the shipped)")
    ini.add_argument("--seed", type=int, help="seed of the synthetic market")
    ini.add_argument("--call-timeout", type=float, default=60.0,
                     help="seconds a model call may take at most (default 60)")
    ini.add_argument("--cycle-deadline", type=float, default=600.0,
                     help="seconds a cycle retries its failed contestants (default 600)")
    ini.add_argument("--dask", metavar="ADDRESS",
                     help="run the flows' contestant fan-out and luck simulations on a Dask "
                     "cluster: its scheduler (tcp://host:8786) or 'local' (default: threads)")
    season_lake_args(ini, _cmd_season_init, json_help="print the season config as JSON")
    sts = season_sub.add_parser("status", help="cycles done, missed and due; data freshness; "
                                "each contestant's state")
    season_lake_args(sts, _cmd_season_status)
    add = season_sub.add_parser("add", help="add contestants from the next cycle on (each starts "
                                "with $10,000; a name the season used cannot come back)")
    add.add_argument("roster_file", help="roster YAML holding the new contestants")
    season_lake_args(add, _cmd_season_roster)
    ret = season_sub.add_parser("retire", help="retire contestants from the next cycle on (their "
                                "books stay as they are)")
    ret.add_argument("names", nargs="+", help="the contestants' names")
    season_lake_args(ret, _cmd_season_roster)
    bkf = season_sub.add_parser("backfill", help="play a missed cycle (only while no later "
                                "cycle exists)")
    bkf.add_argument("date", help="the missed cycle's day, ISO date")
    season_lake_args(bkf, _cmd_season_backfill)
    rty = season_sub.add_parser("retry", help="play a cycle again for the contestants without a "
                                "record (their model failed), before the next cycle")
    rty.add_argument("date", help="the cycle's day, ISO date")
    season_lake_args(rty, _cmd_season_retry)
    pub = season_sub.add_parser("publish", help="rebuild the luck tables, marts and report from "
                                "the cycles so far (--final after the last cycle closes the season)")
    pub.add_argument("--players", type=int,
                     help="zero-skill players per asset (default 2,000; 20,000 for the final)")
    pub.add_argument("--final", action="store_true",
                     help="after the season's last cycle: publish and close the season")
    season_lake_args(pub, _cmd_season_publish)

    def season_args(p: argparse.ArgumentParser, start: str | None, lake: str) -> None:
        p.add_argument("--start", required=start is None, default=start,
                       help="first cycle day, ISO date" + (f" (default {start})" if start else ""))
        p.add_argument("--days", type=int, default=28, help="season length in days (default 28)")
        p.add_argument("--roster", help="roster YAML (default: models/roster.yaml)")
        p.add_argument("--symbols", help="comma-separated house symbols (default: whole universe)")
        p.add_argument("--seed", type=int, help="seed of the synthetic market")
        p.add_argument("--players", type=int, default=20_000,
                       help="zero-skill players per asset for the luck tables (default 20,000)")
        p.add_argument("--lake", default=lake, help=f"lake root of the season (default: {lake})")
        p.add_argument("--ingest", choices=("season", "daily"), default="season",
                       help="season (default): the season's market in one validated run before "
                       "the first day; daily: a run before each day, a live season's cadence "
                       "(slower, the same books)")
        p.add_argument("--json", action="store_true", help="machine-readable result")
        p.set_defaults(func=_cmd_replay)

    from arena.data.lake import default_root

    dem = sub.add_parser("demo", help="replay a season offline, build the marts and the report")
    from arena import DEMO_START

    season_args(dem, DEMO_START, str(default_root() / "demo"))
    rep = sub.add_parser("replay", help="replay a season on the synthetic market (resumable), "
                         "then build the marts and the report")
    season_args(rep, None, str(default_root()))

    rpt = sub.add_parser("report", help="write the season report from the published marts")
    rpt.add_argument("--lake", help="lake root (default: $ARENA_LAKE or ./data_lake)")
    rpt.add_argument("--out", help="HTML file to write (default: <lake>/reports/season.html)")
    rpt.set_defaults(func=_cmd_report)

    def scoring_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--prices", required=True, help="price CSV/Parquet: timestamp,open,high,low,close,volume")
        p.add_argument("--cost-rate", type=float, help="cost per unit of |Δw| (default: 0.0006 "
                       "crypto, 0.0002 stocks; a file without weekends counts as stocks)")
        p.add_argument("--json", action="store_true", help="machine-readable result (fractions)")

    sco = sub.add_parser("score", help="score a position series on a price file")
    scoring_args(sco)
    sco.add_argument("--positions", required=True, help="CSV timestamp,position (held until replaced)")
    sco.set_defaults(func=_scoring("score", _score))

    lck = sub.add_parser("luck", help="zero-skill distribution, luck ceiling, an entrant's rank")
    scoring_args(lck)
    lck.add_argument("--players", type=int, default=20_000, help="zero-skill players (default 20,000)")
    lck.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    lck.add_argument("--step", choices=("1d", "bar"), default="1d", help="decision step (default 1d)")
    lck.add_argument("--draw", choices=("uniform", "sign"), default="uniform",
                     help="position draw: uniform on [-1, 1] (default) or -1/0/+1")
    lck.add_argument("--entrant", help="positions CSV to place among the players")
    lck.set_defaults(func=_scoring("luck", _luck))

    rul = sub.add_parser("rules", help="the reference-rules table of a price file")
    scoring_args(rul)
    rul.add_argument("--start", help="score from this date on (indicators use the whole file)")
    rul.add_argument("--players", type=int, default=20_000, help="zero-skill players (default 20,000)")
    rul.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    rul.set_defaults(func=_scoring("rules", _rules))
    return parser


def _command_name(args: argparse.Namespace) -> str:
    """How messages name the command: ``arena ingest``, ``arena season backfill``."""
    action = getattr(args, f"{args.command}_command", None)
    return " ".join(["arena", args.command, *([action] if action else [])])


def _stopped(name: str, signum: int) -> str:
    """The one line an interrupted command leaves on stderr."""
    what = ("nothing half-published, staging cleaned" if name == "arena ingest" else
            "nothing half-written: a record or a publication is whole or absent")
    return f"{name}: interrupted ({signal.Signals(signum).name}); {what}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``arena`` command; its exit code. ``SIGINT``/``SIGTERM`` stop it cleanly (each
    step's cleanup runs; one line on stderr; ``128 + signum``: 130, 143), and a lake or ledger
    its disk refuses to write (full, read-only, no permission) is one line and ``1``."""
    args = build_parser().parse_args(argv)
    prepare_process()
    name = _command_name(args)
    try:
        with stop_signals():
            return int(args.func(args))
    except MarketError as exc:  # a market location that cannot be set or read
        print(f"{name}: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    except KeyboardInterrupt as exc:  # Interrupted (SIGINT, SIGTERM), or Python's own SIGINT
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        print(_stopped(name, signum), file=sys.stderr)
        return 128 + signum
    except OSError as exc:
        from arena.data.ingest import LakeWriteError
        from arena.data.lake import is_disk_error, os_error_text

        if not is_disk_error(exc):
            raise
        print(f"{name}: {exc}" if isinstance(exc, LakeWriteError) else
              f"{name}: cannot write: {os_error_text(exc)}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
