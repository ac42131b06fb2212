"""``arena cycle`` and ``arena monitor``, and the cycle table ``arena season backfill|retry``
print: the cycle job (:func:`arena.app.cycle.cycle`) and the monitor job
(:func:`arena.app.monitor.monitor`) from the command line."""

from __future__ import annotations

from arena.cli._options import Json, NoPublish, SeasonLake
from arena.cli._render import console, market_text, print_json, refused, say, text_table


def nothing_recorded():
    """A refusal of a cycle or a monitor tick recorded nothing: its message says so."""
    return refused("nothing recorded")


def cycle(*, at: str | None = None, force_time: bool = False, skip_missed: bool = False,
          no_publish: NoPublish = False, lake: SeasonLake = None, json: Json = False) -> int:
    """Run the season's current decision cycle (after its monitor window), only when it is
    sound; then publish the season's tables, marts and report.

    Exit 0 every contestant played (or the cycle was recorded already: nothing is played
    again), 1 one could not be (nothing recorded for it), 2 refused (nothing recorded): not
    due, off the schedule, a stale or unusable market, an earlier cycle missed.

    Parameters
    ----------
    at
        cycle time, ISO-8601 UTC (default: the season's current cycle)
    force_time
        run at a time off the season's schedule (inside the season)
    skip_missed
        record the contestants of the earlier missed cycles as forfeited there, then play
        (default: refuse, naming them and the command that plays them)
    """
    from arena.app.cycle import Kind, Missed

    return play_and_show(Kind.CYCLE, lake, at=at, force_time=force_time, no_publish=no_publish,
                     missed=Missed.SKIP if skip_missed else Missed.REFUSE, json=json)


def play_and_show(kind, lake: str | None, *, at: str | None, json: bool, no_publish: bool = False,
                  force_time: bool = False, missed=None) -> int:
    """Play a cycle of ``kind`` and print it (shared by ``arena cycle`` and ``arena season
    backfill|retry``)."""
    from arena.app.cycle import CycleRequest, Kind, Missed, cycle
    from arena.app.effects import Effects
    from arena.app.handle import SeasonHandle
    from arena.app.params import optional_time, parse_day, parse_time

    when = (optional_time(at, "--at") if kind is Kind.CYCLE else
            None if at is None else parse_time(parse_day(at, "DATE").isoformat(), "DATE"))
    progress = None if json else (lambda m: print(f"  {m}", flush=True))
    with nothing_recorded():
        handle = SeasonHandle.open(lake)
        result = cycle(handle, CycleRequest(kind, when, missed or Missed.REFUSE, force_time,
                                            publish=not no_publish),
                       Effects(progress=progress))
    if json:
        print_json(as_json(result))
    else:
        render(result, handle)
    pub = result.publication
    if pub is not None and pub.error is not None:  # the cycle is recorded; its marts are not
        say(name(kind), f"the cycle is recorded, but its publication failed: "
                        f"{pub.error.describe()} (arena season publish builds it again)")
    return 1 if result.failed or (pub is not None and pub.error is not None) else 0


def name(kind) -> str:
    return "arena cycle" if kind.value == "cycle" else f"arena season {kind.value}"


def as_json(result) -> dict:
    pub = result.publication
    return {"season": result.season, "kind": result.kind.value, "at": result.at.isoformat(),
            "already_recorded": result.run.already_recorded,
            "outcomes": [o.as_dict() for o in result.outcomes],
            "automatic_closes": result.run.automatic_closes, "stale": result.run.plan.stale,
            "rounds": result.run.attempts,
            "forfeits": [{"cycle_at": c.isoformat(), "contestant": n}
                         for c, n in (*result.missed_forfeits, *result.run.forfeits)],
            "backfilled": [as_json(b) for b in result.backfilled],
            "skipped": [{"contestant": s.spec.name, "reason": s.reason} for s in result.skipped],
            "published": None if pub is None else {
                "report": None if pub.report is None else str(pub.report),
                "closed": pub.closed, "not_yet": pub.not_yet,
                "error": None if pub.error is None else pub.error.describe()}}


def render(result, handle) -> None:
    what = {"cycle": "decision cycle", "backfill": "backfilled cycle",
            "retry": "retried cycle"}[result.kind.value]
    print(f"{what} {result.at.isoformat()} of season {result.season} "
          f"({market_text(handle.config)})")
    if result.run.already_recorded:
        print("  already recorded: every contestant has its record at this cycle; nothing was "
              "played again")
    for at, who in result.missed_forfeits:
        print(f"  {who}: recorded as forfeited at {at.isoformat()} (missed; skipped by "
              "--skip-missed)")
    for at, who in result.run.forfeits:
        print(f"  {who}: recorded as forfeited at {at.isoformat()} (no answer by this cycle)")
    if result.run.automatic_closes:
        print(f"  monitor: {result.run.automatic_closes} automatic close(s) since "
              f"{result.run.plan.monitor_from.isoformat()}")
    if result.run.plan.stale:
        print(f"  stale (not traded): {', '.join(result.run.plan.stale)}")
    shown = text_table("contestant", "status", "recorded", ("fills", "right"),
                       ("rejections", "right"), ("tokens", "right"), ("cost", "right"),
                       ("detail", "wrap"))
    for o in result.outcomes:
        shown.add_row(o.contestant, o.status, o.recorded, str(o.fills), str(o.rejections),
                      f"{o.tokens_in}/{o.tokens_out}",
                      "" if o.cost_usd is None else f"${o.cost_usd:.4f}",
                      f"error: {o.error}" if o.error else "")
    for s in result.skipped:  # not played, so not recorded: setting the key lets a re-run play it
        shown.add_row(s.spec.name, "skipped", "not recorded", "", "", "", "",
                      s.reason.removeprefix("skipped: "))
    console().print(shown)
    print(f"  {len(result.played)} played, {len(result.already)} already recorded, "
          f"{len(result.skipped)} skipped, {len(result.failed)} failed")
    pub = result.publication
    if pub is not None and pub.outputs is not None:
        print(f"  published: {pub.report}" + ("; the season is closed" if pub.closed else ""))
    elif pub is not None and pub.not_yet is not None:
        print(f"  not published: {pub.not_yet}")


def monitor(*, at: str | None = None, no_ingest: bool = False, lake: str | None = None,
            json: bool = False) -> int:
    """One live monitor tick: first the held symbols' 15-minute bars, then every open position
    closed whose invalidation level the bars reached since the last tick.

    Parameters
    ----------
    at
        the tick, ISO-8601 UTC (default: now; floored to 15 minutes)
    no_ingest
        do not ingest the held symbols' 15-minute bars first
    """
    from arena.app.handle import SeasonHandle
    from arena.app.monitor import monitor as tick_job
    from arena.app.params import optional_time

    when = optional_time(at, "--at")
    with nothing_recorded():
        tick = tick_job(SeasonHandle.open(lake), at=when, ingest=not no_ingest)
    for source, why in tick.ingest_problems.items():
        say("arena monitor", f"the held symbols' 15-minute bars from {source}: {why}")
    if json:
        print_json({"season": tick.season, "end": None if tick.end is None else
                    tick.end.isoformat(), "held": tick.held, "contestants": tick.contestants,
                    "automatic_closes": tick.automatic_closes})
    elif tick.end is None:
        print(f"monitor of season {tick.season}: no cycle played yet, nothing to watch")
    else:
        print(f"monitor of season {tick.season} up to {tick.end.isoformat()}: {len(tick.held)} "
              f"symbol(s) held, {tick.automatic_closes} automatic close(s)")
    return 0
