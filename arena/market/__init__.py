"""The market as a contestant sees it at a cycle: as-of reads of the lake, the screener,
indicators, the briefing and the rendered prompt."""
