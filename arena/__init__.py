"""An LLM trading arena with a luck ceiling."""

DEMO_START = "2026-10-01"  # the demo's fixed season: the same leaderboard on every machine
