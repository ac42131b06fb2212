"""The season's matched players (:mod:`arena.scoring.matched`), landed in the lake for dbt.

Every contestant that recorded a cycle (and every replicated model, its instances together) gets
its matched players: its book, read from its recorded fills, copied position by position with the
assets relabelled at random. Two analytics tables:

* ``matched_players``  one row per unit and player: the player's final return (a replicated
                       model's: the mean over its instances, relabelled together)
* ``matched_books``    one row per unit: ``unit_kind`` (``contestant`` or ``model``), its
                       instances, positions, players and seed, the book's own return as replayed,
                       the relabellings drawn again (``fallbacks``), the opens a player could not
                       make (``skipped_opens``), the replay's largest difference from the equity
                       the ledger recorded (``book_check_usd``), and ``status``:

  - ``scored``: the unit has a skill percentile;
  - ``no_trades``: it opened nothing through the season's last cycle - there is no choice to
    test, so no percentile (not 50%);
  - ``book_unmatched``: its fills cannot be replayed at the season's cycle prices (a held asset
    without a price at a cycle), or replayed they do not give the equity its records hold (more
    than :data:`BOOK_TOLERANCE` apart): its players would copy another book, so it has no
    percentile, and the build says so.

The leaderboard mart places each contestant's recorded return among its players (the skill
percentile) and the replicates mart a model's mean return among its own.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from arena.core.universe import Universe
from arena.data.lake import Lake
from arena.engine.rules import ARENA_RULES
from arena.ledger.store import Ledger
from arena.scoring.matched import (
    Book,
    MatchedInputError,
    MatchedMarket,
    book_from_fills,
    matched_players,
    relabelling_keys,
)

log = logging.getLogger(__name__)

SCORED, NO_TRADES, BOOK_UNMATCHED = "scored", "no_trades", "book_unmatched"
STATUSES = (SCORED, NO_TRADES, BOOK_UNMATCHED)
CONTESTANT, MODEL = "contestant", "model"
BOOK_TOLERANCE = 1e-6  # USD: the replayed equity against the recorded one
_INSTANCE = re.compile(r"^(?P<model>.+)-r(?P<k>[0-9]+)$")


def books_schema() -> pa.Schema:
    return pa.schema([
        ("unit", pa.string()), ("unit_kind", pa.string()), ("instances", pa.int64()),
        ("instance_names", pa.string()), ("positions", pa.int64()), ("status", pa.string()),
        ("players", pa.int64()), ("seed", pa.int64()), ("own_return", pa.float64()),
        ("fallbacks", pa.int64()), ("skipped_opens", pa.int64()),
        ("book_check_usd", pa.float64())])


def players_schema() -> pa.Schema:
    return pa.schema([("unit", pa.string()), ("player", pa.int64()),
                      ("final_return", pa.float64())])


def _replicate_of(ledger: Ledger, contestant: str, at: pd.Timestamp) -> str | None:
    """The model a contestant is an instance of, as its record at ``at`` (its latest in the
    season) names it in its calls (only a name of the instances' form ``<model>-r<k>`` can be
    one)."""
    if not _INSTANCE.match(contestant):
        return None
    for row in ledger.record_rows("calls", at, contestant):
        if row.get("replicate_of"):
            return str(row["replicate_of"])
    return None


def _book_check(ledger: Ledger, book: Book, market: MatchedMarket, at: pd.Timestamp) -> float:
    """The difference (USD) between the book's replayed equity and the equity its record at
    ``at`` (its latest in the season) holds (0 when that record has none)."""
    rows = ledger.record_rows("equity", at, book.name)
    recorded = rows[-1].get("equity") if rows else None
    if recorded is None:
        return 0.0
    return abs(float(book.equity[market.cycles.get_loc(at)]) - float(recorded))


def matched_tables(lake: Lake, wide: pd.DataFrame, universe: Universe, *, players: int,
                   seed: int, say: Callable[[str], None] = lambda _m: None
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(``matched_players``, ``matched_books``) of the season of ``wide`` (the arena luck's cycle
    prices: index the cycles, columns the tradable symbols), for every contestant the lake's
    ledger recorded through its last cycle."""
    ledger = Ledger(lake)
    market = MatchedMarket.from_prices(wide, universe)
    last = market.cycles[-1]
    latest: dict[str, pd.Timestamp] = {}  # each contestant's latest record in the season
    for key in ledger.records():  # one listing, by cycle: the last one seen is the latest
        if key.cycle_at <= last:
            latest[key.contestant] = key.cycle_at
    names = sorted(latest)
    keys = relabelling_keys(market.symbols, players, seed)
    books: dict[str, Book] = {}
    rows, returns = [], []
    models: dict[str, list[str]] = {}
    for name in names:
        try:
            book = book_from_fills(name, ledger.fills(name), market, rules=ARENA_RULES)
        except MatchedInputError as exc:
            log.warning("no matched players for %s: %s", name, exc)
            say(f"matched players: {name} has no skill percentile ({exc})")
            rows.append(_row(name, CONTESTANT, [name], 0, BOOK_UNMATCHED, players, seed))
            continue
        check = _book_check(ledger, book, market, latest[name])
        books[name] = book
        if (model := _replicate_of(ledger, name, latest[name])) is not None:
            models.setdefault(model, []).append(name)
        status = (NO_TRADES if not book.traded else
                  SCORED if check <= BOOK_TOLERANCE else BOOK_UNMATCHED)
        if status == BOOK_UNMATCHED:
            log.warning("%s: its fills replayed at the cycle prices give %.6f USD more or less "
                        "than its recorded equity: no skill percentile", name, check)
            say(f"matched players: {name}'s replayed book is {check:.6f} USD off its records: "
                "no skill percentile")
        rows.append(_unit(name, CONTESTANT, [book], status, players, seed, check, market, keys,
                          returns))
    for model, instances in sorted(models.items()):
        group = [books[n] for n in sorted(instances)]
        statuses = {r["unit"]: r["status"] for r in rows}
        status = (BOOK_UNMATCHED if any(statuses[b.name] == BOOK_UNMATCHED for b in group) else
                  SCORED if any(b.traded for b in group) else NO_TRADES)
        rows.append(_unit(model, MODEL, group, status, players, seed,
                          max(r["book_check_usd"] for r in rows if r["unit"] in instances),
                          market, keys, returns))
    scored = sum(r["status"] == SCORED for r in rows)
    if rows:
        say(f"matched players: {players:,} for each of {scored} book(s) with positions "
            f"({len(rows) - scored} without a skill percentile)")
    books_frame = pa.Table.from_pylist(rows, schema=books_schema()).to_pandas()
    players_frame = (pd.concat(returns, ignore_index=True) if returns
                     else players_schema().empty_table().to_pandas())
    return players_frame, books_frame


def _row(unit: str, kind: str, names: Sequence[str], positions: int, status: str, players: int,
         seed: int, own: float | None = None, fallbacks: int = 0, skipped: int = 0,
         check: float | None = None) -> dict[str, object]:
    return {"unit": unit, "unit_kind": kind, "instances": len(names),
            "instance_names": ", ".join(names), "positions": positions, "status": status,
            "players": players, "seed": seed, "own_return": own, "fallbacks": fallbacks,
            "skipped_opens": skipped, "book_check_usd": check}


def _unit(unit: str, kind: str, group: Sequence[Book], status: str, players: int, seed: int,
          check: float, market: MatchedMarket, keys: np.ndarray,
          returns: list[pd.DataFrame]) -> dict[str, object]:
    names = [b.name for b in group]
    positions = sum(b.lots for b in group)
    own = float(np.mean([b.final_return() for b in group]))
    if status != SCORED:
        return _row(unit, kind, names, positions, status, players, seed, own, check=check)
    got = matched_players(group, market, players=players, seed=seed, name=unit, keys=keys)
    returns.append(pd.DataFrame({"unit": unit, "player": np.arange(players, dtype="int64"),
                                 "final_return": got.unit_returns}))
    return _row(unit, kind, names, positions, status, players, seed, own, got.fallbacks,
                got.skipped, check)
