"""The rules engine: decision contract, portfolio fold, validator, broker, invalidation monitor.

Pure Python over plain values: no Prefect, no I/O, time passed in. The same functions serve a
live cycle, a replayed season and ``arena check``.
"""
