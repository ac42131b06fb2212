"""A flow for the work-pool test: each run waits at a barrier (files in a shared folder) until
``parties`` runs are in it at once, so the runs can only all finish if that many workers run
them side by side."""

from __future__ import annotations

import os
import time
from pathlib import Path

from prefect import flow


@flow(name="pool-barrier")
def barrier_flow(folder: str, parties: int = 2, timeout: float = 90.0) -> int:
    """Arrive at the barrier in ``folder``; wait for ``parties`` arrivals; returns this pid."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{os.getpid()}").write_text("here")
    deadline = time.monotonic() + timeout
    while len(list(root.iterdir())) < parties:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(list(root.iterdir()))} of {parties} runs arrived")
        time.sleep(0.2)
    return os.getpid()
