"""Process-wide settings, applied once at the process edge (the ``arena`` command, a flow's
entry, a test session), never inside a call.

Most libraries take their settings as arguments and get them that way. litellm is the exception:
it reads ``LITELLM_LOCAL_MODEL_COST_MAP`` and ``LITELLM_OFFLINE_MODE`` from the environment when it
is imported (without them, the import fetches a price map from the internet), so
:func:`prepare_process` sets them before anything can import it. A value the operator already set
is kept.
"""

from __future__ import annotations

import os

IMPORT_TIME_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}


def prepare_process() -> None:
    """Set the environment that libraries read only at import (see the module docstring)."""
    for name, value in IMPORT_TIME_ENV.items():
        os.environ.setdefault(name, value)


def process_prepared() -> bool:
    """Whether :func:`prepare_process` (or the operator) has set every import-time setting."""
    return all(name in os.environ for name in IMPORT_TIME_ENV)
