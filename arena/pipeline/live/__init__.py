"""A live season, run one cycle at a time from its own config, each concern a module:

* :mod:`~arena.pipeline.live.check` - a cycle is played only when it is sound (``check_cycle``);
* :mod:`~arena.pipeline.live.cycle` - the season's cycle played as a season day
  (``play_season_cycle``);
* :mod:`~arena.pipeline.live.missed` - the cycles nobody played, and forfeiting them;
* :mod:`~arena.pipeline.live.monitor` - the monitor's ticks between the cycles (``run_monitor``);
* :mod:`~arena.pipeline.live.publish` - the season published so far (``publish_season``);
* :mod:`~arena.pipeline.live.status` - what ``arena season status`` shows;
* :mod:`~arena.pipeline.live.closed` - whether the season is closed.
"""
