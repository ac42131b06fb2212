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
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from markupsafe import Markup

from arena.core.errors import Failed
from arena.data.lake import Lake, write_text
from arena.data.persistence import last_boot
from arena.data.providers import SYNTHETIC_MARKET, market_note
from arena.reporting.blind import SECTION, blind_view, played_blind
from arena.reporting.daily import DAILY_DIR, render_daily_html
from arena.reporting.fragments import FRAGMENTS_FILE, Fragments
from arena.reporting.layout import Column, macro, records, render, templates_digest
from arena.reporting.leaderboard import (
    BAND_TITLES,
    REPLICATES,
    REPLICATES_TITLE,
    bands,
    sorted_board,
)
from arena.reporting.people import (
    ByContestant,
    Links,
    Person,
    decision_cycles,
    entry,
    knowledge,
    leaderboard_columns,
    open_columns,
    person,
    person_columns,
    trade_columns,
    why_column,
)
from arena.reporting.plots import (
    drawdown_chart,
    equity_chart,
    heatmap_chart,
    scatter_chart,
    series_colours,
)
from arena.reporting.roles import RULER

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


# ----------------------------------------------------------------------------- columns
REJECTION_CODE_COLUMNS = [Column("contestant", "contestant"), Column("code", "reason code"),
                          Column("rejections", "rejections", "int")]
LUCK_COLUMNS = [
    Column("symbol", "asset"), Column("asset_class", "class"), Column("grid", "grid"),
    Column("bars", "bars", "int"), Column("players", "players", "int"),
    Column("q05_return", "5%", "return"), Column("q50_return", "median", "return"),
    Column("luck_ceiling", "ceiling (95%)", "return"),
    Column("buy_and_hold", "buy & hold", "return"),
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
    Column("cost_usd", "cost", "usd"), Column("pricing", "pricing"),
    Column("mean_latency_s", "mean latency s", "score"),
    Column("retries", "retries", "int"), Column("rejections", "rejections", "int"),
    Column("repair_rounds", "repairs", "int"),
]


# ----------------------------------------------------------------------------- values
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


def _with_why(frame: pd.DataFrame) -> list[dict[str, object]]:
    return records(why_column(frame))


def _key_trades(trades: pd.DataFrame) -> pd.DataFrame:
    """The closed round trips with the largest net P&L either way."""
    closed = trades[trades["status"] == "closed"]
    return closed.reindex(closed["net_pnl"].abs().sort_values(ascending=False).index) \
        .head(TOP_TRADES)


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


def luck_rows(luck: pd.DataFrame, rules: pd.DataFrame) -> list[dict[str, object]]:
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


def rule_tables(rules: pd.DataFrame) -> list[tuple[str, list[dict[str, object]]]]:
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


def contestant_curves(frame: pd.DataFrame, value: str) -> dict[str, pd.Series]:
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
        "equity": equity_chart(contestant_curves(marts["equity_daily"], "equity"), benchmarks=benchmarks,
                               band=[(r.cycle_at, r.q05_equity, r.q50_equity, r.q95_equity)
                                     for r in band.itertuples()],
                               players=players, start_cash=START_CASH),
        "drawdowns": drawdown_chart(contestant_curves(marts["equity_daily"], "drawdown")),
        "activity": scatter_chart([(str(r.contestant), float(r.fills), float(r.rank_score))
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
                  fragments: Fragments | None = None, blind: bool = False) -> str:
    """The season report's HTML from the marts; a SYNTHETIC season opens with a banner.
    ``storage``: the last persistence verdict of a served season (a closing section);
    ``daily``: each day's ("YYYY-MM-DD") daily report, as a link from this page;
    ``fragments``: the rows and cycles kept from the last rendering (the page is the same
    with or without them); ``blind``: the season is played blind (its config's), said in the
    summary until the ``blind_names`` mart reveals its names in a section of their own
    (:mod:`arena.reporting.blind`)."""
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
    board = board.assign(entry=entry(board), knowledge=knowledge(board))
    (_, rivals), (_, rulers) = bands(board)
    cycles = decision_cycles(marts["decisions"], links, fragments)
    rows_of = ByContestant(marts)
    own_trade_columns = trade_columns(links, who=False)

    def sections(band: pd.DataFrame) -> list[Person]:
        return [person(str(name), marts, held, colours[str(name)], cycles.get(str(name), []),
                            own_trade_columns, fragments, rows_of)
                for name in band["contestant"]]

    return render(
        "season.html.j2",
        title=title, market=market,
        banner=market_note(market) if market == SYNTHETIC_MARKET else "",
        blind=blind_view(marts, blind), blind_section=SECTION,
        start=equity["cycle_at"].min(), end=equity["cycle_at"].max(),
        cycles=int(equity["cycle_at"].nunique()), short_season=SHORT_SEASON,
        leader=records(rivals.head(1))[0] if len(rivals) else None,
        best_ruler=records(rulers.head(1))[0] if len(rulers) else None,
        fills=int(board["fills"].sum()),
        closed=int((trades["status"] == "closed").sum()),
        still_open=int((trades["status"] == "open").sum()),
        board=records(rivals), board_columns=leaderboard_columns(board),
        ruler_board=records(rulers), ruler_columns=leaderboard_columns(board, RULER),
        band_titles=BAND_TITLES,
        replicates=records(marts["replicates"].sort_values("replicate_of"))
        if "replicates" in marts else [],  # marts built before replicates have none
        replicate_columns=REPLICATES, replicates_title=REPLICATES_TITLE,
        charts=_charts(marts, board, players), players=players,
        key_trades=_with_why(_key_trades(trades)), trade_columns=trade_columns(links),
        held=_with_why(held), held_columns=open_columns(links),
        unrealised=float(held["unrealised_pnl"].sum()) if len(held) else 0.0,
        contestants=sections(rivals), rulers=sections(rulers),
        person_columns=person_columns(own_trade_columns),
        luck=luck_rows(marts["asset_luck_ceilings"], rules), luck_columns=LUCK_COLUMNS,
        rule_tables=rule_tables(rules) if not rules.empty else [], rule_columns=RULE_COLUMNS,
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
    marts (and whether its season is blind, from its config); returns the report's path."""
    boot = last_boot(lake)
    own = lake.root / "reports" / SEASON_FILE
    target = path or own
    marts = read_marts(lake)
    # the lake's own report keeps its rendered rows and cycles for the next publication
    fragments = Fragments(own.parent / FRAGMENTS_FILE
                          if target.resolve() == own.resolve() else None)
    text = season_report(marts, title=title, storage=None if boot is None else boot.describe(),
                         daily=daily_pages(lake, target.resolve()), fragments=fragments,
                         blind=played_blind(lake))
    write_text(target, text)
    fragments.save()
    return target


__all__: Sequence[str] = ("ReportError", "read_marts", "season_report", "write_season_report")
