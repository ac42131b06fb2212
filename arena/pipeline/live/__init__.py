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

from arena.pipeline.live.check import (
    CycleOffSeason,
    CyclePlan,
    CycleRefused,
    Freshness,
    check_cycle,
    current_cycle,
    freshness,
)
from arena.pipeline.live.closed import CLOSED, OffSeason, closed_at
from arena.pipeline.live.cycle import CycleRun, play_season_cycle, season_rules
from arena.pipeline.live.missed import forfeit_missed, missed_cycles
from arena.pipeline.live.monitor import (
    MONITOR_STEP,
    MonitorOffSeason,
    MonitorRefused,
    MonitorRun,
    monitor_end,
    run_monitor,
)
from arena.pipeline.live.publish import LIVE_PLAYERS, PublishError, publish_season
from arena.pipeline.live.status import (
    CYCLE_STATES,
    UPCOMING,
    ContestantState,
    CycleState,
    SeasonStatus,
    published_percentiles,
    season_status,
)

__all__ = ["CLOSED", "CYCLE_STATES", "LIVE_PLAYERS", "MONITOR_STEP", "UPCOMING", "ContestantState",
           "CycleOffSeason", "CyclePlan", "CycleRefused", "CycleRun", "CycleState", "Freshness",
           "MonitorOffSeason", "MonitorRefused", "MonitorRun", "OffSeason", "PublishError",
           "SeasonStatus", "check_cycle", "closed_at", "current_cycle", "forfeit_missed",
           "freshness", "missed_cycles", "monitor_end", "play_season_cycle",
           "publish_season", "published_percentiles", "run_monitor", "season_rules",
           "season_status"]
