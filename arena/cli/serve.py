"""``arena serve``: the serve job (:mod:`arena.app.serve`) on Prefect, from the command line."""

from __future__ import annotations

from arena.cli._render import console, print_json, say, text_table

NAME = "arena serve"


def serve(*, list: bool = False, mirror: str | None = None, lake_checked: bool = False,
          alert_webhook: str | None = None, lake: str | None = None, json: bool = False) -> int:
    """Serve the season's scheduled deployments (ingest hourly, monitor every 15 minutes,
    cycle daily, publish nightly) until SIGINT or SIGTERM, which pause their schedules.

    Refused (exit 2, nothing registered) for a replayed or a closed season and while another
    arena serve runs on the lake.

    Parameters
    ----------
    list
        print the deployments and their schedules, serve nothing
    mirror
        a copy of the lake (path or fsspec URI): restored into an empty lake at start, updated
        after the nightly publish
    lake_checked
        the lake a start found volatile was checked and is kept: uploads to the mirror resume
    alert_webhook
        post an alert there when a run fails, crashes or is late, or a cycle is overdue
        (default: $ARENA_ALERT_WEBHOOK; none: no alerts)
    lake
        lake root of the season (default: $ARENA_LAKE or ./data_lake)
    json
        print the deployments as JSON
    """
    from arena.app.serve import prepare
    from arena.app.serve import serve as run
    from arena.data.lake import Lake
    from arena.flows.alerts import alert_webhook as webhook_of

    webhook = webhook_of(alert_webhook)
    if list:
        _show(prepare(Lake(lake), mirror=mirror, checked=lake_checked, listing=True), json)
        return 0
    if webhook is None:
        say(NAME, "no alerts (set --alert-webhook or $ARENA_ALERT_WEBHOOK to be told of a "
                  "failed, late or overdue run)")
    from arena.flows.deployments import PrefectServer

    run(Lake(lake), PrefectServer(), mirror=mirror, checked=lake_checked, webhook=webhook,
        ready=lambda serving: _ready(serving, json, mirror))
    return 0


def _show(serving, json: bool) -> None:
    if json:
        print_json([j.as_dict() for j in serving.jobs])
        return
    out = console()
    out.print(f"season {serving.season.id}: {len(serving.jobs)} deployments (cron in UTC)")
    table = text_table("deployment", "schedule", ("flow", "wrap"))
    for j in serving.jobs:
        table.add_row(j.name, j.cron, j.flow)
    out.print(table)


def _ready(serving, json: bool, mirror: str | None) -> None:
    """What the start found (first call: restored, checked, the deployments), then what it did
    (second call: alerts, the storage verdict)."""
    if serving.boot is None and serving.storage_error is None:
        if serving.restored:
            say(NAME, f"restored {', '.join(serving.restored)} from {mirror}")
        if serving.checked:
            say(NAME, "the lake was checked: uploads to the mirror resume")
        _show(serving, json)
        return
    if serving.alerts:
        say(NAME, f"alerts {', '.join(serving.alerts)} post to the webhook")
    if serving.boot is not None:
        say(NAME, serving.boot.describe())
    if serving.storage_error is not None:
        say(NAME, f"{serving.storage_error}; the mirror is not updated until the lake is "
                  "restored from it or checked (--lake-checked): README, runbook")
    say(NAME, "serving until SIGINT or SIGTERM, which pause the deployments' schedules")
