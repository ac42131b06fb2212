"""The files the arena ships with: the default roster and prompt templates (``models/``), the dbt
project (``dbt_project/``, whose seed is the universe). Read through :mod:`importlib.resources`,
so an installed arena (``pip install .``) finds them from any directory, exactly as a checkout
does. Each is a real directory on disk: dbt needs one.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def package_dir(package: str) -> Path:
    """The directory of a data package shipped with the arena (e.g. ``arena.models``)."""
    path = Path(str(files(package)))
    if not path.is_dir():  # e.g. inside a zip archive: dbt and the prompts need real files
        raise RuntimeError(f"{package} is not a directory on disk ({path}); install the arena "
                           "from a wheel or a checkout, not a zip archive")
    return path


MODELS = package_dir("arena.models")  # the default roster and the prompt templates
DBT_PROJECT = package_dir("arena.dbt_project")
