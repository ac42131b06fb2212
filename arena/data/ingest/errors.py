"""What an ingest reports when it fails: its errors (each an :class:`~arena.core.errors.ArenaError`)
and an asset's outcome in the run's manifest. Below every step, so each step can raise them."""

from __future__ import annotations

from pathlib import Path

from arena.core.errors import Failed, UnusableInput
from arena.data.lake import os_error_text
from arena.data.manifest import IngestSummary

# an asset's outcome in the manifest; "held": only suspects at the newest bars (a jump whose
# reversion cannot be seen yet), so its new bars wait in quarantine and the next run judges them
# again (it fetches from the last stored bar)
PUBLISHED, QUARANTINED, FETCH_FAILED, FAILED = "published", "quarantined", "fetch_failed", "failed"
HELD = "held"


class IngestError(Failed, RuntimeError):
    """An ingest run failed for at least one asset (fetch, validation or publication); the
    manifest says which assets published and why the others did not."""

    def __init__(self, message: str, manifest: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.manifest = manifest or {}

    @property
    def published(self) -> list[str]:
        """The assets this run published despite the failure of others."""
        assets = self.manifest.get("assets") or {}
        return [s for s, a in assets.items() if a.get("status") == PUBLISHED]

    @property
    def summary(self) -> IngestSummary | None:
        """The manifest, typed (None: the run stopped before it had one)."""
        return IngestSummary.of(self.manifest) if self.manifest.get("asked") else None


class IngestRequestError(UnusableInput, ValueError):
    """An ingest that cannot be asked for: a window that is empty or in the future, a provider
    that serves none of the assets or not the interval; nothing was fetched."""


class LakeWriteError(IngestError, OSError):
    """The lake could not be written (a full or read-only disk, no permission): the run stopped
    there. Nothing more was published (an asset published before the failure stays, whole; every
    other asset keeps its last good partitions) and the run's staging folder is gone. ``manifest``
    (with the error) was written to ``manifest_path``, or could not be: ``manifest_error``.
    An :class:`IngestError` (callers that play on with the published assets still do) and an
    :class:`OSError` with the failed write's ``errno`` and ``filename``."""

    def __init__(self, cause: OSError, run_id: str, manifest: dict[str, object],
                 manifest_path: Path | None, manifest_error: str | None = None) -> None:
        OSError.__init__(self, cause.errno, cause.strerror, cause.filename)
        self.cause, self.run_id, self.manifest = cause, run_id, manifest
        self.manifest_path, self.manifest_error = manifest_path, manifest_error

    def __str__(self) -> str:
        done = f"published {', '.join(self.published)} before it" if self.published \
            else "nothing published"
        where = f"manifest {self.manifest_path}" if self.manifest_path is not None else \
            f"the manifest could not be written either: {self.manifest_error}"
        return (f"ingest {self.run_id}: the lake could not be written: "
                f"{os_error_text(self.cause)} ({done}; staging removed; {where})")
