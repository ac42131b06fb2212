"""Reading back what flow runs published as artifacts and logs (from the test Prefect server)."""

from __future__ import annotations


def run_artifacts(flow_run_id=None, key: str | None = None) -> list:
    """The artifacts of one flow run and/or with one key, newest first. A table artifact's
    ``data`` is its rows as JSON text, a markdown artifact's is the markdown."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        ArtifactFilterKey,
    )
    from prefect.client.schemas.sorting import ArtifactSort

    wanted = ArtifactFilter(
        flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]) if flow_run_id else None,
        key=ArtifactFilterKey(any_=[key]) if key else None)
    with get_client(sync_client=True) as client:
        return client.read_artifacts(artifact_filter=wanted, sort=ArtifactSort.CREATED_DESC)


def run_logs(flow_run_id) -> list:
    """Every log line the server keeps of one flow run (its tasks' included), oldest first: the
    messages as the UI shows them, each with its ``task_run_id`` (None: the flow run's own)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.client.schemas.sorting import LogSort

    wanted = LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id]))
    logs: list = []
    with get_client(sync_client=True) as client:
        while batch := client.read_logs(log_filter=wanted, limit=200, offset=len(logs),
                                        sort=LogSort.TIMESTAMP_ASC):
            logs += batch
    return logs
