"""Doors for outside software: the MCP server for agents."""
