"""Every template the arena renders ships in its package: each file of a ``templates/`` folder
under ``arena/`` matches a pattern of its package's ``package-data`` in pyproject.toml (a
template left out would be missing from an installed arena; ``tests/test_packaging.py`` builds
and installs a wheel)."""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]


def test_every_template_folder_is_package_data():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = config["tool"]["setuptools"]["package-data"]
    folders = sorted(p for p in (ROOT / "arena").rglob("templates") if p.is_dir())
    assert {f.relative_to(ROOT).as_posix() for f in folders} >= {
        "arena/reporting/templates", "arena/data/validation/templates",
        "arena/doors/web/templates"}
    for folder in folders:
        package = ".".join(folder.parent.relative_to(ROOT).parts)
        patterns = package_data.get(package, [])
        for file in sorted(p for p in folder.iterdir() if p.is_file()):
            shipped = PurePosixPath(file.relative_to(folder.parent).as_posix())
            assert any(shipped.match(pattern) for pattern in patterns), \
                f"{package}: {shipped} is in no package-data pattern ({patterns})"
