"""The season as a first-class object: what a lake's season is, written once into the lake.

``arena season init`` writes ``<lake>/season/season.json`` and a copy of the roster
(``<lake>/season/roster.yaml``): the season's id, first cycle day and length, universe, the
provider of each asset class (crypto from ``ccxt`` and stocks from ``yfinance``, or all
``synthetic``), the cycle hour, the fee rate and whether it is a live season or a replay. Every
command of the season reads it, so no flag can disagree with it (a cycle on the wrong provider,
a lake that belongs to another season). A lake holds one season; the next one starts in a new
lake (``arena season init --lake ...``), or in a league's next lake, where the last one ended
(``arena season init --league DIR``: :mod:`arena.pipeline.league`; the season records the one
it follows, ``follows``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from arena.agents.factory import build_contestant
from arena.agents.roster import DEFAULT_ROSTER, ContestantSpec, Roster, Skipped, load_roster
from arena.core.errors import UnusableInput, validation_refusal
from arena.core.sessions import CYCLE_HOUR, daily_cycles
from arena.core.universe import ASSET_CLASSES, Universe, load_universe
from arena.data.lake import Lake
from arena.data.providers import SOURCES, SYNTHETIC
from arena.engine.rules import ARENA_RULES
from arena.market.blind import Blinding
from arena.market.sections import CANDLE_LAYOUTS, CLOSE, DEFAULT_LAYOUT
from arena.pipeline.contest import Contest
from arena.pipeline.season_files import SEASON_DIR as SEASON_DIR  # re-exported
from arena.pipeline.season_files import (
    blinding_path,
    changes_path,
    config_path,
    roster_path,
    sealed_json,
    sealed_yaml,
    season_file_problem,
    write_sealed,
)

LIVE, REPLAY = "live", "replay"
LOCAL_DASK = "local"  # a Dask cluster of this machine's cores, started for each fan-out
FORMAT = 1

if TYPE_CHECKING:
    from arena.agents.base import Contestant


class SeasonConfigError(UnusableInput, ValueError):
    """No season in the lake, another season in it, or a season config that cannot be used."""


class DamagedSeasonFile(SeasonConfigError):
    """A season file (``season.json``, the roster copy, its change log) that no longer holds the
    digest it was sealed with: damage, so exit 1 as a damaged ledger record, not a usage error."""

    exit_code = 1


def check_season_file(path: Path) -> None:
    """:class:`DamagedSeasonFile` when the season file ``path`` (there) does not hold its seal
    (:func:`arena.pipeline.season_files.season_file_problem`: read and hashed, a few kB); a
    season written before seals is read as it is."""
    problem = season_file_problem(path)
    if problem is not None:
        raise DamagedSeasonFile(f"{problem}: nothing is played from it; restore it from a mirror "
                                "(arena season verify --restore-from MIRROR)")


class SeasonConfig(BaseModel):
    """One season. ``providers``: asset class -> provider (a source of ``arena ingest``).

    Validated once, where it is read (``season.json``) or made (``arena season init``): a field
    of the wrong type, an unknown asset class or source, a call timeout beyond the cycle
    deadline are refused together, each named (:class:`SeasonConfigError`)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    start: dt.date
    days: int
    symbols: tuple[str, ...]
    providers: dict[str, str]
    mode: str = LIVE
    cycle_hour: int = CYCLE_HOUR
    fee_rate: float = ARENA_RULES.fee_rate
    seed: int | None = None  # the synthetic market's
    call_timeout_s: float = 60.0  # caps a model call's timeout (the roster's params.timeout)
    cycle_deadline_s: float = 600.0  # failed contestants are retried until then
    dask: str | None = None  # where the flows fan out: a scheduler address, "local", None: threads
    # how the prompt shows candles (arena.market.sections); a season.json written before the
    # setting existed played with closes, and keeps them (from_json)
    candles: str = DEFAULT_LAYOUT
    follows: str | None = None  # in a league: the id of the season it continues (None: none)
    # a contest's rules (arena contest init: arena.pipeline.contest), None for a season that is
    # not one
    contest: Contest | None = None
    blind: bool = False  # played blind: its blinding is season/blind.json (arena.market.blind)
    created: str = ""
    format: int = FORMAT

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:  # the checks of _check, made together: as they are
            raise validation_refusal(exc, SeasonConfigError, f"season {data.get('id')!r}"
                                     ) from None

    @model_validator(mode="after")
    def _check(self) -> SeasonConfig:
        problems = []
        if self.days < 1:
            problems.append(f"days must be at least 1, not {self.days}")
        if self.mode not in (LIVE, REPLAY):
            problems.append(f"mode must be {LIVE!r} or {REPLAY!r}, not {self.mode!r}")
        if not 0 <= self.cycle_hour <= 23:
            problems.append(f"cycle_hour must be an hour of the day (0-23), not {self.cycle_hour}")
        for cls, source in self.providers.items():
            if cls not in ASSET_CLASSES:
                problems.append(f"providers: unknown asset class {cls!r} "
                                f"(expected {', '.join(sorted(ASSET_CLASSES))})")
            if source not in SOURCES:
                problems.append(f"providers: {cls}: unknown source {source!r} "
                                f"(expected {', '.join(SOURCES)})")
        if not self.symbols:
            problems.append("the season has no symbols")
        if not 0 < self.call_timeout_s <= self.cycle_deadline_s:
            problems.append(f"call_timeout_s ({self.call_timeout_s}) must be positive and at "
                            f"most cycle_deadline_s ({self.cycle_deadline_s})")
        if self.candles not in CANDLE_LAYOUTS:
            problems.append(f"candles must be one of {', '.join(CANDLE_LAYOUTS)}, not "
                            f"{self.candles!r}")
        if self.dask is not None and self.dask != LOCAL_DASK and "://" not in self.dask:
            problems.append(f"dask must be a scheduler address (tcp://host:8786) or "
                            f"{LOCAL_DASK!r}, not {self.dask!r}")
        if self.contest is not None:
            outside = [s for s in self.contest.assets if s not in self.symbols]
            if outside:
                problems.append(f"contest assets outside the season's symbols: "
                                f"{', '.join(outside)}")
        if self.blind and self.contest is not None:
            problems.append("a contest cannot be played blind: its entrants read real names "
                            "and prices through the MCP door")
        if problems:
            raise SeasonConfigError(f"season {self.id!r}: " + "; ".join(problems))
        return self

    # ---------------------------------------------------------------------------- the schedule
    def cycle_time(self, day: dt.date | pd.Timestamp) -> pd.Timestamp:
        """The cycle time (UTC) of a calendar day."""
        return pd.Timestamp(pd.Timestamp(day).date(), tz="UTC") + pd.Timedelta(hours=self.cycle_hour)

    @property
    def times(self) -> list[pd.Timestamp]:
        """Every cycle time of the season, in order: the season's one schedule (a replay plays
        it, a live season's deployments and status follow it)."""
        return daily_cycles(self.start, self.days, self.cycle_hour)

    @property
    def first(self) -> pd.Timestamp:
        return self.times[0]

    @property
    def last(self) -> pd.Timestamp:
        return self.times[-1]

    def due(self, now: pd.Timestamp) -> pd.Timestamp | None:
        """The latest cycle time of the season at or before ``now`` (None before its first)."""
        past = [t for t in self.times if t <= now]
        return past[-1] if past else None

    def next_after(self, now: pd.Timestamp) -> pd.Timestamp | None:
        """The first cycle time of the season after ``now`` (None once none is left)."""
        return next((t for t in self.times if t > now), None)

    def on_schedule(self, at: pd.Timestamp) -> bool:
        return at in set(self.times)

    # ---------------------------------------------------------------------------- what it plays
    def universe(self, base: Universe | None = None) -> Universe:
        """The season's assets; a contest's charge its fees (:attr:`Asset.cost_rate`)."""
        chosen = (base or load_universe()).select(self.symbols)
        return chosen if self.contest is None else chosen.with_cost_rates(self.contest.fees)

    @property
    def market(self) -> str | dict[str, str]:
        """What the cycle's market reads: one provider's name, or one per asset class."""
        names = set(self.providers.values())
        return next(iter(names)) if len(names) == 1 else dict(self.providers)

    @property
    def synthetic(self) -> bool:
        return set(self.providers.values()) == {SYNTHETIC}

    @property
    def sources(self) -> list[str]:
        """The season's providers, each once, by name: what its ingests fetch from."""
        return sorted(set(self.providers.values()))

    @property
    def slug(self) -> str:
        """The season's id as a kebab-case name (:func:`season_slug`)."""
        return season_slug(self.id)

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json")

    @classmethod
    def from_json(cls, raw: Mapping[str, object], source: str = "season.json") -> SeasonConfig:
        if not isinstance(raw, Mapping):
            raise SeasonConfigError(f"{source}: not a season config (a JSON object)")
        try:  # a season stored before its candle layout was a setting showed closes
            return cls(**{"candles": CLOSE, **raw})
        except SeasonConfigError as exc:
            raise SeasonConfigError(f"{source}: not a season config: {exc}") from None


def season_slug(season_id: str) -> str:
    """A season id as a kebab-case name for the objects named after it (deployments, alerts,
    limits, artifacts), e.g. ``2026-12-01-ccxt+yfinance`` as ``2026-12-01-ccxt-yfinance``."""
    return re.sub(r"[^a-z0-9]+", "-", season_id.lower()).strip("-")


def default_providers(crypto: str = SYNTHETIC, stocks: str = SYNTHETIC) -> dict[str, str]:
    """Asset class -> provider: crypto from one source, stocks and ETFs (SPY) from another."""
    return {"crypto": crypto, "stock": stocks, "etf": stocks}


def find_season(lake: Lake) -> SeasonConfig | None:
    """The lake's season, or None when the lake holds none."""
    path = config_path(lake)
    if not path.is_file():
        return None
    check_season_file(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SeasonConfigError(f"{path}: cannot read the season config: {exc}") from None
    return SeasonConfig.from_json(raw, str(path))


def load_season(lake: Lake) -> SeasonConfig:
    """The lake's season; :class:`SeasonConfigError` saying how to start one when there is none
    (a lake that does not exist, a mistyped path)."""
    season = find_season(lake)
    if season is None:
        what = "does not exist" if not lake.root.exists() else "holds no season"
        raise SeasonConfigError(
            f"the lake {lake.root} {what}: start a season there first "
            f"(arena season init --lake {lake.root} --start DATE ...)")
    return season


def init_season(lake: Lake, season: SeasonConfig, *, roster: str | Path | None = None,
                now: pd.Timestamp | None = None, sectors: bool = False,
                blind_seed: int | None = None) -> SeasonConfig:
    """Write ``season`` (and a copy of the roster, checked) into ``lake``, each sealed with its
    digest (:mod:`arena.pipeline.season_files`). A lake that holds a season keeps it:
    initialising the same season again is a no-op, another one is refused.

    A blind season (``season.blind``) draws its blinding here (:meth:`Blinding.draw`: from the
    system's randomness, or ``blind_seed`` for a test; ``sectors``: whether its prompts show
    sectors) and seals it in the lake before its config: a blind season always has its secret.
    Its roster may hold no outside entrant (they read real data through the MCP door)."""
    checked = load_roster(roster)  # a broken roster fails here, not at the first cycle
    check_blind_roster(season, checked)
    source = Path(roster) if roster is not None else DEFAULT_ROSTER
    existing = find_season(lake)
    if existing is not None:
        if _same(existing, season) and _same_roster(roster_path(lake), source):
            return existing
        raise SeasonConfigError(
            f"the lake {lake.root} holds season {existing.id!r} (from {existing.start}, "
            f"{existing.days} days, its own roster); a lake holds one season: start "
            f"{season.id!r} in a new lake (--lake)")
    ledger = lake.root / "ledger" / "cycles"
    if season.mode == LIVE and ledger.is_dir() and any(ledger.iterdir()):
        # (a replay adopts its own lake of before seasons were written: it checks the cycles)
        raise SeasonConfigError(f"the lake {lake.root} already holds cycles without a season; "
                                "start the season in a new lake (--lake)")
    stamp = (now or pd.Timestamp.now(tz="UTC")).isoformat()
    season = season.model_copy(update={"created": stamp})
    # each sealed with its digest (arena.pipeline.season_files), the roster first: a season
    # whose config is there has its roster
    write_sealed(roster_path(lake), sealed_yaml(source.read_bytes()))
    if season.blind:
        secret = Blinding.draw(season.universe(), blind_seed, sectors=sectors)
        write_sealed(blinding_path(lake),
                     sealed_json({**secret.as_json(), "season": season.id}).encode())
    write_sealed(config_path(lake), sealed_json(season.to_json()).encode())
    return season


def season_blinding(lake: Lake, season: SeasonConfig) -> Blinding | None:
    """A blind season's blinding, checked against its seal and its universe (``None``: the
    season is not blind). A blind season whose blinding is missing or damaged is refused: it is
    never played open by mistake."""
    if not season.blind:
        return None
    path = blinding_path(lake)
    if not path.is_file():
        raise DamagedSeasonFile(f"{path} is missing: season {season.id!r} is blind and is never "
                                "played open; restore it from a mirror (arena season verify "
                                "--restore-from MIRROR)")
    check_season_file(path)
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        secret = Blinding.from_json(body)
        secret.covers(season.universe())
    except (OSError, ValueError) as exc:
        raise DamagedSeasonFile(f"{path}: {exc}") from None
    if body.get("season") != season.id:
        raise DamagedSeasonFile(f"{path} is the blinding of season {body.get('season')!r}, not "
                                f"of {season.id!r}: restore this season's own (arena season "
                                "verify --restore-from MIRROR)")
    return secret


# the kinds a blind season cannot hold: an outside entrant reads real data through the MCP
# door; a replay answers from recorded answers found by the real cycle time, in real terms
NOT_BLIND = {"entrant": "outside entrants read real names, dates and prices through the MCP door",
             "replay": "a replay's recorded answers are in real terms, found by the real time"}


def check_blind_roster(season: SeasonConfig, specs: Iterable[ContestantSpec]) -> None:
    """:class:`SeasonConfigError` when a blind season's roster (or an addition to it) holds a
    kind that cannot play blind (:data:`NOT_BLIND`), naming the contestants and why."""
    if not season.blind:
        return
    refused = [(s.name, s.kind) for s in specs if s.kind in NOT_BLIND]
    if refused:
        kinds = sorted({k for _, k in refused})
        raise SeasonConfigError(f"a blind season cannot hold {', '.join(n for n, _ in refused)}: "
                                + "; ".join(NOT_BLIND[k] for k in kinds))


def _same_roster(copy: Path, source: Path) -> bool:
    """Whether the season's roster copy holds the roster ``source`` (its seal aside)."""
    try:
        return sealed_yaml(copy.read_bytes()) == sealed_yaml(source.read_bytes())
    except OSError:
        return False


def _same(a: SeasonConfig, b: SeasonConfig) -> bool:
    keys = ("id", "start", "days", "symbols", "providers", "mode", "cycle_hour", "fee_rate", "seed",
            "call_timeout_s", "cycle_deadline_s", "candles", "follows", "contest", "blind")
    return all(getattr(a, k) == getattr(b, k) for k in keys)


ADDED, RETIRED = "added", "retired"


@dataclass(frozen=True)
class RosterChange:
    contestant: str
    change: str  # added or retired
    from_cycle: str  # ISO time of the first cycle it applies to
    made_at: str  # when the operator made it

    @property
    def start(self) -> pd.Timestamp:
        return pd.Timestamp(self.from_cycle)


def roster_changes(lake: Lake) -> list[RosterChange]:
    """The season's roster changes, in the order they were made (none: an empty list)."""
    path = changes_path(lake)
    if not path.is_file():
        return []
    check_season_file(path)
    return [RosterChange(**c) for c in json.loads(path.read_text(encoding="utf-8"))["changes"]]


def active(changes: Sequence[RosterChange], name: str, at: pd.Timestamp) -> bool:
    """Whether ``name`` (in the roster copy) is in the season at the cycle ``at``."""
    for c in changes:
        if c.contestant != name:
            continue
        if c.change == ADDED and at < c.start:
            return False
        if c.change == RETIRED and at >= c.start:
            return False
    return True


def season_roster(lake: Lake, at: pd.Timestamp | None = None) -> Roster:
    """The roster of the cycle at ``at``: the roster copy without those not in the season then
    (contestants added or retired while it runs: :mod:`arena.pipeline.season_roster`); the
    whole copy when ``at`` is None."""
    if roster_path(lake).is_file():
        check_season_file(roster_path(lake))
    roster = load_roster(roster_path(lake))
    if at is None:
        return roster
    changes = roster_changes(lake)
    return Roster(tuple(s for s in roster if active(changes, s.name, at)), roster.source)


def season_contestants(lake: Lake, env: Mapping[str, str], *, call_timeout: float | None = None,
                       at: pd.Timestamp | None = None) -> tuple[list[Contestant], list[Skipped]]:
    """The contestants of the season's own roster copy that can play with the keys in ``env``
    (those in the season at the cycle ``at``: :func:`season_roster`); ``call_timeout`` caps
    every model call's timeout (the season's ``call_timeout_s``)."""
    runnable, skipped = season_roster(lake, at).available(env)
    if call_timeout is not None:
        runnable = tuple(
            s.model_copy(update={"params": s.params.model_copy(
                update={"timeout": min(s.params.timeout, call_timeout)})})
            if s.uses_model else s for s in runnable)
    return [build_contestant(spec, env=env, lake_root=lake.root) for spec in runnable], \
        list(skipped)


def new_season_id(start: dt.date, providers: Mapping[str, str], mode: str) -> str:
    sources = "+".join(sorted(set(providers.values())))
    return f"{start.isoformat()}-{sources}" + ("-replay" if mode == REPLAY else "")


def make_season(start: dt.date | str, days: int, symbols: Sequence[str], *,
                providers: Mapping[str, str] | None = None, mode: str = LIVE,
                season_id: str | None = None, seed: int | None = None,
                cycle_hour: int = CYCLE_HOUR, fee_rate: float = ARENA_RULES.fee_rate,
                call_timeout_s: float = 60.0, cycle_deadline_s: float = 600.0,
                dask: str | None = None, candles: str = DEFAULT_LAYOUT,
                follows: str | None = None, contest: Contest | None = None,
                blind: bool = False) -> SeasonConfig:
    """A season config (nothing written); ``follows``: the league season it continues;
    ``contest``: its rules when the season is a contest; ``blind``: played blind
    (:mod:`arena.market.blind`)."""
    first = start if isinstance(start, dt.date) else dt.date.fromisoformat(str(start))
    chosen = dict(providers or default_providers())
    return SeasonConfig(id=season_id or new_season_id(first, chosen, mode), start=first,
                        days=days, symbols=tuple(symbols), providers=chosen, mode=mode,
                        cycle_hour=cycle_hour, fee_rate=fee_rate, seed=seed,
                        call_timeout_s=call_timeout_s, cycle_deadline_s=cycle_deadline_s,
                        dask=dask, candles=candles, follows=follows, contest=contest,
                        blind=blind)
