"""The core every stage builds on: time and trading sessions, the universe, shared types,
indicators and storable text. Imports nothing else of the arena."""
