"""Scoring: leaderboard metrics computed from equity series, fills and benchmark prices."""
