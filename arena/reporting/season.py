"""The season report: one self-contained HTML file (charts, tables) read from the published marts
(``<lake>/marts/*.parquet``, see :mod:`arena.pipeline.warehouse`), so every number in it is a
number an analyst can query.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from arena.data.lake import Lake, write_text
from arena.data.persistence import last_boot
from arena.data.providers import SYNTHETIC_MARKET, market_note
from arena.reporting.charts import bar_chart, heatmap, html_table, line_chart, page

SEASON_FILE = "season.html"
TOP_TRADES = 15


class ReportError(RuntimeError):
    """The report's inputs are missing (marts not built yet...)."""


def read_marts(lake: Lake) -> dict[str, pd.DataFrame]:
    folder = lake.root / "marts"
    if not folder.is_dir():
        raise ReportError(f"{folder} does not exist: build the marts first (arena replay or "
                          "arena demo builds them at the end of a season)")
    return {p.stem: pd.read_parquet(p) for p in sorted(folder.glob("*.parquet"))}


def _records(frame: pd.DataFrame) -> list[dict[str, object]]:
    return frame.astype(object).where(frame.notna(), None).to_dict(orient="records")


# ----------------------------------------------------------------------------- season report
LEADERBOARD_COLUMNS = [
    ("place", "#", "{:d}"), ("contestant", "contestant", ""),
    ("total_return", "return", "{:+.2%}"), ("zero_skill_percentile", "luck pct", "{:.1%}"),
    ("rank_score", "rank score", "{:.2f}"), ("sharpe", "Sharpe", "{:.2f}"),
    ("max_drawdown", "max DD", "{:.2%}"), ("win_rate", "win rate", "{:.0%}"),
    ("trades", "fills", "{:d}"), ("automatic_closes", "auto-closed trips", "{:d}"),
    ("excess_vs_btc", "vs BTC", "{:+.2%}"), ("excess_vs_spy", "vs SPY", "{:+.2%}"),
    ("excess_vs_universe", "vs universe", "{:+.2%}"), ("cost_usd", "calls $", "{:,.4f}"),
    ("pnl_per_call_dollar", "P&L per $", "{:,.0f}"),
]
TRADE_COLUMNS = [
    ("contestant", "contestant", ""), ("symbol", "asset", ""), ("side", "side", ""),
    ("opened_at", "opened", ""), ("closed_at", "closed", ""), ("closed_by", "closed by", ""),
    ("quantity", "quantity", "{:,.4g}"), ("entry_price", "entry", "{:,.2f}"),
    ("exit_price", "exit", "{:,.2f}"), ("fees", "fees", "{:,.2f}"), ("net_pnl", "net P&L", "{:+,.2f}"),
    ("thesis", "thesis", ""),
]
LUCK_COLUMNS = [
    ("symbol", "asset", ""), ("asset_class", "class", ""), ("grid", "grid", ""),
    ("bars", "bars", "{:d}"), ("players", "players", "{:,d}"), ("q05", "5%", "{:+.2%}"),
    ("q50", "median", "{:+.2%}"), ("ceiling", "ceiling (95%)", "{:+.2%}"),
    ("buy_and_hold", "buy & hold", "{:+.2%}"), ("best_rule", "best rule", ""),
    ("best_return", "its return", "{:+.2%}"), ("rules_over_ceiling", "rules over ceiling", "{:d}"),
]
RULE_COLUMNS = [
    ("rule", "rule", ""), ("kind", "kind", ""), ("total_return", "return", "{:+.2%}"),
    ("turnover", "turnover", "{:.1f}"), ("fees", "fees", "{:.3%}"),
    ("percentile", "luck pct", "{:.1%}"), ("rank_score", "rank score", "{:.2f}"),
]
CALL_COLUMNS = [
    ("contestant", "contestant", ""), ("cycles", "cycles", "{:d}"), ("traded", "traded", "{:d}"),
    ("no_trade", "no trade", "{:d}"), ("forfeited", "forfeited", "{:d}"), ("skipped", "skipped", "{:d}"),
    ("calls", "calls", "{:d}"), ("tokens_in", "tokens in", "{:,d}"), ("tokens_out", "tokens out", "{:,d}"),
    ("cost_usd", "cost $", "{:,.4f}"), ("mean_latency_s", "mean latency s", "{:.2f}"),
    ("retries", "retries", "{:d}"), ("rejections", "rejections", "{:d}"),
    ("repair_rounds", "repairs", "{:d}"), ("repairs_succeeded", "repaired ok", "{:d}"),
]


def _equity_section(marts: Mapping[str, pd.DataFrame]) -> str:
    equity, band = marts["equity_daily"], marts["zero_skill_band"]
    series = {name: list(zip(group["cycle_at"], group["equity"], strict=True))
              for name, group in equity.sort_values("cycle_at").groupby("contestant", sort=True)}
    band_rows = [(r.cycle_at, r.q05, r.q50, r.q95) for r in band.sort_values("cycle_at").itertuples()]
    players = int(band["players"].iloc[0]) if len(band) else 0
    chart = line_chart(series, band=band_rows, band_label=f"zero-skill 5-95% ({players:,} players)",
                       title="Equity after each cycle against the zero-skill band",
                       y_label="equity, USD", baseline=10_000.0)
    return chart + (f"<p>The band is where {players:,} zero-skill players who play the arena's own "
                    "rules (random valid decisions, same validator, fees and invalidation "
                    "monitor) ended each day: 5th to 95th percentile, dashed median.</p>")


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


def _rules_details(rules: pd.DataFrame) -> str:
    parts = []
    for symbol, group in rules.sort_values(["symbol", "kind", "total_return"],
                                           ascending=[True, False, False]).groupby("symbol"):
        parts.append(f"<details><summary>{html.escape(str(symbol))}</summary>"
                     f"{html_table(_records(group), RULE_COLUMNS)}</details>")
    return "".join(parts)


def _correlation_section(corr: pd.DataFrame) -> str:
    if corr.empty:
        return "<p>No correlations: the lake holds no daily bars for the season.</p>"
    wide = corr.pivot(index="symbol_a", columns="symbol_b", values="correlation")
    labels = list(wide.index)
    wide = wide.reindex(index=labels, columns=labels)
    off = wide.to_numpy(dtype=float)[~np.eye(len(labels), dtype=bool)]
    mean = float(np.nanmean(off)) if off.size else float("nan")
    matrix = [[None if pd.isna(v) else float(v) for v in row] for row in wide.to_numpy()]
    return heatmap(labels, matrix, title="Correlation of daily returns") + (
        f"<p>Mean pairwise correlation {mean:.2f}; a season's assets should be weakly correlated "
        "(daily close-to-close returns over the 90 days up to the season's end).</p>")


def _market(board: pd.DataFrame) -> str:
    """The season's market label (the leaderboard's ``market``: ``SYNTHETIC`` or a real provider).
    Refuses rather than render a report that cannot say whether its prices are real."""
    labels = set(board["market"]) if "market" in board.columns else set()
    if len(labels) != 1 or board["market"].isna().any():
        raise ReportError(f"the leaderboard names no single market ({sorted(map(str, labels))}): "
                          "rebuild the marts (arena replay or arena demo)")
    return str(labels.pop())


def season_report(marts: Mapping[str, pd.DataFrame], *, title: str = "Season report",
                  storage: str | None = None) -> str:
    """The season report's HTML from the marts; a SYNTHETIC season opens with a banner.
    ``storage``: the last persistence verdict of a served season (a closing section)."""
    board = marts["leaderboard"].sort_values(["place", "contestant"])
    if board.empty:
        raise ReportError("the leaderboard is empty: no contestant played this season")
    market = _market(board)
    equity = marts["equity_daily"]
    start, end = equity["cycle_at"].min(), equity["cycle_at"].max()
    cycles = equity["cycle_at"].nunique()
    trades = marts["trades"]
    closed = trades[trades["status"] == "closed"]
    key = closed.reindex(closed["net_pnl"].abs().sort_values(ascending=False).index).head(TOP_TRADES)
    calls = marts["model_calls"].sort_values("contestant")
    rejections = marts["rejections"]
    by_code = (rejections.groupby(["contestant", "code"], as_index=False)["rejections"].sum()
               if len(rejections) else rejections)
    leader = board.iloc[0]
    summary = (
        f"<p><strong>{html.escape(str(leader['contestant']))}</strong> leads after {cycles} cycles "
        f"({start:%Y-%m-%d} to {end:%Y-%m-%d}) with {leader['total_return']:+.2%}, at the "
        f"{leader['zero_skill_percentile']:.0%} percentile of the zero-skill players "
        f"(rank score {leader['rank_score']:.2f}; 2.0 means luck does this once in a hundred "
        f"seasons). {len(board)} contestants, {int(board['trades'].sum())} trades.</p>")
    luck = marts["luck_ceiling"]
    sections = [
        ("Summary", summary),
        ("Leaderboard", html_table(_records(board), LEADERBOARD_COLUMNS)
         + "<p>Luck pct: the contestant's place among the arena's zero-skill players; rank "
           "score = -log10(1 - pct). Excess returns are over buy-and-hold of BTC, SPY and the "
           "equal-weighted universe from the first to the last cycle.</p>"),
        ("Equity curves", _equity_section(marts)),
        ("Key trades", html_table(_records(key), TRADE_COLUMNS)
         + f"<p>The {len(key)} closed round trips with the largest net P&L either way (winners "
           f"and losers), of {len(closed)} "
           f"closed and {int((trades['status'] == 'open').sum())} still open.</p>"),
        ("Luck ceiling per asset", html_table(_luck_rows(luck, marts["reference_rules"]), LUCK_COLUMNS)
         + "<p>Per asset: the distribution of zero-skill players with random positions on the "
           "season's actual path, same scorer and costs. Compare within an asset only.</p>"),
        ("Reference rules", bar_chart(
            list(luck.sort_values("ceiling")["symbol"]),
            list(luck.sort_values("ceiling")["ceiling"]), title="Luck ceiling per asset",
            value_format="{:+.1%}") + _rules_details(marts["reference_rules"])),
        ("Asset correlations", _correlation_section(marts["asset_correlations"])),
        ("Model calls", bar_chart(list(calls["contestant"]),
                                  [float(v or 0.0) for v in calls["cost_usd"]],
                                  title="Cost of model calls, USD", value_format="${:,.4f}")
         + html_table(_records(calls), CALL_COLUMNS)),
        ("Rejections", html_table(_records(by_code), [("contestant", "contestant", ""),
                                                      ("code", "reason code", ""),
                                                      ("rejections", "rejections", "{:d}")])
         if len(by_code) else "<p>No decision was rejected this season.</p>"),
    ]
    if storage is not None:
        sections.append(("Storage", f"<p>{html.escape(storage)}</p>"))
    return page(title, sections,
                subtitle=f"{start:%Y-%m-%d} to {end:%Y-%m-%d}, {cycles} cycles, market: {market}",
                banner=market_note(market) if market == SYNTHETIC_MARKET else "")


def write_season_report(lake: Lake, path: Path | None = None, *, title: str = "Season report") -> Path:
    """Write the season report from the lake's published marts; returns its path."""
    boot = last_boot(lake)
    text = season_report(read_marts(lake), title=title,
                         storage=None if boot is None else boot.describe())
    return write_text(path or lake.root / "reports" / SEASON_FILE, text)


# ----------------------------------------------------------------------------- daily report
