"""The season report: one self-contained HTML file (charts as inline SVG, tables, no script and
no request outside the file) read from the published marts (``<lake>/marts/*.parquet``, see
:mod:`arena.pipeline.warehouse`), so every number in it is a number an analyst can query.

Every trade links to the decision that opened it (the decision's JSON and the answer's reasoning,
in its contestant's section) and to the daily report of the day it opened and closed; the daily
reports are rendered as HTML beside their Markdown and link back here.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from arena.data.lake import Lake, write_text
from arena.data.persistence import last_boot
from arena.data.providers import SYNTHETIC_MARKET, market_note
from arena.reporting.daily import DAILY_DIR, answer_reasoning, render_daily_html
from arena.reporting.layout import Column, anchor_id, cell, esc, fmt, page, records, table
from arena.reporting.plots import (
    drawdown_chart,
    equity_chart,
    heatmap_chart,
    scatter_chart,
    series_colours,
)

SEASON_FILE = "season.html"
TOP_TRADES = 15
START_CASH = 10_000.0
# dbt_project.yml's vars, quoted in the conventions (a test keeps them equal)
PERIODS_PER_YEAR, RISK_FREE_RATE = 365, 0.0
# below this many daily returns an annualised Sharpe or a drawdown says little
SHORT_SEASON = 20
MEDIAN_RANK_SCORE = float(-np.log10(0.5))  # a result at the zero-skill median: the heatmap's white
BENCHMARK_LABELS = {"BTC": "BTC (buy and hold)", "SPY": "SPY (buy and hold)",
                    "universe": "universe (equal weight)"}


class ReportError(RuntimeError):
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


class _Links:
    """The report's links: to decisions (anchors in this page) and to daily reports (files)."""

    def __init__(self, daily: Mapping[str, str], decisions: pd.DataFrame) -> None:
        self.daily = daily  # "YYYY-MM-DD" -> href of that day's HTML report
        self.known = {decision_anchor(r.contestant, r.cycle_at, r.round, r.decision_index)
                      for r in decisions.itertuples()} if len(decisions) else set()

    def day(self, at: object) -> str | None:
        if at is None or pd.isna(at):
            return None
        return self.daily.get(f"{pd.Timestamp(at):%Y-%m-%d}")

    def decision(self, contestant: object, at: object, round_: object, index: object
                 ) -> str | None:
        if any(v is None or pd.isna(v) for v in (at, round_, index)):
            return None
        anchor = decision_anchor(contestant, at, round_, index)
        return f"#{anchor}" if anchor in self.known else None


# ----------------------------------------------------------------------------- sections
LEADERBOARD = [
    Column("place", "#", "int"), Column("contestant", "contestant"),
    Column("total_return", "return", "return"), Column("zero_skill_percentile", "luck pct", "share"),
    Column("rank_score", "rank score", "score"), Column("sharpe", "Sharpe", "score"),
    Column("max_drawdown", "max DD", "drawdown"), Column("round_trips", "closed trips", "int"),
    Column("win_rate", "win rate", "share"), Column("trades", "fills", "int"),
    Column("excess_vs_btc", "vs BTC", "return"), Column("excess_vs_spy", "vs SPY", "return"),
    Column("excess_vs_universe", "vs universe", "return"), Column("cost_usd", "calls $", "usd"),
]


def entry(board: pd.DataFrame) -> pd.Series:
    """How each contestant entered: ``outside entrant`` (through arena mcp) or ``roster``, and
    ``from <day>`` when its window started after the season's first cycle."""
    first = pd.to_datetime(board["first_cycle_at"], utc=True)
    kind = pd.Series(np.where(board["outside_entrant"].astype(bool), "outside entrant", "roster"),
                     index=board.index)
    late = first > first.min()
    return kind + np.where(late, ", from " + first.dt.strftime("%Y-%m-%d"), "")


def _leaderboard(board: pd.DataFrame) -> str:
    columns = [c if c.key != "contestant" else
               Column("contestant", "contestant",
                      href=lambda r: f"#{contestant_anchor(r['contestant'])}")
               for c in LEADERBOARD]
    board = board.assign(entry=entry(board))
    if (board["entry"] != "roster").any():  # someone entered from outside or late: say who
        columns.insert(2, Column("entry", "entry"))
    return table(records(board), columns) + (
        '<p class="note">Luck pct: the contestant\'s place among the arena\'s zero-skill players '
        "(random valid decisions under the same rules); rank score = -log10(1 - luck pct), so 2.0 "
        "means luck does this once in a hundred seasons. Closed trips: round trips opened and "
        "closed; win rate counts those only (none closed: –, see the open positions). Fills: "
        "every execution (opens, adds, closes, automatic ones). Excess returns are over buy and "
        "hold of BTC, SPY and the equal-weighted universe from the first to the last cycle.</p>")


def _curves(frame: pd.DataFrame, value: str) -> dict[str, list[tuple[pd.Timestamp, float]]]:
    return {str(name): [(t, float(v)) for t, v in zip(g["cycle_at"], g[value], strict=True)
                        if not pd.isna(v)]
            for name, g in frame.sort_values("cycle_at").groupby("contestant", sort=True)}


def _equity(marts: Mapping[str, pd.DataFrame]) -> str:
    band = marts["zero_skill_band"].sort_values("cycle_at")
    bench = marts["benchmark_equity"].sort_values("cycle_at")
    benchmarks = {BENCHMARK_LABELS.get(str(name), str(name)):
                  [(t, float(v)) for t, v in zip(g["cycle_at"], g["equity"], strict=True)]
                  for name, g in bench.groupby("benchmark", sort=True)}
    players = int(band["players"].iloc[0]) if len(band) else 0
    chart = equity_chart(_curves(marts["equity_daily"], "equity"), benchmarks=benchmarks,
                         band=[(r.cycle_at, r.q05, r.q50, r.q95) for r in band.itertuples()],
                         players=players, start_cash=START_CASH)
    return chart + (
        f'<p class="note">Equity after each cycle. The shaded band is where {players:,} '
        "zero-skill players who play the arena's own rules (random valid decisions, the same "
        "validator, fees and invalidation monitor) ended each day, 5th to 95th percentile, with "
        "their median dashed; the grey lines are $10,000 held in BTC, in SPY and in the "
        "equal-weighted universe from the first cycle.</p>")


def _drawdowns(marts: Mapping[str, pd.DataFrame]) -> str:
    return drawdown_chart(_curves(marts["equity_daily"], "drawdown")) + (
        '<p class="note">The fall of each contestant\'s equity from its highest value so far '
        "(the start counts as a peak).</p>")


def _activity(board: pd.DataFrame) -> str:
    rows = board.dropna(subset=["rank_score"])
    activity = scatter_chart([(str(r.contestant), float(r.trades), float(r.rank_score))
                              for r in rows.itertuples()],
                             title="Activity is not alpha: fills against rank score",
                             x_label="fills over the season", y_label="rank score")
    costed = board.dropna(subset=["cost_usd", "total_return"])
    cost = scatter_chart([(str(r.contestant), float(r.cost_usd), float(r.total_return))
                          for r in costed.itertuples()],
                         title="Model cost against return", x_label="cost of model calls, USD",
                         y_label="return", y_percent=True)
    return activity + cost + (
        '<p class="note">More trading buys nothing by itself: a contestant high on the left chart '
        "and far right traded a lot and was rewarded; far right and low, it paid fees for "
        "noise. House agents cost nothing to call.</p>")


def _trade_columns(links: _Links, *, who: bool = True) -> list[Column]:
    columns = [
        Column("symbol", "asset"), Column("side", "side"),
        Column("opened_at", "opened (UTC)", "time", href=lambda r: links.day(r["opened_at"])),
        Column("closed_at", "closed (UTC)", "time", href=lambda r: links.day(
            r["exit_window_end"] if r.get("closed_by") == "automatic" else r["exit_cycle_at"])),
        Column("closed_by", "closed by"), Column("entry_price", "entry", "price"),
        Column("exit_price", "exit", "price"), Column("net_pnl", "net P&L", "pnl"),
        Column("thesis", "thesis", wrap=True),
        Column("why", "reasoning", href=lambda r: links.decision(
            r["contestant"], r["entry_cycle_at"], r["entry_round"], r["entry_decision_index"])),
    ]
    return ([Column("contestant", "contestant",
                    href=lambda r: f"#{contestant_anchor(r['contestant'])}")] if who else []) \
        + columns


def _with_why(frame: pd.DataFrame) -> list[dict[str, object]]:
    rows = records(frame)
    for row in rows:
        row["why"] = "decision" if row.get("entry_cycle_at") is not None else None
    return rows


def _key_trades(trades: pd.DataFrame, links: _Links) -> str:
    closed = trades[trades["status"] == "closed"]
    key = closed.reindex(closed["net_pnl"].abs().sort_values(ascending=False).index) \
        .head(TOP_TRADES)
    return table(_with_why(key), _trade_columns(links), empty="no closed trade") + (
        f'<p class="note">The {len(key)} closed round trips with the largest net P&L either way, '
        f"of {len(closed)} closed and {int((trades['status'] == 'open').sum())} still open. "
        "A time links to that day's daily report; \"decision\" to the decision that opened the "
        "trade, its JSON and the answer's reasoning.</p>")


OPEN_COLUMNS = [
    Column("symbol", "asset"), Column("side", "side"), Column("quantity", "quantity", "num"),
    Column("entry_price", "entry", "price"), Column("mark_price", "last mark", "price"),
    Column("unrealised_pnl", "unrealised P&L", "pnl"), Column("thesis", "thesis", wrap=True),
]


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


def _open_positions(held: pd.DataFrame, links: _Links) -> str:
    columns = [Column("contestant", "contestant",
                      href=lambda r: f"#{contestant_anchor(r['contestant'])}"),
               Column("opened_at", "opened (UTC)", "time", href=lambda r: links.day(r["opened_at"])),
               *OPEN_COLUMNS,
               Column("why", "reasoning", href=lambda r: links.decision(
                   r["contestant"], r["entry_cycle_at"], r["entry_round"],
                   r["entry_decision_index"]))]
    total = float(held["unrealised_pnl"].sum()) if len(held) else 0.0
    return table(_with_why(held), columns, empty="no open position at the end") + (
        f'<p class="note">{len(held)} positions open after each contestant\'s last cycle, '
        f"marked at that cycle's price: {fmt(total, 'pnl')} USD unrealised in all. Their P&L is "
        "in the returns above but in no closed trip.</p>")


DECISION_COLUMNS = [Column("round", "round"), Column("action", "action"),
                    Column("symbol", "asset"), Column("accepted", "accepted"),
                    Column("thesis", "thesis", wrap=True)]


def _decisions(mine: pd.DataFrame, links: _Links) -> str:
    """The contestant's decisions, cycle by cycle: each row an anchor (a trade links to it),
    the decision's JSON and the answer's reasoning under it."""
    if mine.empty:
        return "<p>No decision recorded.</p>"
    rows = []
    order = mine.assign(_round=mine["round"].map({"answer": 0, "repair": 1}).fillna(2))
    for (at, _, round_), group in order.sort_values(["cycle_at", "_round", "decision_index"]) \
            .groupby(["cycle_at", "_round", "round"], sort=True):
        day = links.day(at)
        stamp = fmt(at, "time")
        head = f'<a href="{esc(day)}">{esc(stamp)}</a>' if day else esc(stamp)
        reasoning = answer_reasoning(group["answer_text"].dropna().iloc[0]) \
            if group["answer_text"].notna().any() else None
        rows.append(f'<tr class="cycle"><th colspan="{len(DECISION_COLUMNS) + 1}" scope="rowgroup">'
                    f"{head} UTC, {esc(round_)}" + (f"<blockquote>{esc(reasoning)}</blockquote>"
                                                    if reasoning else "") + "</th></tr>")
        cycle = group.drop(columns="_round")
        for r in records(cycle):
            anchor = decision_anchor(r["contestant"], r["cycle_at"], r["round"],
                                     r["decision_index"])
            decision = r.get("decision")
            try:
                pretty = json.dumps(json.loads(str(decision)), indent=2, ensure_ascii=False)
            except ValueError:
                pretty = str(decision)
            r["accepted"] = {True: "yes", False: "rejected"}.get(r.get("accepted"), "–")
            cells = "".join(cell(r.get(c.key), c.kind, wrap=c.wrap) for c in DECISION_COLUMNS)
            rows.append(f'<tr id="{anchor}">{cells}<td><details><summary>JSON</summary>'
                        f'<pre class="json">{esc(pretty)}</pre></details></td></tr>')
    head = "".join(f"<th scope=\"col\">{esc(c.header)}</th>" for c in DECISION_COLUMNS)
    return (f'<table class="data decisions"><thead><tr>{head}<th scope="col">decision</th></tr>'
            f"</thead><tbody>\n" + "\n".join(rows) + "\n</tbody></table>")


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


def _stats(stats: Mapping[str, object]) -> str:
    """A contestant's numbers as a grid of labelled values (wraps, never scrolls)."""
    return '<dl class="stats">' + "".join(
        f"<div><dt>{esc(c.header)}</dt>{cell(stats.get(c.key), c.kind, tag='dd')}</div>"
        for c in STAT_COLUMNS) + "</dl>"


def _contestant(name: str, marts: Mapping[str, pd.DataFrame], held: pd.DataFrame,
                links: _Links, colour: str) -> str:
    board = marts["leaderboard"]
    row = records(board[board["contestant"] == name])[0]
    entered = entry(board)[board["contestant"] == name].iloc[0]
    trades = marts["trades"][marts["trades"]["contestant"] == name]
    closed = trades[trades["status"] == "closed"]
    calls = marts["model_calls"][marts["model_calls"]["contestant"] == name]
    stats = {**row, "won": int((closed["net_pnl"] > 0).sum()),
             "lost": int((closed["net_pnl"] <= 0).sum()),
             "mean_holding_days": float(closed["holding_days"].mean()) if len(closed) else None,
             "open": int((held["contestant"] == name).sum()),
             "fees": float(trades["fees"].sum()) if len(trades) else 0.0}
    rejections = marts["rejections"][marts["rejections"]["contestant"] == name]
    rejections = rejections.assign(symbols=rejections["symbols"].map(
        lambda v: v if v is None or isinstance(v, str) else ", ".join(map(str, v))))
    decisions = marts["decisions"][marts["decisions"]["contestant"] == name]
    trade_rows = trades.sort_values(["opened_at", "symbol"])
    parts = [
        f'<h3 id="{contestant_anchor(name)}"><span class="swatch" style="color:{colour}">■</span>'
        f" {esc(name)} <small>#{esc(fmt(row['place'], 'int'))}, {esc(entered)}</small></h3>",
        _stats(stats),
        f"<details><summary>Trades ({len(trades)}: {len(closed)} closed)</summary>"
        + table(_with_why(trade_rows), _trade_columns(links, who=False), empty="no trade")
        + "</details>",
        f"<details><summary>Decisions, cycle by cycle ({len(decisions)})</summary>"
        + _decisions(decisions, links) + "</details>",
        f"<details><summary>Rejections ({int(rejections['rejections'].sum()) if len(rejections) else 0})"
        "</summary>" + table(records(rejections.sort_values("cycle_at")), REJECTION_COLUMNS,
                             empty="no decision was rejected") + "</details>",
        "<details><summary>Calls and cost</summary>"
        + table(records(calls), CALL_COLUMNS, empty="no model call") + "</details>",
    ]
    return "\n".join(parts)


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
]


def _luck_rows(luck: pd.DataFrame, rules: pd.DataFrame) -> list[dict[str, object]]:
    rows = []
    for r in luck.sort_values("symbol").itertuples():
        mine = rules[(rules["symbol"] == r.symbol) & (rules["kind"] == "rule")]
        best = mine.loc[mine["total_return"].idxmax()] if len(mine) else None
        hold = mine.loc[mine["rule"] == "buy_and_hold", "total_return"]
        rows.append({**r._asdict(), "buy_and_hold": float(hold.iloc[0]) if len(hold) else None,
                     "best_rule": None if best is None else best["rule"],
                     "best_return": None if best is None else float(best["total_return"]),
                     "rules_over_ceiling": int(mine["beats_luck_ceiling"].sum())})
    return rows


def _rules(rules: pd.DataFrame) -> str:
    if rules.empty:
        return "<p>No reference rules: the luck tables were not built.</p>"
    wide = rules.pivot_table(index="symbol", columns="rule", values="rank_score", aggfunc="first")
    chart = heatmap_chart(list(wide.index), list(wide.columns),
                          [[None if pd.isna(v) else float(v) for v in row]
                           for row in wide.to_numpy()],
                          title="Reference rules: rank score per asset and rule",
                          value_format="{:.1f}", centre=MEDIAN_RANK_SCORE,
                          colorbar_label="rank score")
    groups = rules.sort_values(["symbol", "kind", "total_return"],
                               ascending=[True, False, False]).groupby("symbol")
    details = "".join(f'<h3 id="rules-{anchor_id(str(symbol))}">{esc(symbol)}</h3>'
                      f"{table(records(group), RULE_COLUMNS)}" for symbol, group in groups)
    return chart + (
        '<p class="note">Each textbook rule played on each asset\'s actual path with the '
        "arena's costs, scored like a contestant against that asset's zero-skill players: a "
        "rank score of 2 or more is a result luck reaches once in a hundred tries.</p>"
        f"<details><summary>The table of every asset ({groups.ngroups})</summary>{details}"
        "</details>")


def _correlations(corr: pd.DataFrame) -> str:
    if corr.empty:
        return "<p>No correlations: the lake holds no daily bars for the season.</p>"
    wide = corr.pivot(index="symbol_a", columns="symbol_b", values="correlation")
    labels = list(wide.index)
    wide = wide.reindex(index=labels, columns=labels)
    off = wide.to_numpy(dtype=float)[~np.eye(len(labels), dtype=bool)]
    mean = float(np.nanmean(off)) if off.size else float("nan")
    chart = heatmap_chart(labels, labels, [[None if pd.isna(v) else float(v) for v in row]
                                           for row in wide.to_numpy()],
                          title="Correlation of daily returns", value_format="{:.2f}",
                          centre=0.0, colorbar_label="correlation", limit=1.0)
    return chart + (f'<p class="note">Mean pairwise correlation {fmt(mean, "score")}: daily '
                    "close-to-close returns over the 90 days up to the season's end; a season's "
                    "assets should be weakly correlated.</p>")


MODEL_CALL_COLUMNS = [
    Column("contestant", "contestant"), Column("cycles", "cycles", "int"),
    Column("traded", "traded", "int"), Column("no_trade", "no trade", "int"),
    Column("forfeited", "forfeited", "int"), Column("calls", "calls", "int"),
    Column("tokens_in", "tokens in", "int"), Column("tokens_out", "tokens out", "int"),
    Column("cost_usd", "cost", "usd"), Column("mean_latency_s", "mean latency s", "score"),
    Column("retries", "retries", "int"), Column("rejections", "rejections", "int"),
    Column("repair_rounds", "repairs", "int"),
]


def conventions(cycles: int) -> str:
    """How the numbers are computed, and the arena's limits, in plain words."""
    items = [
        ("Return", "Equity after the last cycle over the $10,000 start, minus one. Equity marks "
         "every open position at the cycle's price."),
        ("Sharpe", f"The mean daily return over its standard deviation, annualised with "
         f"{PERIODS_PER_YEAR} periods a year (the arena values every calendar day) and a "
         f"risk-free rate of {RISK_FREE_RATE:.0%}."),
        ("Max drawdown", "The deepest fall of equity from its highest value so far; the start "
         "counts as a peak, so a contestant that only lost has a drawdown equal to its loss."),
        ("Trades", "\"Fills\" counts every execution (opens, adds, closes, automatic closes); "
         "\"closed trips\" counts positions opened and closed again, the only ones a win rate "
         "can judge."),
        ("Luck percentile and rank score", "Where the contestant's return falls among "
         "thousands of zero-skill players who play the same rules at random; the rank score is "
         "-log10(1 - percentile): 1 is what one lucky player in ten reaches, 2 one in a hundred."),
        ("Limits", "Simulated capital; every order fills at the one price of its cycle, with "
         "fees and no slippage; the invalidation monitor looks every 15 minutes, so a close can "
         "land past its level; one decision window a day; each contestant's benchmark is its own "
         "statement; nothing here is investment advice."),
    ]
    caution = ""
    if cycles < SHORT_SEASON:
        caution = (f'<p class="caution">This season has {cycles} cycles, so {max(cycles - 1, 0)} '
                   "daily returns: an annualised Sharpe ratio or a win rate over so few "
                   "observations means little. Read the luck percentile, which is judged on the "
                   "same days.</p>")
    return caution + '<dl class="conventions">' + "".join(
        f"<dt>{esc(term)}</dt><dd>{esc(text)}</dd>" for term, text in items) + "</dl>"


def _market(board: pd.DataFrame) -> str:
    """The season's market label (the leaderboard's ``market``: ``SYNTHETIC`` or a real provider).
    Refuses rather than render a report that cannot say whether its prices are real."""
    labels = set(board["market"]) if "market" in board.columns else set()
    if len(labels) != 1 or board["market"].isna().any():
        raise ReportError(f"the leaderboard names no single market ({sorted(map(str, labels))}): "
                          "rebuild the marts (arena replay or arena demo)")
    return str(labels.pop())


def season_report(marts: Mapping[str, pd.DataFrame], *, title: str = "Season report",
                  storage: str | None = None, daily: Mapping[str, str] | None = None) -> str:
    """The season report's HTML from the marts; a SYNTHETIC season opens with a banner.
    ``storage``: the last persistence verdict of a served season (a closing section);
    ``daily``: each day's ("YYYY-MM-DD") daily report, as a link from this page."""
    board = marts["leaderboard"].sort_values(["place", "contestant"])
    if board.empty:
        raise ReportError("the leaderboard is empty: no contestant played this season")
    missing = [m for m in ("decisions", "benchmark_equity") if m not in marts]
    missing += [f"leaderboard.{c}" for c in ("outside_entrant", "first_cycle_at")
                if c not in board]
    if missing:
        raise ReportError(f"the marts lack {', '.join(missing)}: rebuild them (arena season "
                          "publish, or arena replay)")
    market = _market(board)
    daily = dict(daily or {})
    links = _Links(daily, marts["decisions"])
    equity = marts["equity_daily"]
    start, end = equity["cycle_at"].min(), equity["cycle_at"].max()
    cycles = int(equity["cycle_at"].nunique())
    trades = marts["trades"]
    held = open_positions(marts)
    leader = board.iloc[0]
    summary = (
        f"<p><strong>{esc(leader['contestant'])}</strong> leads after {cycles} cycles "
        f"({fmt(start, 'date')} to {fmt(end, 'date')}) with {fmt(leader['total_return'], 'return')}"
        f", at the {fmt(leader['zero_skill_percentile'], 'share')} percentile of the zero-skill "
        f"players (rank score {fmt(leader['rank_score'], 'score')}). {len(board)} contestants, "
        f"{int(board['trades'].sum())} fills, {int((trades['status'] == 'closed').sum())} closed "
        f"round trips, {len(held)} positions open at the end.</p>")
    if cycles < SHORT_SEASON:
        summary += (f'<p class="caution">A short season ({cycles} cycles): see '
                    '<a href="#conventions-and-limits">conventions and limits</a> before reading '
                    "the Sharpe ratios and win rates.</p>")
    colours = series_colours(list(board["contestant"]))
    people = "\n".join(_contestant(str(name), marts, held, links, colours[str(name)])
                       for name in board["contestant"])
    rejections = marts["rejections"]
    by_code = (rejections.groupby(["contestant", "code"], as_index=False)["rejections"].sum()
               if len(rejections) else rejections)
    days = "".join(f'<li><a href="{esc(href)}">{esc(day)}</a></li>'
                   for day, href in sorted(daily.items()))
    luck = marts["luck_ceiling"]
    sections = [
        ("Summary", summary),
        ("Leaderboard", _leaderboard(board)),
        ("Equity against the benchmarks", _equity(marts)),
        ("Drawdowns", _drawdowns(marts)),
        ("Activity and cost", _activity(board)),
        ("Key trades", _key_trades(trades, links)),
        ("Open positions at the end", _open_positions(held, links)),
        ("Contestants", people),
        ("Luck ceiling per asset", table(_luck_rows(luck, marts["reference_rules"]), LUCK_COLUMNS)
         + '<p class="note">Per asset: zero-skill players with random positions on the season\'s '
           "actual path, same scorer and costs. Compare within an asset only.</p>"),
        ("Reference rules", _rules(marts["reference_rules"])),
        ("Asset correlations", _correlations(marts["asset_correlations"])),
        ("Model calls", table(records(marts["model_calls"].sort_values("contestant")),
                              MODEL_CALL_COLUMNS)),
        ("Rejections", table(records(by_code), [Column("contestant", "contestant"),
                                                Column("code", "reason code"),
                                                Column("rejections", "rejections", "int")])
         if len(by_code) else "<p>No decision was rejected this season.</p>"),
        ("Daily reports", f'<ol class="days">{days}</ol>' if days else
         "<p>No daily report was written.</p>"),
        ("Conventions and limits", conventions(cycles)),
    ]
    if storage is not None:
        sections.append(("Storage", f"<p>{html.escape(storage)}</p>"))
    return page(title, sections,
                subtitle=f"{fmt(start, 'date')} to {fmt(end, 'date')}, {cycles} cycles, market: "
                         f"{market}",
                banner=market_note(market) if market == SYNTHETIC_MARKET else "")


def daily_pages(lake: Lake, report: Path) -> dict[str, str]:
    """Render every daily report of the lake as HTML beside its Markdown (each linking back to
    the lake's own season report); each day's page as a link relative to ``report``'s folder
    (the lake's season report, or one written elsewhere with ``--out``)."""
    folder = (lake.root / DAILY_DIR).resolve()
    home = (lake.root / "reports" / SEASON_FILE).resolve()
    out: dict[str, str] = {}
    for md in sorted(folder.glob("*.md")):
        page_path = md.with_suffix(".html")
        back = os.path.relpath(home, page_path.parent)
        write_text(page_path, render_daily_html(md.read_text(encoding="utf-8"), back=back))
        out[md.stem] = Path(os.path.relpath(page_path, report.resolve().parent)).as_posix()
    return out


def write_season_report(lake: Lake, path: Path | None = None, *, title: str = "Season report"
                        ) -> Path:
    """Write the season report (and each daily report's HTML page) from the lake's published
    marts; returns the report's path."""
    boot = last_boot(lake)
    target = path or lake.root / "reports" / SEASON_FILE
    marts = read_marts(lake)
    text = season_report(marts, title=title, storage=None if boot is None else boot.describe(),
                         daily=daily_pages(lake, target.resolve()))
    return write_text(target, text)


__all__: Sequence[str] = ("ReportError", "read_marts", "season_report", "write_season_report")
