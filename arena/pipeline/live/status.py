"""What ``arena season status`` shows: every cycle's state, each asset's freshness and each
contestant's book, with the percentiles of the last publication."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field

import pandas as pd

from arena.data.lake import Lake
from arena.data.persistence import Boot, last_boot
from arena.ledger.attempts import Attempts
from arena.ledger.store import Ledger
from arena.pipeline.live.check import (
    Freshness,
    freshness,
)
from arena.pipeline.live.closed import closed_at
from arena.pipeline.live.missed import missed_cycles
from arena.pipeline.season_config import (
    SeasonConfig,
    active,
    roster_changes,
)
from arena.reporting.roles import CONTESTANT, RULER

DONE, PARTIAL, FAILED_RETRY, DUE, MISSED, UPCOMING = (
    "done", "partial", "failed (retry allowed)", "due", "missed", "upcoming")
# a missed cycle that can still be played: the oldest now, a later one once those before it are
# (arena season backfill plays the oldest first)
MISSED_BACKFILL, MISSED_BACKFILL_AFTER = "missed (backfill allowed)", "missed (backfill after "\
    "the earlier ones)"
CYCLE_STATES = (DONE, PARTIAL, FAILED_RETRY, DUE, MISSED, MISSED_BACKFILL, MISSED_BACKFILL_AFTER,
                UPCOMING)


@dataclass(frozen=True)
class CycleState:
    """One cycle of the season as the status sees it: its state (one of :data:`CYCLE_STATES`),
    who is recorded, who is missing, who failed there and each one's last error."""

    at: pd.Timestamp
    state: str
    recorded: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    last_error: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"at": self.at.isoformat(), "state": self.state, "recorded": list(self.recorded),
                "missing": list(self.missing), "failed": list(self.failed),
                "last_error": dict(self.last_error)}


@dataclass(frozen=True)
class ContestantState:
    """One contestant of the season: its cycles, its last one and how it ended, its equity and
    positions now, the roster changes made to it, and its role (a contestant, or a house rule
    playing as a ruler: :mod:`arena.reporting.roles`)."""

    contestant: str
    cycles: int
    last_cycle: pd.Timestamp | None
    last_status: str | None
    equity: float | None
    positions: tuple[str, ...]
    roster: tuple[str, ...]
    role: str = CONTESTANT
    luck_percentile: float | None = None  # as of the last publication (None: not published)
    skill_percentile: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"contestant": self.contestant, "role": self.role, "cycles": self.cycles,
                "last_cycle": None if self.last_cycle is None else self.last_cycle.isoformat(),
                "last_status": self.last_status, "equity": self.equity,
                "positions": list(self.positions), "roster": list(self.roster),
                "luck_percentile": self.luck_percentile,
                "skill_percentile": self.skill_percentile}


@dataclass
class SeasonStatus:
    season: SeasonConfig
    now: pd.Timestamp
    cycles: list[CycleState]
    assets: list[Freshness]
    contestants: list[ContestantState]
    closed: str | None = None
    storage: Boot | None = None  # the last start's persistence verdict (arena serve)
    published_cycles: int = 0  # the cycles the percentiles were published after (0: none)

    def count(self, state: str) -> int:
        return sum(1 for c in self.cycles if c.state == state)

    @property
    def leader(self) -> ContestantState | None:
        """The contestant with the highest equity now (of several, the first by name); None
        before any has an equity, and in a season of house rules only: a ruler never leads."""
        valued = [c for c in self.contestants if c.role == CONTESTANT and c.equity is not None]
        return min(valued, key=lambda c: (-c.equity, c.contestant), default=None)  # type: ignore[operator]

    def to_json(self) -> dict[str, object]:
        leader = self.leader
        return {"season": self.season.to_json(), "now": self.now.isoformat(),
                "closed_at": self.closed,
                "leader": None if leader is None else leader.contestant,
                "cycles": [c.to_json() for c in self.cycles],
                "assets": [{"symbol": f.symbol, "provider": f.provider, "interval": f.interval,
                            "last_price_at": None if f.printed_at is None
                            else f.printed_at.isoformat(), "state": f.state}
                           for f in self.assets],
                "contestants": [c.to_json() for c in self.contestants],
                "percentiles_after_cycles": self.published_cycles,
                "storage": None if self.storage is None else asdict(self.storage)}


def season_status(lake: Lake, season: SeasonConfig, roster: Sequence[str], now: pd.Timestamp,
                  *, ledger: Ledger | None = None, attempts: Attempts | None = None,
                  rulers: Collection[str] = ()) -> SeasonStatus:
    """Every cycle of the season (done, partial, missed, due, upcoming), each asset's data
    freshness at ``now`` and each contestant's state: the contestants first, then ``rulers``
    (the house rules of the roster), each band in the roster's order."""
    ledger = ledger or Ledger(lake)
    attempts = attempts or Attempts(lake)
    by_cycle: dict[pd.Timestamp, set[str]] = {}
    for key in ledger.records():
        by_cycle.setdefault(key.cycle_at, set()).add(key.contestant)
    names = list(dict.fromkeys([*roster, *sorted({c for s in by_cycle.values() for c in s})]))
    due = season.due(now)
    last_done = max(by_cycle, default=None)
    tried = {t: attempts.of(t) for t in attempts.cycles()}
    playable = set(missed_cycles(season, ledger, attempts, now))
    cycles = []
    changes = roster_changes(lake)
    for t in season.times:
        got = by_cycle.get(t, set())
        expected = [n for n in roster if active(changes, n, t)]  # added or retired meanwhile
        failed = sorted(n for n in tried.get(t, {}) if n not in got)
        if failed and (last_done is None or t >= last_done):
            state = FAILED_RETRY
        elif got and got >= set(expected):
            state = DONE
        elif got:
            state = PARTIAL
        elif t > now:
            state = UPCOMING
        elif t == due:
            state = DUE
        else:
            state = (MISSED if t not in playable else
                     MISSED_BACKFILL if t == min(playable) else MISSED_BACKFILL_AFTER)
        cycles.append(CycleState(t, state, tuple(sorted(got)),
                                 tuple(n for n in expected if n not in got), tuple(failed),
                                 {n: tried[t][n][-1].error for n in failed}))
    universe = season.universe()
    contestants = []
    for name in names:
        keys = ledger.records(name)
        last = keys[-1].cycle_at if keys else None
        status = ledger.record_rows("outcome", last, name)[0]["status"] if last is not None \
            else None
        equity = ledger.equity_before(name, now + pd.Timedelta(days=1))
        positions = ledger.portfolio(name).positions
        contestants.append(ContestantState(
            name, len(keys), last, None if status is None else str(status),
            None if equity is None else equity.get("equity"), tuple(sorted(positions)),
            tuple(f"{c.change} from {c.from_cycle}" for c in changes if c.contestant == name),
            RULER if name in rulers else CONTESTANT))
    contestants.sort(key=lambda c: c.role != CONTESTANT)  # stable: each band in roster order
    published, after = published_percentiles(lake)
    contestants = [dataclasses.replace(c, luck_percentile=published.get(c.contestant, (None,))[0],
                                       skill_percentile=published.get(c.contestant,
                                                                      (None, None))[1])
                   for c in contestants]
    return SeasonStatus(season, now, cycles, freshness(lake, season, universe, now), contestants,
                        closed_at(lake), last_boot(lake), after)


def published_percentiles(lake: Lake) -> tuple[dict[str, tuple[float | None, float | None]], int]:
    """Each contestant's luck and skill percentiles as the season's last publication holds them
    (``<lake>/marts/leaderboard.parquet``; a skill percentile is None where it has none - no
    position -, or the publication came before it), and the cycles that publication covers
    (0, and no percentile, before the first publication)."""
    path = lake.root / "marts" / "leaderboard.parquet"
    if not path.is_file():
        return {}, 0
    board = pd.read_parquet(path)
    skill = board["skill_percentile"] if "skill_percentile" in board else [None] * len(board)
    out = {}
    for name, luck, mine in zip(board["contestant"], board["zero_skill_percentile"], skill,
                                strict=True):
        out[str(name)] = (None if pd.isna(luck) else float(luck),
                          None if mine is None or pd.isna(mine) else float(mine))
    return out, int(board["cycles"].max()) if len(board) else 0
