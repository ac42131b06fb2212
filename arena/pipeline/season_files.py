"""Where a season lives in its lake: the names of its folder and files, apart from the code
that reads them (:mod:`arena.pipeline.season_config`), so a command can tell a lake without a
season from one with it before importing that code; and the digest each of those files carries.

Every file of the season's folder is **sealed**: its SHA-256 is written into the file itself, so
the digest is published with the file in its one atomic replace (no manifest beside it that a
crash could leave one write behind). A JSON file (``season.json``, ``roster_changes.json``, a
blind season's ``blind.json``)
carries ``"sha256"``: the digest of its other keys as canonical JSON (sorted keys, no spaces);
the roster copy (YAML) ends with a comment line, ``# sha256 <hex> ...``, the digest of the bytes
above it. Readers ignore both. ``arena season verify`` checks them (:func:`check_sealed`); a file
written before seals existed is reported as unsealed, never as damage.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arena.core.files import write_bytes

if TYPE_CHECKING:
    from arena.data.lake import Lake

SEASON_DIR = "season"
CONFIG = "season.json"
ROSTER = "roster.yaml"
CHANGES = "roster_changes.json"
BLINDING = "blind.json"  # a blind season's secret (arena.market.blind), revealed at its end
CLOSED = "closed.json"  # the season's end, written once by its final publication
DIGEST = "sha256"  # a sealed JSON file's own digest
_SEAL = b"# sha256 "
_SEAL_TAIL = b" (the SHA-256 of the lines above: arena season verify checks it)\n"


def config_path(lake: Lake) -> Path:
    """The season's config file in ``lake`` (there or not)."""
    return lake.root / SEASON_DIR / CONFIG


def roster_path(lake: Lake) -> Path:
    """The season's roster copy in ``lake`` (there or not)."""
    return lake.root / SEASON_DIR / ROSTER


def changes_path(lake: Lake) -> Path:
    """The season's log of roster changes in ``lake`` (there or not)."""
    return lake.root / SEASON_DIR / CHANGES


def closed_path(lake: Lake) -> Path:
    """Where the season's end is written when it closes (there or not:
    :func:`arena.pipeline.live.closed.closed_at`)."""
    return lake.root / SEASON_DIR / CLOSED


def blinding_path(lake: Lake) -> Path:
    """A blind season's blinding in ``lake`` (there or not)."""
    return lake.root / SEASON_DIR / BLINDING


# ------------------------------------------------------------------------------------ seals
def _canonical(body: Mapping[str, object]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


def sealed_json(body: Mapping[str, object]) -> str:
    """``body`` as the text of a sealed JSON file (indented, its digest under ``"sha256"``)."""
    clean = {k: v for k, v in body.items() if k != DIGEST}
    return json.dumps({**clean, DIGEST: hashlib.sha256(_canonical(clean)).hexdigest()},
                      indent=2) + "\n"


def unsealed_yaml(data: bytes) -> bytes:
    """The bytes of a YAML file without its seal line (as they are when it has none)."""
    body = data if data.endswith(b"\n") or not data else data + b"\n"
    last = body.rfind(b"\n", 0, len(body) - 1) + 1
    return body[:last] if body[last:].startswith(_SEAL) else data


def sealed_yaml(data: bytes) -> bytes:
    """A YAML file's bytes sealed: any earlier seal line replaced by the digest of the rest."""
    body = unsealed_yaml(data)
    if body and not body.endswith(b"\n"):
        body += b"\n"
    return body + _SEAL + hashlib.sha256(body).hexdigest().encode() + _SEAL_TAIL


def write_sealed(path: Path, data: bytes) -> Path:
    """Write ``data`` (already sealed) atomically: a temp file of its own, fsynced, one rename."""
    return write_bytes(path, data, fsync=True)


@dataclass(frozen=True)
class Seal:
    """What :func:`check_sealed` found of one file: ``problem`` (damage, one line naming the
    file) or none; ``sealed``: False for a file written before seals (not damage)."""

    path: Path
    problem: str | None = None
    sealed: bool = True


def check_sealed(path: Path) -> Seal:
    """Whether the season file ``path`` (JSON or YAML, by its suffix) still holds its digest."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Seal(path, f"{path} is missing")
    except OSError as exc:
        return Seal(path, f"{path} cannot be read: {exc.strerror or exc}")
    if path.suffix == ".json":
        return _check_json(path, data)
    body = unsealed_yaml(data)
    if body is data:
        return Seal(path, sealed=False)
    line = data[len(body):]
    recorded = line[len(_SEAL):len(_SEAL) + 64].decode("ascii", "replace")
    actual = hashlib.sha256(body).hexdigest()
    if recorded != actual:
        return Seal(path, f"{path} has changed since it was written (its SHA-256 is "
                          f"{actual[:12]}..., its seal says {recorded[:12]}...)")
    return Seal(path)


def _check_json(path: Path, data: bytes) -> Seal:
    try:
        raw = json.loads(data)
    except ValueError as exc:
        return Seal(path, f"{path} is not JSON any more ({exc})")
    if not isinstance(raw, dict):
        return Seal(path, f"{path} is not a JSON object any more")
    if DIGEST not in raw:
        return Seal(path, sealed=False)
    recorded = str(raw.pop(DIGEST))
    actual = hashlib.sha256(_canonical(raw)).hexdigest()
    if recorded != actual:
        return Seal(path, f"{path} has changed since it was written (the SHA-256 of its "
                          f"contents is {actual[:12]}..., its seal says {recorded[:12]}...)")
    return Seal(path)


def season_file_problem(path: Path) -> str | None:
    """Why the season file ``path`` is damage (None: it is not): it does not hold its seal, or
    it holds none while the season's config does (every file of a sealed season is sealed when
    it is written; a season written before seals has none)."""
    seal = check_sealed(path)
    if seal.problem is not None or seal.sealed or path.name == CONFIG:
        return seal.problem
    config = check_sealed(path.parent / CONFIG)
    if config.sealed and config.problem is None:
        return (f"{path} carries no digest, though the season's config does (every file of the "
                "season is sealed when it is written)")
    return None


__all__: Sequence[str] = (
    "BLINDING",
    "CHANGES",
    "CLOSED",
    "CONFIG",
    "ROSTER",
    "SEASON_DIR",
    "Seal",
    "blinding_path",
    "changes_path",
    "check_sealed",
    "closed_path",
    "config_path",
    "roster_path",
    "sealed_json",
    "sealed_yaml",
    "season_file_problem",
    "unsealed_yaml",
    "write_sealed",
)
