"""What a job does beyond reading and writing its lake, given once: :class:`Effects`.

A job's inputs say *what* to do (a season handle, a cycle's time, a provider's options); its
effects say *how* it touches the world: what time it is, how its steps run, what hears of its
progress, what it holds while it records, how a model provider's calls queue, how dbt runs and
how it waits. The command line runs a job with :data:`INLINE` (the wall clock, a thread pool,
dbt in the process); a Prefect flow passes its own (``arena.flows.tasks.flow_effects``: steps as
tasks, the run's logger, the season's ledger slot, a global limit per model provider, dbt's
events on the run's log); a test fixes the clock and counts the sleeps. Every job takes one, so
a new effect is added here, not to every signature.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from arena.app.handle import Clock, wall_clock
from arena.core.runner import INLINE as INLINE_RUNNER
from arena.core.runner import Runner

if TYPE_CHECKING:  # types only: a job that neither plays nor builds loads neither module
    from arena.pipeline.cycle import Slot
    from arena.pipeline.warehouse import Invoke

Progress = Callable[[str], None]
Hold = Callable[[], AbstractContextManager[object]]


@dataclass(frozen=True)
class Effects:
    """How a job touches the world (see the module docstring); each field has the command
    line's default."""

    clock: Clock = wall_clock  # the time now, a UTC timestamp
    runner: Runner = INLINE_RUNNER  # how the job's steps run: in the process, or as tasks
    progress: Progress | None = None  # hears a line of what long work is doing
    hold: Hold = nullcontext  # held while the job records (a flow's one-slot ledger limit)
    slot: Slot | None = None  # held by a contestant while it calls its model (None: per provider)
    invoke: Invoke | None = None  # how dbt runs (None: dbt's own runner in the process)
    monotonic: Callable[[], float] = time.monotonic  # the seconds a deadline is counted in
    sleep: Callable[[float], None] = time.sleep  # how a retry waits

    def at(self, clock: Clock) -> Effects:
        """The same effects on another clock (a rehearsal's, a test's)."""
        return replace(self, clock=clock)


INLINE = Effects()
