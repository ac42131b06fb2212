"""Alerts: Prefect automations that post to the operator's webhook when a run of the season
fails, crashes or is late, and when a cycle is not finished by its deadline.

:func:`install_alerts` (called by ``arena serve`` when ``--alert-webhook`` or
``$ARENA_ALERT_WEBHOOK`` names a URL) saves a custom webhook notification block and two
automations on the Prefect server, both scoped to the runs tagged ``season:<id>`` (every run of
the season's deployments is), named after the season (its id as a slug):

* ``arena-<season>-run-failed``: a run that ends Failed, Crashed or TimedOut, or is marked Late
  (due and not started: nothing is serving the deployment).
* ``arena-<season>-cycle-overdue``: a cycle run Running and not finished within the season's
  cycle deadline plus :data:`PUBLISH_MARGIN_S` (the publication after the cycle).

The webhook receives a JSON body ``{"subject": ..., "text": ...}``; the text names the flow (the
job), the season, the run (its name says the season and the cycle, ``s1 2026-10-01``, or the
scheduled time, ``s1 2026-10-01 16:33``), the state and the reason (the state's message).
Installing again replaces both automations.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from uuid import UUID

from arena.core.environment import setting
from arena.core.errors import BadArgument

PUBLISH_MARGIN_S = 900.0
ALERT_STATES = ("Failed", "Crashed", "TimedOut", "Late")


@dataclass(frozen=True)
class Alerts:
    block: str
    automations: dict[str, UUID]


def alert_webhook(explicit: str | None = None) -> str | None:
    """The webhook URL: the explicit one, else ``$ARENA_ALERT_WEBHOOK``, else None (no alerts)."""
    url = explicit or setting("alert_webhook")
    if url is not None and not url.startswith(("http://", "https://")):
        raise BadArgument(f"--alert-webhook must be an http(s) URL, not {url!r}")
    return url


def _body(season_id: str, what: str) -> str:
    return ("{{ flow.name }} run '{{ flow_run.name }}' of season " + season_id + " " + what +
            ": {{ flow_run.state.name }}: {{ flow_run.state.message or 'no message' }}"
            " (scheduled {{ flow_run.expected_start_time }}, parameters"
            " {{ flow_run.parameters }})")


def install_alerts(season_id: str, url: str, *, cycle_deadline_s: float,
                   margin_s: float = PUBLISH_MARGIN_S) -> Alerts:
    """Save the season's webhook block and (re)create its two automations; returns their ids.
    A cycle is overdue ``cycle_deadline_s + margin_s`` seconds after it started running."""
    from prefect.automations import Automation
    from prefect.blocks.notifications import CustomWebhookNotificationBlock
    from prefect.client.orchestration import get_client
    from prefect.events.actions import SendNotification
    from prefect.events.schemas.automations import EventTrigger, Posture

    from arena.flows.tasks import slug

    overdue, name = cycle_deadline_s + margin_s, slug(season_id)
    block_name = f"arena-{name}-alerts"
    block = CustomWebhookNotificationBlock(
        name=block_name, url=url, method="POST",
        json_data={"subject": "{{subject}}", "text": "{{body}}"},
        allow_private_urls=True)  # the operator's own receiver may sit on the local network
    block_id = block.save(block_name, overwrite=True)
    season_runs = {"prefect.resource.role": "tag",
                   "prefect.resource.id": f"prefect.tag.season:{season_id}"}
    wanted = {
        f"arena-{name}-run-failed": Automation(
            name=f"arena-{name}-run-failed",
            description=f"a run of season {season_id} failed, crashed, timed out or is late",
            trigger=EventTrigger(
                expect={f"prefect.flow-run.{s}" for s in ALERT_STATES},
                match={"prefect.resource.id": "prefect.flow-run.*"},
                match_related=season_runs, posture=Posture.Reactive, threshold=1,
                within=dt.timedelta(0)),
            actions=[SendNotification(
                block_document_id=block_id,
                subject=f"arena {season_id}: {{{{ flow.name }}}} {{{{ flow_run.state.name }}}}",
                body=_body(season_id, "did not succeed"))]),
        f"arena-{name}-cycle-overdue": Automation(
            name=f"arena-{name}-cycle-overdue",
            description=f"a cycle of season {season_id} not finished by its deadline",
            trigger=EventTrigger(
                after={"prefect.flow-run.Running"},
                expect={f"prefect.flow-run.{s}" for s in (
                    "Completed", "Failed", "Crashed", "Cancelled", "TimedOut")},
                for_each={"prefect.resource.id"},
                match={"prefect.resource.id": "prefect.flow-run.*"},
                match_related=[season_runs, {"prefect.resource.role": "flow",
                                             "prefect.resource.name": "cycle"}],
                posture=Posture.Proactive, threshold=1,
                within=dt.timedelta(seconds=overdue)),
            actions=[SendNotification(
                block_document_id=block_id,
                subject=f"arena {season_id}: cycle overdue",
                body=_body(season_id, f"not finished within {overdue:.0f} s of starting (the "
                           "cycle's deadline and its publication)"))]),
    }
    ids: dict[str, UUID] = {}
    with get_client(sync_client=True) as client:
        for title, automation in wanted.items():
            for old in client.read_automations_by_name(title):
                client.delete_automation(old.id)
            ids[title] = automation.create().id
    return Alerts(block_name, ids)
