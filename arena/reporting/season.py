"""The season report: one self-contained HTML file (charts as inline SVG, tables, no script and
no request outside the file) read from the published marts (``<lake>/marts/*.parquet``, see
:mod:`arena.pipeline.warehouse`), so every number in it is a number an analyst can query.

Every trade links to the decision that opened it (the decision's JSON and the answer's reasoning,
in its contestant's section) and to the daily report of the day it opened and closed; the daily
reports are rendered as HTML beside their Markdown and link back here.

This module reads the marts into the values the page shows (rows, columns, counts, charts);
``templates/season.html.j2`` lays them out and words them, on the page every report extends.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from markupsafe import Markup

from arena.core.errors import Failed
from arena.core.lazy import lazy_import
from arena.data.lake import Lake, write_text
from arena.data.persistence import last_boot
from arena.data.providers import SYNTHETIC_MARKET, market_note
from arena.reporting.daily import DAILY_DIR, answer_reasoning, render_daily_html
from arena.reporting.fragments import FRAGMENTS_FILE, Fragments, digest, rendered_rows
from arena.reporting.layout import Column, anchor_id, macro, records, render, templates_digest
from arena.reporting.leaderboard import (
    BAND_TITLES,
    LEADERBOARD,
    REPLICATES,
    REPLICATES_TITLE,
    bands,
    sorted_board,
)
from arena.reporting.plots import (
    drawdown_chart,
    equity_chart,
    heatmap_chart,
    scatter_chart,
    series_colours,
)
from arena.reporting.roles import CONTESTANT, RULER

np = lazy_import("numpy")
pd = lazy_import("pandas")

SEASON_FILE = "season.html"
PAGES_FILE = "_pages.json"  # each daily page's digest (its Markdown, link back and the code)
TOP_TRADES = 15
START_CASH = 10_000.0
# dbt_project.yml's vars, quoted in the conventions (a test keeps them equal)
PERIODS_PER_YEAR, RISK_FREE_RATE = 365, 0.0
# below this many daily returns an annualised Sharpe or a drawdown says little
SHORT_SEASON = 20
MEDIAN_RANK_SCORE = -math.log10(0.5)  # a result at the zero-skill median: the heatmap's white
BENCHMARK_LABELS = {"BTC": "BTC (buy and hold)", "SPY": "SPY (buy and hold)",
                    "universe": "universe (equal weight)"}


class ReportError(Failed, RuntimeError):
    """The report's inputs are missing (marts not built yet...)."""


def read_marts(lake: Lake) -> dict[str, pd.DataFrame]:
    folder = lake.root / "marts"
    if not folder.is_dir():
        raise ReportError(f"{folder} does not exist: build the marts first (arena replay or "
                          "arena demo builds them at the end of a season)")
    return {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


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
REJECTION_CODE_COLUMNS = [Column("contestant", "contestant"), Column("code", "reason code"),
                          Column("rejections", "rejections", "int")]
LUCK_COLUMNS = [
    Column("symbol", "asset"), Column("asset_class", "class"), Column("grid", "grid"),
    Column("bars", "bars", "int"), Column("players", "players", "int"),
    Column("q05", "5%", "return"), Column("q50", "median", "return"),
    Column("ceiling", "ceiling (95%)", "return"), Column("buy_and_hold", "buy & hold", "return"),
    Column("best_rule", "best rule"), Column("best_return", "its return", "return"),
    Column("rules_over_ceiling", "rules over ceiling", "int"),
]
RULE_COLUMNS = [
    Column("rule", "rule"), Column("kind", "kind"), Column("total_return", "return", "return"),
    Column("turnover", "turnover", "score"), Column("fees", "fees", "drawdown"),
    Column("percentile", "luck pct", "share"), Column("rank_score", "rank score", "score"),
    Column("history", "history"),
]
INSUFFICIENT_HISTORY = "insufficient_history"  # the rules table's status of a rule without a result
MODEL_CALL_COLUMNS = [
    Column("contestant", "contestant"), Column("cycles", "cycles", "int"),
    Column("traded", "traded", "int"), Column("no_trade", "no trade", "int"),
    Column("forfeited", "forfeited", "int"), Column("calls", "calls", "int"),
    Column("tokens_in", "tokens in", "int"), Column("tokens_out", "tokens out", "int"),
    Column("cost_usd", "cost", "usd"), Column("mean_latency_s", "mean latency s", "score"),
    Column("retries", "retries", "int"), Column("rejections", "rejections", "int"),
    Column("repair_rounds", "repairs", "int"),
]


def _trade_columns(links: Links, *, who: bool = True) -> list[Column]:
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


def _open_columns(links: Links) -> list[Column]:
    return [CONTESTANT_COLUMN,
            Column("opened_at", "opened (UTC)", "time", href=lambda r: links.day(r["opened_at"])),
            *OPEN_COLUMNS, _why(links)]


def _leaderboard_columns(board: pd.DataFrame, role: str = CONTESTANT) -> list[Column]:
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
    return columns


# ----------------------------------------------------------------------------- values
def entry(board: pd.DataFrame) -> pd.Series:
    """How each contestant entered: ``outside entrant`` (through arena mcp) or ``roster``, and
    ``from <day>`` when its window started after the season's first cycle."""
    first = pd.to_datetime(board["first_cycle_at"], utc=True)
    kind = pd.Series(np.where(board["outside_entrant"].astype(bool), "outside entrant", "roster"),
                     index=board.index)
    late = first > first.min()
    return kind + np.where(late, ", from " + first.dt.strftime("%Y-%m-%d"), "")


def open_positions(marts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Each contestant's positions after its last cycle, with the trade (entry decision) each
    belongs to."""
    positions, trades = marts["positions"], marts["trades"]
    if positions.empty:
        return positions.assign(entry_cycle_at=None, entry_round=None, entry_decision_index=None)
    last = marts["equity_daily"].groupby("contestant")["cycle_at"].max().rename("last_cycle")
    held = positions.join(last, on="contestant")
    held = held[held["cycle_at"] == held["last_cycle"]].drop(columns="last_cycle")
    entries = trades[["contestant", "symbol", "trip", "entry_cycle_at", "entry_round",
                      "entry_decision_index"]]
    return held.merge(entries, on=["contestant", "symbol", "trip"], how="left") \
        .sort_values(["contestant", "symbol"])


def _why_column(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the ``why`` column its reasoning links sit in ("decision" where the row
    names the decision that opened it)."""
    opened = frame["entry_cycle_at"].notna().to_numpy() if "entry_cycle_at" in frame \
        else np.zeros(len(frame), dtype=bool)
    return frame.assign(why=np.where(opened, "decision", None))


def _with_why(frame: pd.DataFrame) -> list[dict[str, object]]:
    return records(_why_column(frame))


def _key_trades(trades: pd.DataFrame) -> pd.DataFrame:
    """The closed round trips with the largest net P&L either way."""
    closed = trades[trades["status"] == "closed"]
    return closed.reindex(closed["net_pnl"].abs().sort_values(ascending=False).index) \
        .head(TOP_TRADES)


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


def _cycles(decisions: pd.DataFrame, links: Links, fragments: Fragments
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
class _Contestant:
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


class _ByContestant:
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


def _contestant(name: str, marts: Mapping[str, pd.DataFrame], held: pd.DataFrame,
                colour: str, cycles: list[Markup], trade_columns: Sequence[Column],
                fragments: Fragments, rows_of: _ByContestant) -> _Contestant:
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
    return _Contestant(
        name=name, anchor=contestant_anchor(name), colour=colour,
        place=None if row["role"] == RULER else row["place"], role=str(row["role"]),
        entered=str(entered), stats=stats,
        trades=rendered_rows(_why_column(trades.sort_values(["opened_at", "symbol"])),
                             trade_columns, fragments),
        closed=len(closed), cycles=cycles, decisions=int(rows_of.decisions.get(name, 0)),
        rejections=rendered_rows(rejections.sort_values("cycle_at"), REJECTION_COLUMNS,
                                 fragments),
        rejected=int(rejections["rejections"].sum()) if len(rejections) else 0,
        calls=records(calls))


def scored_rules(rules: pd.DataFrame) -> pd.DataFrame:
    """The rules table's rows that have a result (not ``insufficient_history``: marts built
    before the status existed have every row scored)."""
    if "status" not in rules.columns:
        return rules
    return rules[rules["status"] != INSUFFICIENT_HISTORY]


def insufficient_rules(rules: pd.DataFrame) -> list[dict[str, object]]:
    """Per rule without enough history on some asset: how many assets, which (at most five
    named), and the bars it needs; the report says why those cells are empty."""
    if "status" not in rules.columns:
        return []
    short = rules[rules["status"] == INSUFFICIENT_HISTORY]
    out = []
    for rule, group in short.sort_values(["rule", "symbol"]).groupby("rule", sort=True):
        symbols = [str(s) for s in group["symbol"]]
        out.append({"rule": str(rule), "assets": len(symbols),
                    "symbols": ", ".join(symbols[:5]) + (", ..." if len(symbols) > 5 else ""),
                    "needed": int(group["needed_bars"].max()),
                    "fewest": int(group["history_bars"].min())})
    return out


def _luck_rows(luck: pd.DataFrame, rules: pd.DataFrame) -> list[dict[str, object]]:
    rows = []
    rules = scored_rules(rules)
    for r in luck.sort_values("symbol").itertuples():
        mine = rules[(rules["symbol"] == r.symbol) & (rules["kind"] == "rule")]
        best = mine.loc[mine["total_return"].idxmax()] if len(mine) else None
        hold = mine.loc[mine["rule"] == "buy_and_hold", "total_return"]
        rows.append({**r._asdict(), "buy_and_hold": float(hold.iloc[0]) if len(hold) else None,
                     "best_rule": None if best is None else best["rule"],
                     "best_return": None if best is None else float(best["total_return"]),
                     "rules_over_ceiling": int(mine["beats_luck_ceiling"].eq(True).sum())})
    return rows


def _history(row: Mapping[str, object]) -> str | None:
    """A rules-table row's history cell: why it has no result, or nothing."""
    if row.get("status") != INSUFFICIENT_HISTORY:
        return None
    return (f"insufficient: {int(row['history_bars'])} bars before the season, "  # type: ignore[call-overload]
            f"the rule needs {int(row['needed_bars'])}")  # type: ignore[call-overload]


def _rule_tables(rules: pd.DataFrame) -> list[tuple[str, list[dict[str, object]]]]:
    """Per asset, its reference rules (rules before the players' quantiles, best first; the
    rules without enough history last, saying so)."""
    groups = rules.sort_values(["symbol", "kind", "total_return"], ascending=[True, False, False],
                               na_position="last").groupby("symbol")
    out = []
    for symbol, group in groups:
        rows = records(group)
        for row in rows:
            row["history"] = _history(row)
        out.append((str(symbol), rows))
    return out


def _correlation_matrix(corr: pd.DataFrame) -> pd.DataFrame:
    wide = corr.pivot(index="symbol_a", columns="symbol_b", values="correlation")
    labels = list(wide.index)
    return wide.reindex(index=labels, columns=labels)


def _mean_correlation(wide: pd.DataFrame) -> float:
    off = wide.to_numpy(dtype=float)[~np.eye(len(wide), dtype=bool)]
    return float(np.nanmean(off)) if off.size else float("nan")


def _cells(wide: pd.DataFrame) -> list[list[float | None]]:
    return [[None if pd.isna(v) else float(v) for v in row] for row in wide.to_numpy()]


def _curves(frame: pd.DataFrame, value: str) -> dict[str, pd.Series]:
    """Each contestant's ``value`` by cycle, its missing values left out."""
    return {str(name): g.set_index("cycle_at")[value].astype(float).dropna()
            for name, g in frame.sort_values("cycle_at").groupby("contestant", sort=True)}


def _charts(marts: Mapping[str, pd.DataFrame], board: pd.DataFrame,
            players: int) -> dict[str, Markup]:
    """Every chart of the report by name (``rules`` and ``correlations`` only when there is
    data for them). They are plots.py's SVG, whose text is escaped there: markup the page
    inserts as it is, so it is marked safe here, once."""
    band = marts["zero_skill_band"].sort_values("cycle_at")
    bench = marts["benchmark_equity"].sort_values("cycle_at")
    benchmarks = {BENCHMARK_LABELS.get(str(name), str(name)):
                  [(t, float(v)) for t, v in zip(g["cycle_at"], g["equity"], strict=True)]
                  for name, g in bench.groupby("benchmark", sort=True)}
    rows = board.dropna(subset=["rank_score"])
    costed = board.dropna(subset=["cost_usd", "total_return"])
    svg = {
        "equity": equity_chart(_curves(marts["equity_daily"], "equity"), benchmarks=benchmarks,
                               band=[(r.cycle_at, r.q05, r.q50, r.q95) for r in band.itertuples()],
                               players=players, start_cash=START_CASH),
        "drawdowns": drawdown_chart(_curves(marts["equity_daily"], "drawdown")),
        "activity": scatter_chart([(str(r.contestant), float(r.trades), float(r.rank_score))
                                   for r in rows.itertuples()],
                                  title="Activity is not alpha: fills against rank score",
                                  x_label="fills over the season", y_label="rank score"),
        "cost": scatter_chart([(str(r.contestant), float(r.cost_usd), float(r.total_return))
                               for r in costed.itertuples()],
                              title="Model cost against return",
                              x_label="cost of model calls, USD", y_label="return",
                              y_percent=True),
    }
    rules = scored_rules(marts["reference_rules"])  # a rule without history is no cell
    if not rules.empty:
        wide = rules.pivot_table(index="symbol", columns="rule", values="rank_score",
                                 aggfunc="first")
        svg["rules"] = heatmap_chart(list(wide.index), list(wide.columns), _cells(wide),
                                     title="Reference rules: rank score per asset and rule",
                                     value_format="{:.1f}", centre=MEDIAN_RANK_SCORE,
                                     colorbar_label="rank score")
    if not marts["asset_correlations"].empty:
        wide = _correlation_matrix(marts["asset_correlations"])
        labels = list(wide.index)
        svg["correlations"] = heatmap_chart(labels, labels, _cells(wide),
                                            title="Correlation of daily returns",
                                            value_format="{:.2f}", centre=0.0,
                                            colorbar_label="correlation", limit=1.0)
    return {name: Markup(chart) for name, chart in svg.items()}


def conventions(cycles: int) -> Markup:
    """How the numbers are computed, and the arena's limits, in plain words (HTML)."""
    return macro("conventions.html.j2", "conventions")(
        cycles, periods_per_year=PERIODS_PER_YEAR, risk_free_rate=RISK_FREE_RATE,
        short_season=SHORT_SEASON)


def _market(board: pd.DataFrame) -> str:
    """The season's market label (the leaderboard's ``market``: ``SYNTHETIC`` or a real provider).
    Refuses rather than render a report that cannot say whether its prices are real."""
    labels = set(board["market"]) if "market" in board.columns else set()
    if len(labels) != 1 or board["market"].isna().any():
        raise ReportError(f"the leaderboard names no single market ({sorted(map(str, labels))}): "
                          "rebuild the marts (arena replay or arena demo)")
    return str(labels.pop())


def season_report(marts: Mapping[str, pd.DataFrame], *, title: str = "Season report",
                  storage: str | None = None, daily: Mapping[str, str] | None = None,
                  fragments: Fragments | None = None) -> str:
    """The season report's HTML from the marts; a SYNTHETIC season opens with a banner.
    ``storage``: the last persistence verdict of a served season (a closing section);
    ``daily``: each day's ("YYYY-MM-DD") daily report, as a link from this page;
    ``fragments``: the rows and cycles kept from the last rendering (the page is the same
    with or without them)."""
    fragments = fragments if fragments is not None else Fragments()
    board = marts["leaderboard"]
    if board.empty:
        raise ReportError("the leaderboard is empty: no contestant played this season")
    missing = [m for m in ("decisions", "benchmark_equity") if m not in marts]
    missing += [f"leaderboard.{c}" for c in ("outside_entrant", "first_cycle_at", "role")
                if c not in board]
    if missing:
        raise ReportError(f"the marts lack {', '.join(missing)}: rebuild them (arena season "
                          "publish, or arena replay)")
    board = sorted_board(board)
    market = _market(board)
    daily = dict(daily or {})
    links = Links(daily, marts["decisions"])
    equity = marts["equity_daily"]
    trades = marts["trades"]
    held = open_positions(marts)
    band = marts["zero_skill_band"]
    players = int(band["players"].iloc[0]) if len(band) else 0
    colours = series_colours(list(board["contestant"]))
    rejections = marts["rejections"]
    by_code = (rejections.groupby(["contestant", "code"], as_index=False)["rejections"].sum()
               if len(rejections) else rejections)
    rules = marts["reference_rules"]
    corr = marts["asset_correlations"]
    board = board.assign(entry=entry(board))
    (_, rivals), (_, rulers) = bands(board)
    cycles = _cycles(marts["decisions"], links, fragments)
    rows_of = _ByContestant(marts)
    own_trade_columns = _trade_columns(links, who=False)

    def sections(band: pd.DataFrame) -> list[_Contestant]:
        return [_contestant(str(name), marts, held, colours[str(name)], cycles.get(str(name), []),
                            own_trade_columns, fragments, rows_of)
                for name in band["contestant"]]

    return render(
        "season.html.j2",
        title=title, market=market,
        banner=market_note(market) if market == SYNTHETIC_MARKET else "",
        start=equity["cycle_at"].min(), end=equity["cycle_at"].max(),
        cycles=int(equity["cycle_at"].nunique()), short_season=SHORT_SEASON,
        leader=records(rivals.head(1))[0] if len(rivals) else None,
        best_ruler=records(rulers.head(1))[0] if len(rulers) else None,
        fills=int(board["trades"].sum()),
        closed=int((trades["status"] == "closed").sum()),
        still_open=int((trades["status"] == "open").sum()),
        board=records(rivals), board_columns=_leaderboard_columns(board),
        ruler_board=records(rulers), ruler_columns=_leaderboard_columns(board, RULER),
        band_titles=BAND_TITLES,
        replicates=records(marts["replicates"].sort_values("replicate_of"))
        if "replicates" in marts else [],  # marts built before replicates have none
        replicate_columns=REPLICATES, replicates_title=REPLICATES_TITLE,
        charts=_charts(marts, board, players), players=players,
        key_trades=_with_why(_key_trades(trades)), trade_columns=_trade_columns(links),
        held=_with_why(held), held_columns=_open_columns(links),
        unrealised=float(held["unrealised_pnl"].sum()) if len(held) else 0.0,
        contestants=sections(rivals), rulers=sections(rulers),
        person_columns=person_columns(own_trade_columns),
        luck=_luck_rows(marts["luck_ceiling"], rules), luck_columns=LUCK_COLUMNS,
        rule_tables=_rule_tables(rules) if not rules.empty else [], rule_columns=RULE_COLUMNS,
        short_rules=insufficient_rules(rules),
        mean_correlation=None if corr.empty else _mean_correlation(_correlation_matrix(corr)),
        model_calls=records(marts["model_calls"].sort_values("contestant")),
        model_call_columns=MODEL_CALL_COLUMNS,
        rejection_codes=records(by_code) if len(by_code) else [],
        rejection_code_columns=REJECTION_CODE_COLUMNS,
        days=sorted(daily.items()), storage=storage,
        periods_per_year=PERIODS_PER_YEAR, risk_free_rate=RISK_FREE_RATE)


def daily_pages(lake: Lake, report: Path) -> dict[str, str]:
    """Render every daily report of the lake as HTML beside its Markdown (each linking back to
    the lake's own season report); each day's page as a link relative to ``report``'s folder
    (the lake's season report, or one written elsewhere with ``--out``).

    A page is rendered again only when its Markdown, its link back or the reports' code changed
    since it was written (``PAGES_FILE`` keeps each page's digest), so a publication renders
    the new day, not the whole season."""
    folder = (lake.root / DAILY_DIR).resolve()
    home = (lake.root / "reports" / SEASON_FILE).resolve()
    manifest = folder / PAGES_FILE
    try:
        written = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        written = {}
    written = written if isinstance(written, dict) else {}
    digests: dict[str, str] = {}
    out: dict[str, str] = {}
    for md in sorted(folder.glob("*.md")):
        page_path = md.with_suffix(".html")
        back = os.path.relpath(home, page_path.parent)
        text = md.read_text(encoding="utf-8")
        digest = hashlib.sha256("\0".join((templates_digest(), back, text)).encode()).hexdigest()
        if written.get(md.stem) != digest or not page_path.is_file():
            write_text(page_path, render_daily_html(text, back=back))
        digests[md.stem] = digest
        out[md.stem] = Path(os.path.relpath(page_path, report.resolve().parent)).as_posix()
    if digests != written:
        write_text(manifest, json.dumps(digests, indent=0, sort_keys=True))
    return out


def write_season_report(lake: Lake, path: Path | None = None, *, title: str = "Season report"
                        ) -> Path:
    """Write the season report (and each daily report's HTML page) from the lake's published
    marts; returns the report's path."""
    boot = last_boot(lake)
    own = lake.root / "reports" / SEASON_FILE
    target = path or own
    marts = read_marts(lake)
    # the lake's own report keeps its rendered rows and cycles for the next publication
    fragments = Fragments(own.parent / FRAGMENTS_FILE
                          if target.resolve() == own.resolve() else None)
    text = season_report(marts, title=title, storage=None if boot is None else boot.describe(),
                         daily=daily_pages(lake, target.resolve()), fragments=fragments)
    write_text(target, text)
    fragments.save()
    return target


__all__: Sequence[str] = ("ReportError", "read_marts", "season_report", "write_season_report")
