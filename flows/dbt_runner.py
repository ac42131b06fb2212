"""prefect-dbt's runner as the flows use it: every dbt node a task, its log lines plain and named.

prefect-dbt (0.7) makes a task of every dbt node, but its log lines came to the UI as dbt
writes them for a terminal - coloured (``[\\x1b[32mOK\\x1b[0m in 0.19s]``) - and under a task
run with no name ("Task run None"): its record of the build's tasks never learns their names.
:class:`NamedNodeRunner` runs dbt without colours (``--no-use-colors``) and gives that record
the node's task name (``model leaderboard``) as each task starts; a node without a task of its
own (an exposure's ``NO-OP`` line) logs as the flow run. Both lean on parts of prefect-dbt 0.7
it does not export (its tracker, and the method that hands a build its tracker):
``tests/flows/test_season_flow.py`` reads the lines back and fails if an upgrade moves them.
Imported only by :func:`arena.flows.tasks.prefect_dbt_invoke`: dbt is slow to import.
"""

from __future__ import annotations

from typing import Any

from prefect.logging.loggers import PrefectLogAdapter, get_logger
from prefect.tasks import Task
from prefect_dbt import PrefectDbtRunner
from prefect_dbt.core._tracker import NodeTaskTracker

NO_COLOURS = "--no-use-colors"


class NamedNodes(NodeTaskTracker):
    """prefect-dbt's record of a build's node tasks, naming each node's task on its log lines."""

    def start_task(self, node_id: str, task: Task[Any, Any]) -> None:
        super().start_task(node_id, task)
        if isinstance(task.task_run_name, str):  # "model leaderboard", as prefect-dbt names it
            self.set_task_run_name(node_id, task.task_run_name)

    def get_task_logger(self, node_id: str, flow_run: dict[str, Any] | None = None,
                        flow: Any = None, **kwargs: Any) -> PrefectLogAdapter:
        """The node's task's logger; a node without a task logs as the flow run."""
        if self.get_task_run_id(node_id) is not None:
            return super().get_task_logger(node_id, flow_run, flow, **kwargs)
        return PrefectLogAdapter(get_logger("prefect.flow_runs"), extra={
            "flow_run_id": str(flow_run.get("id")) if flow_run else "<unknown>",
            "flow_run_name": flow_run.get("name") if flow_run else "<unknown>",
            "flow_name": flow.name if flow is not None else "<unknown>", **kwargs})


class NamedNodeRunner(PrefectDbtRunner):
    """prefect-dbt's runner with plain, named log lines (see the module docstring)."""

    def _create_unified_callback(self, task_state: NodeTaskTracker, *args: Any,
                                 **kwargs: Any) -> Any:
        # the one place prefect-dbt hands its (fresh, empty) record of the build's tasks to
        return super()._create_unified_callback(NamedNodes(), *args, **kwargs)

    def invoke(self, args: list[str], **kwargs: Any) -> Any:
        return super().invoke([*args, *([] if NO_COLOURS in args else [NO_COLOURS])], **kwargs)
