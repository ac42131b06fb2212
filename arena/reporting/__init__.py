"""Reports: the daily report of a cycle and the season report (HTML, charts)."""
