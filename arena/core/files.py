"""Writing a file atomically: a temp file of its own beside it, then one rename, so a reader
sees the old file or the new one whole, and two writers of one file never rename each other's
half-written temp."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_bytes(path: Path, data: bytes, *, fsync: bool = False) -> Path:
    """Write ``data`` to ``path`` atomically (``fsync``: flushed to the disk before the rename,
    for a file a crash must not leave empty); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def write_text(path: Path, text: str) -> Path:
    """Write a text file (UTF-8) atomically; returns ``path``."""
    return write_bytes(path, text.encode("utf-8"))
