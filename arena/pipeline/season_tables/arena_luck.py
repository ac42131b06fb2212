"""The arena's zero-skill players: their final returns (``arena_luck``) and the band of their
equity after each cycle (``arena_luck_band``), played with the full rules engine on the cycle
prices of the tradable assets; a build continues them from the books of the latest stored
checkpoint whose inputs are unchanged (:mod:`arena.pipeline.season_state`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from arena.core.sessions import interval_delta, utc
from arena.core.universe import Universe
from arena.pipeline.season_state import (
    BooksCheckpoint,
    SeasonReads,
    SeasonState,
    StateUnusable,
    changed_assets,
    changed_cycle,
    price_rows_digest,
)
from arena.pipeline.season_tables.checkpoints import and_others, checkpoint_counts, minute
from arena.pipeline.season_tables.store import BAND, BAND_COLUMNS
from arena.scoring.arena_luck import MONITOR_INTERVAL, Advance, ZeroSkillBooks, advance_zero_skill

ARENA_PLAYERS = 1000  # arena zero-skill players (each plays the full rules engine)


@dataclass
class ArenaTables:
    """The players' final returns, the band per cycle and the players' rejections; how many
    cycles were kept from the stored state (and, if none, why); the arena's cycles (those with
    a price) and the checkpoints the build leaves."""

    returns: pd.DataFrame
    band: pd.DataFrame
    rejections: int
    kept: int
    why: str
    cycles: list[pd.Timestamp]
    checkpoints: list[BooksCheckpoint]


@dataclass
class _Resumed:
    """Where the players start: the cycles kept (0: the season's first), the books and band rows
    up to them, the stored checkpoints trusted, the monitor digests of the checkpoints to leave
    (None: not read yet) and why the latest stored checkpoint is not the start."""

    why: str
    kept: int = 0
    books: ZeroSkillBooks | None = None
    band: pd.DataFrame | None = None
    trusted: dict[int, BooksCheckpoint] = field(default_factory=dict)
    ahead: list[dict[str, str]] | None = None


def arena_luck_tables(reads: SeasonReads, prices: pd.DataFrame, wide: pd.DataFrame,
                      universe: Universe, stored: SeasonState | None, why: str, *, players: int,
                      seed: int, say: Callable[[str], None] = lambda _msg: None) -> ArenaTables:
    """The players' final returns and the equity band per cycle of the arena's zero-skill
    players on the cycle prices of the tradable assets (``wide``:
    :func:`~arena.pipeline.season_tables.prices.tradable_prices` of ``prices``): the players of
    the latest stored checkpoint whose inputs are unchanged advance from their books through the
    cycles after it, and the band's rows up to it are kept
    (:func:`~arena.scoring.arena_luck.advance_zero_skill`: the same numbers as a simulation from
    scratch, bit for bit); without one they play the season from its first cycle."""
    tradable = [a.symbol for a in universe.tradable]
    cycles = [utc(t) for t in wide.index]
    counts = [n for n in checkpoint_counts(len(cycles))
              if not reads.observed_at_open(cycles[n - 1])]
    ends = [cycles[n - 1] for n in counts]
    resumed = _resume(reads, prices, tradable, cycles, ends, stored, why)
    kept = resumed.kept
    books = _starting_books(resumed, stored, cycles, players=players, seed=seed, say=say)
    since = cycles[0] if not kept else max(reads.times[0], cycles[kept - 1] - interval_delta(
        MONITOR_INTERVAL))
    keep = len(cycles) - 1 if len(cycles) - 1 in counts and len(cycles) - 1 >= kept else None
    played = advance_zero_skill(books, wide, universe, bars=reads.monitor_bars(since) or None,
                                keep=keep)
    band = _band(played, wide.index[kept:], resumed.band)
    digests = resumed.ahead if resumed.ahead is not None else reads.monitor_digests(ends)
    checkpoints = _books_checkpoints(prices, tradable, cycles, zip(counts, digests, strict=True),
                                     played, keep, resumed, stored)
    returns = pd.DataFrame({"player": np.arange(players, dtype="int64"),
                            "final_return": played.returns})
    return ArenaTables(returns, band, played.books.rejections, kept, "" if kept else resumed.why,
                       cycles, checkpoints)


def _trusted_points(reads: SeasonReads, prices: pd.DataFrame, tradable: Sequence[str],
                    cycles: Sequence[pd.Timestamp], ends: Sequence[pd.Timestamp],
                    stored: SeasonState
                    ) -> tuple[dict[int, BooksCheckpoint], list[dict[str, str]], str]:
    """The stored checkpoints whose inputs are unchanged (by their cycle count), the monitor
    digests of ``ends`` now, and why the latest stored checkpoint is not trusted (or, when it
    is, that there is none)."""
    points = sorted(stored.arena, key=lambda p: p.cycles, reverse=True)
    why = "the stored state holds no books to continue from"
    digests = reads.monitor_digests([stored.arena_cycles[p.cycles - 1] for p in points]
                                    + list(ends))
    trusted: dict[int, BooksCheckpoint] = {}
    for point, now in zip(points, digests, strict=False):
        at = stored.arena_cycles[point.cycles - 1]
        reason = changed_cycle(stored.arena_cycles, cycles, point.cycles)
        if reason is None and price_rows_digest(prices, tradable, at) != point.prices:
            reason = f"the cycle prices up to {minute(at)} changed since they were stored"
        if reason is None and (changed := changed_assets(point.monitor_bars, now)):
            reason = (f"the {MONITOR_INTERVAL} bars of {changed[0]} before {minute(at)} "
                      f"changed since they were stored{and_others(changed)}")
        if reason is None:
            trusted[point.cycles] = point
        elif point is points[0]:  # the latest checkpoint's reason: the one to say
            why = reason
    return trusted, digests[len(points):], why


def _resume(reads: SeasonReads, prices: pd.DataFrame, tradable: Sequence[str],
            cycles: Sequence[pd.Timestamp], ends: Sequence[pd.Timestamp],
            stored: SeasonState | None, why: str) -> _Resumed:
    """The latest trusted stored checkpoint with its books and band rows; the season's first
    cycle (and why) when there is none or its books or band do not read."""
    if stored is None:
        return _Resumed(why)
    trusted, ahead, why = _trusted_points(reads, prices, tradable, cycles, ends, stored)
    if not trusted:
        return _Resumed(why, ahead=ahead)
    kept = max(trusted)
    old = stored.table("arena_luck_band")
    old = old[old["cycle_at"] <= cycles[kept - 1]].reset_index(drop=True)
    try:
        if [utc(t) for t in old["cycle_at"]] != cycles[:kept]:
            raise StateUnusable(f"the stored band does not hold the first {kept} cycles")
        return _Resumed(why, kept, stored.books(trusted[kept]), old, trusted, ahead)
    except StateUnusable as exc:
        return _Resumed(str(exc), ahead=ahead)


def _starting_books(resumed: _Resumed, stored: SeasonState | None,
                    cycles: Sequence[pd.Timestamp], *, players: int, seed: int,
                    say: Callable[[str], None]) -> ZeroSkillBooks:
    """The books the players play on from, said: the resumed ones, else new ones at the
    season's first cycle."""
    if resumed.books is None:
        books = ZeroSkillBooks.start(players, seed)
        say(f"arena luck: {players:,} zero-skill players x {len(cycles)} cycles from the "
            f"season's first ({resumed.why})")
        return books
    kept = resumed.kept
    later = "" if stored is None or kept == max(p.cycles for p in stored.arena) else (
        f"; not from the later ones: {resumed.why}")
    say(f"arena luck: {players:,} zero-skill players advance {len(cycles) - kept} "
        f"cycle(s) from their books after {minute(cycles[kept - 1])} "
        f"(cycle {kept} of {len(cycles)}){later}")
    return resumed.books


def _band(played: Advance, cycles: pd.Index, kept: pd.DataFrame | None) -> pd.DataFrame:
    """The band's rows: the kept ones, then the quantiles of the equity after each new cycle."""
    new = (np.quantile(played.equity, BAND, axis=0).T if played.equity.shape[1]
           else np.empty((0, len(BAND))))
    band = pd.DataFrame(new, columns=list(BAND_COLUMNS))
    band.insert(0, "cycle_at", cycles)
    if kept is not None:
        band = pd.concat([kept, band], ignore_index=True)
    return band


def _books_checkpoints(prices: pd.DataFrame, tradable: Sequence[str],
                       cycles: Sequence[pd.Timestamp],
                       points: Iterable[tuple[int, dict[str, str]]],
                       played: Advance, keep: int | None, resumed: _Resumed,
                       stored: SeasonState | None) -> list[BooksCheckpoint]:
    """The checkpoints the build leaves (``points``: their cycle counts and monitor digests)
    with the books after them: played now, or the trusted stored ones."""
    checkpoints = []
    for n, digest in points:
        if n == len(cycles):
            at_n = played.books
        elif n == keep:
            at_n = played.kept
        elif n in resumed.trusted and stored is not None:
            at_n = stored.books(resumed.trusted[n])
        else:
            continue
        checkpoints.append(BooksCheckpoint(n, digest, price_rows_digest(prices, tradable,
                                                                         cycles[n - 1]), at_n))
    return checkpoints
