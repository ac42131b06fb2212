"""Fixtures of the contestant tests: the scripted loopback OpenAI-compatible server."""

from tests.agents.openai_stub import openai_stub

__all__ = ["openai_stub"]
