"""Contestant kinds behind one interface: a briefing in, a raw text answer and call records out.

Parsing, validation, execution and the repair round are the engine's job (``arena.pipeline.turn``),
identical for every kind, house agents included.
"""
