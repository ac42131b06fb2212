"""The ledger's errors (:mod:`arena.ledger.store`, :mod:`arena.ledger.chain`)."""

from __future__ import annotations

from arena.core.errors import Failed


class LedgerError(Failed, RuntimeError):
    """A record that cannot be written (inconsistent, overlapping, a history that is broken)."""
