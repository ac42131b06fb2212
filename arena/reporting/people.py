"""A player's block, shared by the season report and the site: the links a page makes (to the
decision that opened a trade, to the daily report of a day), the columns of a contestant's
tables, how it entered, its decisions cycle by cycle and its section's values
(``templates/people.html.j2`` lays them out: the report's section and the site's contestant
page). Only the links differ between the two pages (:class:`Links`' ``page``)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from markupsafe import Markup

from arena.reporting.daily import answer_reasoning
from arena.reporting.fragments import Fragments, digest, rendered_rows
from arena.reporting.layout import Column, anchor_id, macro, records
from arena.reporting.leaderboard import LEADERBOARD
from arena.reporting.roles import CONTESTANT, RULER


def decision_anchor(contestant: object, cycle_at: object, round_: object, index: object) -> str:
    """The id of a decision's row in its contestant's section."""
    return (f"d-{anchor_id(str(contestant))}-{pd.Timestamp(cycle_at):%Y%m%dT%H%M}-"
            f"{anchor_id(str(round_))}-{int(index)}")  # type: ignore[call-overload]


def contestant_anchor(contestant: object) -> str:
    return f"contestant-{anchor_id(str(contestant))}"


class Links:
    """A page's links: to decisions (anchors in the page that shows the contestant's decisions:
    this page, or ``page(contestant)`` - the site's contestant page) and to daily reports."""

    def __init__(self, daily: Mapping[str, str], decisions: pd.DataFrame,
                 page: Callable[[str], str] | None = None) -> None:
        self.daily = daily  # "YYYY-MM-DD" -> href of that day's HTML report
        self.page = page  # a contestant -> the URL of the page its decisions are on
        self._days: dict[object, str | None] = {}  # a time -> its day's href (rows share days)
        # every decision the page shows, as (contestant, cycle time in ns, round, index)
        self.known = set(zip(decisions["contestant"].astype(str),
                             _nanos(decisions["cycle_at"]).tolist(),
                             decisions["round"].astype(str),
                             decisions["decision_index"].astype("int64").tolist(),
                             strict=True)) if len(decisions) else set()

    def day(self, at: object) -> str | None:
        if at not in self._days:  # a time, or None (a row's values are hashable)
            self._days[at] = None if at is None or pd.isna(at) else \
                self.daily.get(f"{pd.Timestamp(at):%Y-%m-%d}")
        return self._days[at]

    def decision(self, contestant: object, at: object, round_: object, index: object
                 ) -> str | None:
        if any(v is None or pd.isna(v) for v in (at, round_, index)):
            return None
        if (str(contestant), pd.Timestamp(at).value, str(round_), int(index)) not in self.known:  # type: ignore[call-overload]
            return None
        page = "" if self.page is None else self.page(str(contestant))
        return f"{page}#{decision_anchor(contestant, at, round_, index)}"


def _nanos(times: pd.Series) -> np.ndarray:
    """Times as integer nanoseconds since the epoch (UTC)."""
    return pd.to_datetime(times, utc=True).to_numpy(dtype="datetime64[ns]").view("int64")


# ----------------------------------------------------------------------------- columns
CONTESTANT_COLUMN = Column("contestant", "contestant",
                           href=lambda r: f"#{contestant_anchor(r['contestant'])}")
OPEN_COLUMNS = [
    Column("symbol", "asset"), Column("side", "side"), Column("quantity", "quantity", "num"),
    Column("entry_price", "entry", "price"), Column("mark_price", "last mark", "price"),
    Column("unrealised_pnl", "unrealised P&L", "pnl"), Column("thesis", "thesis", wrap=True),
]
DECISION_COLUMNS = [Column("round", "round"), Column("action", "action"),
                    Column("symbol", "asset"), Column("accepted", "accepted"),
                    Column("thesis", "thesis", wrap=True)]
STAT_COLUMNS = [
    Column("final_equity", "final equity", "money"), Column("total_return", "return", "return"),
    Column("round_trips", "closed trips", "int"), Column("won", "won", "int"),
    Column("lost", "lost", "int"), Column("win_rate", "win rate", "share"),
    Column("mean_holding_days", "mean days held", "score"),
    Column("automatic_closes", "auto-closed", "int"), Column("open", "open at the end", "int"),
    Column("fees", "fees", "money"), Column("calls", "model calls", "int"),
    Column("cost_usd", "calls $", "usd"), Column("pnl_per_call_dollar", "P&L per call $", "pnl"),
]
CALL_COLUMNS = [
    Column("cycles", "cycles", "int"), Column("traded", "traded", "int"),
    Column("no_trade", "no trade", "int"), Column("forfeited", "forfeited", "int"),
    Column("skipped", "skipped", "int"), Column("tokens_in", "tokens in", "int"),
    Column("tokens_out", "tokens out", "int"), Column("mean_latency_s", "mean latency s", "score"),
    Column("p95_latency_s", "p95 latency s", "score"), Column("retries", "retries", "int"),
    Column("failed_calls", "failed calls", "int"), Column("repair_rounds", "repairs", "int"),
    Column("repairs_succeeded", "repaired ok", "int"),
]
REJECTION_COLUMNS = [Column("cycle_at", "cycle (UTC)", "time"), Column("round", "round"),
                     Column("code", "reason code"), Column("rejections", "rejections", "int"),
                     Column("symbols", "assets"), Column("example_message", "example", wrap=True)]


def trade_columns(links: Links, *, who: bool = True) -> list[Column]:
    columns = [
        Column("symbol", "asset"), Column("side", "side"),
        Column("opened_at", "opened (UTC)", "time", href=lambda r: links.day(r["opened_at"])),
        Column("closed_at", "closed (UTC)", "time", href=lambda r: links.day(
            r["exit_window_end"] if r.get("closed_by") == "automatic" else r["exit_cycle_at"])),
        Column("closed_by", "closed by"), Column("entry_price", "entry", "price"),
        Column("exit_price", "exit", "price"), Column("net_pnl", "net P&L", "pnl"),
        Column("thesis", "thesis", wrap=True),
        _why(links),
    ]
    return ([CONTESTANT_COLUMN] if who else []) + columns


def _why(links: Links) -> Column:
    """The "decision" link of a trade or a position: to the decision that opened it."""
    return Column("why", "reasoning", href=lambda r: links.decision(
        r["contestant"], r["entry_cycle_at"], r["entry_round"], r["entry_decision_index"]))


def open_columns(links: Links) -> list[Column]:
    return [CONTESTANT_COLUMN,
            Column("opened_at", "opened (UTC)", "time", href=lambda r: links.day(r["opened_at"])),
            *OPEN_COLUMNS, _why(links)]


def leaderboard_columns(board: pd.DataFrame, role: str = CONTESTANT) -> list[Column]:
    """The report's leaderboard of one band: :data:`LEADERBOARD`, the contestant linking to its
    section, and an ``entry`` column after it when someone entered from outside or late
    (``board`` with :func:`entry`'s column: the whole board, so both bands have the same
    columns); the rulers' band has no place column and names its rows rulers."""
    name = CONTESTANT_COLUMN if role == CONTESTANT else Column(
        "contestant", RULER, href=CONTESTANT_COLUMN.href)
    columns = [name if c.key == "contestant" else c for c in LEADERBOARD
               if role == CONTESTANT or c.key != "place"]
    if (board["entry"] != "roster").any():
        columns.insert(columns.index(name) + 1, Column("entry", "entry"))
    if "knowledge" in board and board["knowledge"].astype(bool).any():
        columns.insert(columns.index(name) + 1, Column("knowledge", "knowledge"))
    return columns


def knowledge(board: pd.DataFrame) -> pd.Series:
    """What the season may be to each contestant's model: ``contaminated (cutoff YYYY-MM)``
    where its prices may be in the model's training data (the leaderboard's ``contaminated``:
    arena.pipeline.knowledge), else empty; a board published before the column: all empty."""
    if "contaminated" not in board:
        return pd.Series("", index=board.index)
    cutoff = board["knowledge_cutoff"].fillna("").astype(str)
    said = np.where(cutoff != "", "contaminated (cutoff " + cutoff + ")",
                    "contaminated (mirrors a contaminated model)")
    return pd.Series(np.where(board["contaminated"].fillna(False).astype(bool), said, ""),
                     index=board.index)


def entry(board: pd.DataFrame) -> pd.Series:
    """How each contestant entered: ``outside entrant`` (through arena mcp) or ``roster``, and
    ``from <day>`` when its window started after the season's first cycle."""
    first = pd.to_datetime(board["first_cycle_at"], utc=True)
    kind = pd.Series(np.where(board["outside_entrant"].astype(bool), "outside entrant", "roster"),
                     index=board.index)
    late = first > first.min()
    return kind + np.where(late, ", from " + first.dt.strftime("%Y-%m-%d"), "")


def why_column(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the ``why`` column its reasoning links sit in ("decision" where the row
    names the decision that opened it)."""
    opened = frame["entry_cycle_at"].notna().to_numpy() if "entry_cycle_at" in frame \
        else np.zeros(len(frame), dtype=bool)
    return frame.assign(why=np.where(opened, "decision", None))


@dataclass(frozen=True)
class _Decision:
    anchor: str
    row: dict[str, object]  # the mart's row, ``accepted`` as words
    json: str  # the decision, pretty-printed when it parses


@dataclass(frozen=True)
class _Cycle:
    """One cycle's round of a contestant's decisions, under its time and reasoning."""

    at: object
    href: str | None  # that day's daily report
    round: str
    reasoning: str | None
    decisions: list[_Decision]


# what a cycle's rendering shows of its decisions' rows (its key digests these): the anchor's
# parts, the columns, the decision's JSON and the answer (its reasoning)
DECISION_SHOWN = tuple(dict.fromkeys(["contestant", "cycle_at", "round", "decision_index",
                                      *(c.key for c in DECISION_COLUMNS), "decision",
                                      "answer_text"]))


def decision_cycles(decisions: pd.DataFrame, links: Links, fragments: Fragments
            ) -> dict[str, list[Markup]]:
    """Each contestant's decisions, cycle by cycle (an answer before its repair), each cycle's
    round rendered (``season_parts.html.j2``) or taken from ``fragments`` when its rows and
    its link are those it was rendered from: the frame is sorted once, its rows digested in
    one vectorised pass, and only the cycles not kept are turned into rows and rendered."""
    if decisions.empty:
        return {}
    order = decisions.assign(_round=decisions["round"].map({"answer": 0, "repair": 1}).fillna(2))
    order = order.sort_values(["contestant", "cycle_at", "_round", "round", "decision_index"],
                              kind="stable").drop(columns="_round").reset_index(drop=True)
    names = order["contestant"].astype(str).to_numpy()
    nanos = _nanos(order["cycle_at"])
    rounds = order["round"].astype(str).to_numpy()
    starts = np.flatnonzero(np.r_[True, (names[1:] != names[:-1]) | (nanos[1:] != nanos[:-1])
                                  | (rounds[1:] != rounds[:-1])])
    ends = np.r_[starts[1:], len(order)]
    shown = order[[c for c in DECISION_SHOWN if c in order.columns]]
    hashes = np.column_stack([pd.util.hash_pandas_object(shown, index=False, hash_key=k)
                              .to_numpy() for k in ("arena.decisions.", "season.report.v1")])
    _, first, which = np.unique(nanos[starts], return_index=True, return_inverse=True)
    at_href = [links.day(order["cycle_at"].iat[starts[g]]) for g in first.tolist()]
    hrefs = [at_href[i] for i in which.tolist()]
    keys = [digest("cycle", repr(hrefs[g]), hashes[a:b].tobytes())
            for g, (a, b) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True))]
    missing = [g for g, key in enumerate(keys) if not fragments.has(key)]
    rows: dict[int, list[dict[str, object]]] = {}
    if missing:  # the rows of the cycles to render, made in one pass
        picked = np.concatenate([np.arange(starts[g], ends[g]) for g in missing])
        made = iter(records(order.iloc[picked]))
        rows = {g: [next(made) for _ in range(ends[g] - starts[g])] for g in missing}
    render = macro("season_parts.html.j2", "decision_cycle")
    out: dict[str, list[Markup]] = {}
    for g, key in enumerate(keys):
        out.setdefault(str(names[starts[g]]), []).append(fragments.get(
            key, lambda g=g: render(_cycle(rows[g], hrefs[g]), DECISION_COLUMNS)))
    return out


def _cycle(rows: list[dict[str, object]], href: str | None) -> _Cycle:
    """One cycle's round of a contestant's decisions from its rows (in order)."""
    answers = [r["answer_text"] for r in rows if r.get("answer_text") is not None]
    reasoning = answer_reasoning(answers[0]) if answers else None
    choices = []
    for r in rows:
        decision = r.get("decision")
        try:
            pretty = json.dumps(json.loads(str(decision)), indent=2, ensure_ascii=False)
        except ValueError:
            pretty = str(decision)
        r["accepted"] = {True: "yes", False: "rejected"}.get(r.get("accepted"), "–")
        choices.append(_Decision(decision_anchor(r["contestant"], r["cycle_at"], r["round"],
                                                 r["decision_index"]), r, pretty))
    return _Cycle(rows[0]["cycle_at"], href, str(rows[0]["round"]), reasoning, choices)


@dataclass(frozen=True)
class Person:
    """What a contestant's section shows."""

    name: str
    anchor: str
    colour: str
    place: object  # None for a ruler (not ranked)
    role: str
    entered: str
    stats: dict[str, object]
    trades: list[Markup]  # rows rendered (fragments.rendered_rows)
    closed: int
    cycles: list[Markup]  # each cycle's round of decisions, rendered
    decisions: int
    rejections: list[Markup]
    rejected: int
    calls: list[dict[str, object]]


class ByContestant:
    """The rows of each mart a contestant's section shows, split by contestant once (not one
    scan of every table per contestant); a contestant without rows gets the empty table."""

    def __init__(self, marts: Mapping[str, pd.DataFrame]) -> None:
        self.marts = marts
        self._split: dict[str, dict[object, pd.DataFrame]] = {}
        self.decisions = marts["decisions"]["contestant"].value_counts()

    def __call__(self, mart: str, name: str) -> pd.DataFrame:
        frame = self.marts[mart]
        split = self._split.get(mart)
        if split is None:
            split = self._split[mart] = dict(iter(frame.groupby("contestant", sort=False)))
        found = split.get(name)
        return frame.iloc[0:0] if found is None else found


def person_columns(trades: Sequence[Column]) -> dict[str, Sequence[Column]]:
    """The tables of a player's block (``people.html.j2``), ``trades`` its trades' columns."""
    return {"stats": STAT_COLUMNS, "trades": trades, "decisions": DECISION_COLUMNS,
            "rejections": REJECTION_COLUMNS, "calls": CALL_COLUMNS}


def person(name: str, marts: Mapping[str, pd.DataFrame], held: pd.DataFrame,
                colour: str, cycles: list[Markup], trade_columns: Sequence[Column],
                fragments: Fragments, rows_of: ByContestant) -> Person:
    board = marts["leaderboard"]
    row = records(board[board["contestant"] == name])[0]
    entered = entry(board)[board["contestant"] == name].iloc[0]
    trades = rows_of("trades", name)
    closed = trades[trades["status"] == "closed"]
    calls = rows_of("model_calls", name)
    stats = {**row, "won": int((closed["net_pnl"] > 0).sum()),
             "lost": int((closed["net_pnl"] <= 0).sum()),
             "mean_holding_days": float(closed["holding_days"].mean()) if len(closed) else None,
             "open": int((held["contestant"] == name).sum()),
             # summed exactly: the same figure whatever order the mart's rows come in
             "fees": math.fsum(trades["fees"]) if len(trades) else 0.0}
    rejections = rows_of("rejections", name)
    rejections = rejections.assign(symbols=rejections["symbols"].map(
        lambda v: v if v is None or isinstance(v, str) else ", ".join(map(str, v))))
    return Person(
        name=name, anchor=contestant_anchor(name), colour=colour,
        place=None if row["role"] == RULER else row["place"], role=str(row["role"]),
        entered=str(entered), stats=stats,
        trades=rendered_rows(why_column(trades.sort_values(["opened_at", "symbol"])),
                             trade_columns, fragments),
        closed=len(closed), cycles=cycles, decisions=int(rows_of.decisions.get(name, 0)),
        rejections=rendered_rows(rejections.sort_values("cycle_at"), REJECTION_COLUMNS,
                                 fragments),
        rejected=int(rejections["rejections"].sum()) if len(rejections) else 0,
        calls=records(calls))
