"""The daily report (Markdown, and an HTML page of it beside): the day in words, standings, who leads and lags and why, key trades, quotes from
the reasoning and the market's context, written right after a cycle from the ledger itself, so it
exists before any mart is built (the Prefect flow also publishes it as a markdown artifact).

The day in words comes first: a short paragraph per contestant - what it did (opened, added to,
closed or held what, how big, at what price; what the engine rejected; what the invalidation
monitor closed before the cycle), why in its own words (its reasoning, cut at a sentence) and how
its equity moved - and the rulers together in one sentence. It is built from the ledger's records
alone, the same words for the same records: no model is called to write it.

The standings rank the contestants; the house rules follow under their own heading as rulers,
not ranked (:mod:`arena.reporting.roles`: told by each one's recorded calls, as the leaderboard
mart tells them). Who leads and who lags is a contestant; a day on which no contestant has a
record says so and shows the rulers.

An asset whose price was stale at the cycle (its data stopped arriving; judged by the rule the
cycle's market used, :func:`arena.market.asof.stale_prices`) is flagged wherever a position in it
is shown, and listed with its holders: such a position is valued at its last price.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from markdown_it import MarkdownIt
from markupsafe import Markup
from rich import box
from rich.console import Console
from rich.table import Table

from arena.core.universe import Universe
from arena.data.lake import Lake, write_text
from arena.data.providers import is_synthetic, provider_note
from arena.engine.contract import parse_answer
from arena.engine.portfolio import Portfolio
from arena.ledger.records import ANSWER, MONITOR_SCHEMAS, REPAIR, SCHEMAS, RecordKey
from arena.ledger.store import Ledger
from arena.market.asof import Providers, cycle_prices, price_intervals, provider_of, stale_prices
from arena.market.briefing import market_damage
from arena.market.types import stale_marker
from arena.reporting.layout import render
from arena.reporting.roles import CONTESTANT, RULER, recorded_role

DAILY_DIR = Path("reports") / "daily"  # under the lake root
EXCERPT_CHARS = 200  # the longest excerpt of a contestant's reasoning in the day in words
_SENTENCE_END = re.compile(r"[.!?](?=\s)")
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_\[\]<>&!|~#])")  # what could start markup inline


@dataclass(frozen=True)
class Standing:
    contestant: str
    equity: float | None
    change: float | None  # since the contestant's previous cycle
    outcome: str = ""  # of this cycle (arena.engine.outcomes)
    role: str = CONTESTANT  # or RULER (arena.reporting.roles)


def _equity_row(ledger: Ledger, at: pd.Timestamp, contestant: str) -> dict[str, Any] | None:
    rows = ledger.record_rows("equity", at, contestant)  # empty when the record has no snapshot
    return rows[-1] if rows else None


def _standings(ledger: Ledger, at: pd.Timestamp, records: Sequence[RecordKey]) -> list[Standing]:
    """Each contestant with an equity snapshot at ``at``, against its previous snapshot (read
    from its own earlier records, latest first: one record in the usual case), with its role;
    the contestants first, by equity (best first), then the rulers, by equity."""
    out = []
    for key in records:
        if key.cycle_at != at:
            continue
        row = _equity_row(ledger, at, key.contestant)
        if row is None:
            continue
        previous = ledger.equity_before(key.contestant, at)
        before = 10_000.0 if previous is None else previous["equity"]
        now = row["equity"]
        change = None if pd.isna(now) or pd.isna(before) else float(now - before)
        [outcome] = ledger.record_rows("outcome", at, key.contestant)  # this cycle's record only
        out.append(Standing(key.contestant, None if pd.isna(now) else float(now), change,
                            str(outcome["status"]), recorded_role(ledger, key.contestant, at)))
    return sorted(out, key=lambda s: (s.role != CONTESTANT,
                                      -(s.equity if s.equity is not None else -np.inf),
                                      s.contestant))


def _standings_table(standings: Sequence[Standing], *, ranked: bool) -> list[str]:
    """A band of the standings as a Markdown table: the contestants numbered in their order
    (1: the highest equity), the rulers not numbered."""
    columns = [("contestant" if ranked else "ruler", "left"), ("equity", "right"),
               ("change since its previous cycle", "right"), ("outcome", "left")]
    rows = [(s.contestant, "–" if s.equity is None else f"{s.equity:,.2f}",
             "–" if s.change is None else f"{s.change:+,.2f}", s.outcome) for s in standings]
    if ranked:
        columns, rows = [("#", "left"), *columns], [(str(i), *row) for i, row in
                                                    enumerate(rows, start=1)]
    return _markdown_table(columns, rows)


def _rows(rows: list[dict[str, Any]], schema: pa.Schema, order: Sequence[str]) -> pd.DataFrame:
    """Records' rows as :meth:`Ledger.table` returns them (its columns and its key order)."""
    frame = pa.Table.from_pylist(rows, schema=schema).to_pandas()
    return frame.sort_values(list(order), kind="stable").reset_index(drop=True)


def _fills_at(ledger: Ledger, at: pd.Timestamp, records: Sequence[RecordKey]) -> pd.DataFrame:
    """The fills of the cycle at ``at`` (every contestant's record of it, nothing older)."""
    rows = [r for k in records if k.cycle_at == at
            for r in ledger.record_rows("fills", at, k.contestant)]
    return _rows(rows, SCHEMAS["fills"], ("cycle_at", "contestant", "round", "seq"))


def _automatic_closes(ledger: Ledger, at: pd.Timestamp) -> pd.DataFrame:
    """The fills of the monitor windows ending at ``at`` (those records only)."""
    rows = []
    for key in ledger.monitor_records():
        if key.end == at:
            path = ledger.monitor_dir(key.start, key.end, key.contestant) / "fills.parquet"
            rows += pq.ParquetFile(path).read().to_pylist()
    return _rows(rows, MONITOR_SCHEMAS["fills"], ("window_end", "contestant", "seq"))


def _stale(lake: Lake, provider: Providers, universe: Universe, prices: pd.DataFrame,
           at: pd.Timestamp) -> dict[str, pd.Timestamp]:
    """The assets whose price was stale at ``at`` (``prices``: :func:`cycle_prices` rows), each
    with when its last price printed: what the cycle's market decided, from the same prices."""
    finest = {}
    for source in sorted({provider_of(provider, a) for a in universe}):
        finest.update({s: iv for s, iv in price_intervals(lake, source).items()
                       if s in universe and provider_of(provider, universe[s]) == source})
    now = prices[prices["cycle_at"] == at]
    return stale_prices(((universe[s], finest[s], t) for s, t in zip(now["symbol"],
                                                                    now["printed_at"], strict=True)
                         if s in universe and s in finest), at)


def _stale_section(stale: dict[str, pd.Timestamp], last: pd.Series,
                   books: dict[str, Portfolio]) -> list[str]:
    """Each stale asset, its last price and who holds it (valued at that price)."""
    lines = ["", "## Stale prices", "",
             "No fresh market data arrived for these assets by the cycle: they were left out of "
             "the screen, nothing traded at their price (`stale_price`), a held position is "
             "valued at its last price, and the market context leaves them out.", ""]
    for sym, since in sorted(stale.items()):
        holders = [f"{name} ({book.positions[sym].side})" for name, book in books.items()
                   if sym in book.positions]
        price = last.get(sym, np.nan)
        at_price = "" if pd.isna(price) else f" at {float(price):,.4g}"
        lines.append(f"* {sym}{at_price} ({stale_marker(since)}): "
                     + (f"held by {', '.join(holders)}" if holders else "held by no one"))
    return lines


def _quote(text: str | None, limit: int = 240) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _markdown_table(columns: Sequence[tuple[str, str]], rows: Iterable[Sequence[str]]) -> list[str]:
    """The lines of a Markdown pipe table drawn by rich (``box.MARKDOWN``). ``columns``:
    ``(name, "left" | "right")``; a right-justified column also gets its ``---:`` alignment
    marker, which rich does not draw. Cell text is taken as is (no rich markup, no emoji codes)."""
    table = Table(box=box.MARKDOWN, header_style=None)
    for name, justify in columns:
        table.add_column(name, justify="right" if justify == "right" else "left", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    console = Console(file=StringIO(), width=10_000, color_system=None, markup=False,
                      emoji=False, highlight=False)
    console.print(table)
    # box.MARKDOWN draws blank top and bottom edges: keep the header, the rule and the rows
    head, rule, *body = [ln.rstrip() for ln in console.file.getvalue().splitlines() if ln.strip()]
    cells = rule.split("|")[1:-1]
    rule = "|" + "|".join(c[:-1] + ":" if justify == "right" else c
                          for c, (_, justify) in zip(cells, columns, strict=True)) + "|"
    return [head, rule, *body]


def daily_report(ledger: Ledger, lake: Lake, provider: Providers, universe: Universe,
                 at: pd.Timestamp) -> str:
    """Markdown: who leads and lags and why, key trades, quotes from reasoning, market context;
    under the title, whose prices these are (a SYNTHETIC banner for the embedded default;
    ``provider``: one, or one per asset class)."""
    records = ledger.records()  # the keys only (a directory listing): records are read by key
    standings = _standings(ledger, at, records)
    lines = _title(provider, universe, at)
    if not standings:
        return "\n".join([*lines, "No contestant has a record at this cycle."])
    rivals = [s for s in standings if s.role == CONTESTANT]
    auto = _automatic_closes(ledger, at)
    lines += _day_in_words(ledger, standings, auto, at)
    lines += ["", *_standings_section(standings, rivals, records, at)]
    damaged = market_damage(lake, provider, universe, at)
    prices = cycle_prices(lake, provider, universe, [at - pd.Timedelta(days=1), at],
                          damage=dict(damaged))
    wide = prices.pivot(index="cycle_at", columns="symbol", values="price")
    stale = _stale(lake, provider, universe, prices, at)
    lines += ["", "## Who leads and lags, and why", "",
              *_leaders_and_laggards(ledger, rivals, wide, stale, at)]
    if stale:
        books = {s.contestant: ledger.portfolio(s.contestant, until=at) for s in standings}
        lines += _stale_section(stale, wide.iloc[-1], books)
    if damaged:
        lines += _damage_section(damaged)
    lines += _key_trades(ledger, at, records, auto)
    lines += _reasoning_section(ledger, standings, at)
    lines += _market_context(_moves(wide, [*stale, *damaged]))
    return "\n".join(lines) + "\n"


def _title(provider: Providers, universe: Universe, at: pd.Timestamp) -> list[str]:
    """The report's title, then whose prices these are (a banner for synthetic ones)."""
    sources = sorted({provider_of(provider, a) for a in universe})
    notes = [provider_note(p) for p in sources]
    return [f"# Daily report {at:%Y-%m-%d %H:%M} UTC", "",
            *(f"> **{n}**" if is_synthetic(p) else f"{n}." for p, n in zip(sources, notes,
                                                                          strict=True)), ""]


def _standings_section(standings: Sequence[Standing], rivals: Sequence[Standing],
                       records: Sequence[RecordKey], at: pd.Timestamp) -> list[str]:
    """The contestants ranked, the rulers beside them, and who has no record at the cycle."""
    rulers = [s for s in standings if s.role == RULER]
    lines = ["## Standings", ""]
    lines += _standings_table(rivals, ranked=True) if rivals else [
        "No contestant has a record at this cycle: only the house rules played, as rulers."]
    if rulers:
        lines += ["", "## Rulers", "",
                  "The house rules, playing beside the contestants under the same rules: the "
                  "yardstick, not ranked.", "", *_standings_table(rulers, ranked=False)]
    absent = sorted({k.contestant for k in records} - {s.contestant for s in standings})
    if absent:
        lines += ["", "No record at this cycle: " + "; ".join(
            _why_absent(name, [k.cycle_at for k in records if k.contestant == name], at)
            for name in absent) + "."]
    return lines


def _leaders_and_laggards(ledger: Ledger, rivals: Sequence[Standing], wide: pd.DataFrame,
                          stale: dict[str, pd.Timestamp], at: pd.Timestamp) -> list[str]:
    """The leading and the lagging contestant, each with its cash and its largest unrealised
    P&L at the cycle's prices (``wide``: a column per symbol, the cycle's prices last)."""
    why = [] if rivals else ["No contestant has a record at this cycle, so none leads or lags."]
    for s in (rivals[0], rivals[-1]) if len(rivals) > 1 else rivals[:1]:
        book = ledger.portfolio(s.contestant, until=at)  # the book of that cycle, not today's
        contrib = sorted(((sym, p.unrealised(float(wide.iloc[-1].get(sym, np.nan))))
                          for sym, p in book.positions.items()
                          if sym in wide.columns and not pd.isna(wide.iloc[-1][sym])),
                         key=lambda kv: -abs(kv[1]))[:3]
        held = ", ".join(f"{sym} {pnl:+,.2f}" + (f" ({stale_marker(stale[sym])})"
                                                 if sym in stale else "")
                         for sym, pnl in contrib) or "no open position"
        role = "leads" if s is rivals[0] else "lags"
        why.append(f"* **{s.contestant}** {role}: cash {book.cash:,.2f}, {len(book.positions)} open "
                   f"position(s); largest unrealised P&L: {held}.")
    return why


def _day_in_words(ledger: Ledger, standings: Sequence[Standing], auto: pd.DataFrame,
                  at: pd.Timestamp) -> list[str]:
    """The day in words: a paragraph per contestant in the standings' order, then the rulers
    in one sentence (``auto``: the monitor's automatic closes of the window ending at ``at``)."""
    rivals = [s for s in standings if s.role == CONTESTANT]
    rulers = [s for s in standings if s.role == RULER]
    lines = ["## The day in words", ""]
    for s in rivals:
        lines += [_paragraph(ledger, s, auto, at), ""]
    if not rivals:
        lines += ["No contestant has a record at this cycle.", ""]
    if rulers:
        lines += ["The rulers, not ranked: " + "; ".join(
            f"{s.contestant} {_ruler_words(ledger, s, at)}" for s in rulers) + ".", ""]
    return lines[:-1]


def _paragraph(ledger: Ledger, s: Standing, auto: pd.DataFrame, at: pd.Timestamp) -> str:
    """One contestant's day: what it did, why in its own words, how its equity moved."""
    fills = sorted(ledger.record_rows("fills", at, s.contestant),
                   key=lambda r: (r["round"] != ANSWER, r["seq"]))
    [outcome] = ledger.record_rows("outcome", at, s.contestant)
    final = REPAIR if outcome["repaired"] else ANSWER
    sizes = _sizes(ledger.record_rows("decisions", at, s.contestant))

    def book() -> Portfolio:  # the book after the cycle: read only when the words need it
        return ledger.portfolio(s.contestant, until=at)

    sentences = [_monitor_words(auto[auto["contestant"] == s.contestant])]
    if fills:
        sentences.append(f"**{s.contestant}** " + "; ".join(
            _fill_words(f, sizes.get((f["round"], f["decision_index"])), book) for f in fills)
            + ".")
    rejected = [r for r in ledger.record_rows("rejections", at, s.contestant)
                if r["round"] == final]
    if rejected:
        said = "; ".join(f"{_escape(r['action'])} {_escape(r['symbol'])} "
                         f"({_escape(_excerpt(r['message']))})" for r in rejected)
        sentences.append((f"**{s.contestant}** traded nothing: " if not fills else "")
                         + f"the engine rejected {said}"
                         + (" after a repair round." if outcome["repaired"] else "."))
    elif not fills:
        sentences.append(f"**{s.contestant}** {_idle_words(s.outcome, book)}.")
    reasoning = _final_reasoning(ledger, s.contestant, at, final)
    if reasoning:
        sentences.append(f"In its words: \"{_escape(_excerpt(reasoning))}\"")
    sentences.append(_equity_words(s))
    return " ".join(x for x in sentences if x)


def _sizes(decisions: Sequence[dict[str, Any]]) -> dict[tuple[str, int], float]:
    """The share of equity each decision asked for, by (round, decision index)."""
    sizes = {}
    for row in decisions:
        try:
            asked = json.loads(row["decision"]).get("percent_of_equity")
        except (TypeError, ValueError, AttributeError):
            continue
        if isinstance(asked, int | float) and not isinstance(asked, bool):
            sizes[(row["round"], row["decision_index"])] = float(asked)
    return sizes


def _fill_words(fill: dict[str, Any], asked: float | None, book: Callable[[], Portfolio]) -> str:
    """A fill of the cycle in words: its kind, side, asset, size and price."""
    side, symbol = fill["side"], _escape(fill["symbol"])
    size = f"{fill['quantity']:,.4g} at {_price(fill['price'])}, ${fill['notional']:,.0f}"
    share = "" if asked is None else f", {asked:g}% of its equity"
    if fill["kind"] == "open":
        return f"opened a {side} position in {symbol} ({size}{share})"
    if fill["kind"] == "add":
        return f"added to its {side} position in {symbol} ({size}{share})"
    part = "part of " if fill["symbol"] in book().positions else ""
    return (f"closed {part}its {side} position in {symbol} ({size}), realising "
            f"{fill['realised_pnl']:+,.2f}")


def _monitor_words(closes: pd.DataFrame) -> str:
    """What the invalidation monitor closed for a contestant before the cycle."""
    if not len(closes):
        return ""
    said = "; ".join(f"its {r.side} position in {_escape(r.symbol)} at {_price(r.price)} "
                     f"({r.at:%Y-%m-%d %H:%M}), realising {r.realised_pnl:+,.2f}"
                     for r in closes.itertuples())
    return f"Before the cycle the invalidation monitor closed {said}."


def _idle_words(outcome: str, book: Callable[[], Portfolio]) -> str:
    """What a contestant with no fill and no rejection did: held, forfeited or sat out."""
    if outcome == "forfeited":
        return "forfeited the cycle: no answer could be read, the repair round included"
    if outcome == "skipped":
        return "did not play this cycle"
    held = [f"{p.side} {_escape(sym)}" for sym, p in sorted(book().positions.items())]
    if not held:
        return "made no trade and stayed in cash"
    listed = held[0] if len(held) == 1 else ", ".join(held[:-1]) + " and " + held[-1]
    return f"made no trade and held {listed}"


def _equity_words(s: Standing) -> str:
    """How a contestant's equity moved since its previous cycle."""
    if s.equity is None:
        return "Its equity is not known at this cycle (a held asset had no price)."
    if s.change is None:
        return f"Its equity is {s.equity:,.2f}."
    if s.change == 0:
        return f"Its equity stayed at {s.equity:,.2f}."
    before = s.equity - s.change
    move = f" ({s.change / before:+.2%})" if before > 0 else ""
    return (f"Its equity {'rose' if s.change > 0 else 'fell'} {abs(s.change):,.2f} to "
            f"{s.equity:,.2f}{move} since its previous cycle.")


def _ruler_words(ledger: Ledger, s: Standing, at: pd.Timestamp) -> str:
    """A ruler's day in a clause: its fills (kind, side, asset) or its outcome, its equity."""
    fills = sorted(ledger.record_rows("fills", at, s.contestant),
                   key=lambda r: (r["round"] != ANSWER, r["seq"]))
    did = ("traded (" + ", ".join(f"{f['kind']} {f['side']} {_escape(f['symbol'])}"
                                  for f in fills) + ")") if fills else {
        "forfeited": "forfeited", "skipped": "did not play"}.get(s.outcome, "made no trade")
    if s.equity is None:
        return f"{did}, equity not known"
    change = "" if s.change is None else f" ({s.change:+,.2f})"
    return f"{did}, equity {s.equity:,.2f}{change}"


def _final_reasoning(ledger: Ledger, contestant: str, at: pd.Timestamp, final: str) -> str | None:
    """The reasoning of the answer the cycle played (the repair's after a repair round, else
    the first answer's)."""
    texts = ledger.responses(contestant, at)
    return answer_reasoning(texts.get(final)) or answer_reasoning(texts.get(ANSWER))


def _excerpt(text: str | None, limit: int = EXCERPT_CHARS) -> str:
    """``text`` on one line, cut at the end of its last sentence that fits in ``limit``
    characters; without one, at the last word that fits, marked with an ellipsis."""
    text = " ".join((text or "").split())
    if len(text) <= limit:
        return text
    ends = [m.end() for m in _SENTENCE_END.finditer(text[:limit + 1])]
    if ends:
        return text[:ends[-1]]
    cut = text[:limit - 1].rsplit(" ", 1)[0] if " " in text[:limit - 1] else text[:limit - 1]
    return cut.rstrip(",;:") + "…"


def _escape(text: str) -> str:
    """Model-written text made literal in Markdown: every character that could start markup
    inline (emphasis, code, a link or an image, raw HTML, an entity, a table cell) escaped with
    a backslash, which CommonMark renders as the character itself (and HTML-escapes)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def _price(price: float) -> str:
    """A price: two decimals, four significant figures below one."""
    return f"{price:,.2f}" if abs(price) >= 1 else f"{price:.4g}"


def _damage_section(damaged: dict[str, str]) -> list[str]:
    """Each asset whose bars the cycle could not use, and why."""
    return ["", "## Unusable market data", "",
            "The cycle could not use these assets' bars: they were treated as stale (left "
            "out of the screen, nothing traded), and `arena season verify` tells how to "
            "restore them.", "", *(f"* {sym}: {why}" for sym, why in damaged.items())]


def _key_trades(ledger: Ledger, at: pd.Timestamp, records: Sequence[RecordKey],
                auto: pd.DataFrame) -> list[str]:
    """The cycle's largest fills (at most eight), then the monitor's automatic closes
    (``auto``: :func:`_automatic_closes` at ``at``)."""
    today = _fills_at(ledger, at, records)
    lines = ["", "## Key trades", ""]
    if len(today) == 0 and len(auto) == 0:
        lines.append("No trade today.")
    for r in today.sort_values("notional", ascending=False).head(8).itertuples():
        thesis = f" - \"{_escape(_quote(r.thesis, 160))}\"" if r.thesis else ""
        lines.append(f"* {r.contestant}: {r.kind} {r.side} {r.symbol} {r.quantity:,.4g} @ "
                     f"{r.price:,.2f} (${r.notional:,.0f}){thesis}")
    for r in auto.itertuples():
        lines.append(f"* {r.contestant}: automatic close of {r.side} {r.symbol} at {r.price:,.2f} "
                     f"({r.at:%Y-%m-%d %H:%M}), realised {r.realised_pnl:+,.2f}")
    return lines


def _reasoning_section(ledger: Ledger, standings: Sequence[Standing],
                       at: pd.Timestamp) -> list[str]:
    """A quote of each recorded answer's reasoning, in the standings' order (as text: its
    markup escaped)."""
    quotes = []
    for s in standings:
        try:
            text = ledger.responses(s.contestant, at).get(ANSWER)
        except KeyError:
            continue
        reasoning = answer_reasoning(text)
        if reasoning:
            quotes.append(f"> **{s.contestant}**: {_escape(_quote(reasoning))}")
    return ["", "## From the reasoning", "", *(quotes or ["No reasoning recorded."])]


def _moves(wide: pd.DataFrame, left_out: Sequence[str]) -> pd.Series:
    """Each asset's move over the day (``wide``: the day before's prices, then the cycle's),
    without the assets ``left_out`` (stale or damaged: not the day's move)."""
    if len(wide) != 2:
        return pd.Series(dtype=float)
    return (wide.iloc[-1] / wide.iloc[0] - 1).dropna().drop(left_out, errors="ignore")


def _market_context(moves: pd.Series) -> list[str]:
    """The day's best and worst moves, the median move and the benchmarks' (none without
    moves)."""
    if not len(moves):
        return []
    top = moves.sort_values()
    fmt = ", ".join
    lines = ["", "## Market context", "",
             f"* Best 24 h: {fmt(f'{s} {v:+.1%}' for s, v in top.tail(3)[::-1].items())}",
             f"* Worst 24 h: {fmt(f'{s} {v:+.1%}' for s, v in top.head(3).items())}",
             f"* Median move across {len(moves)} assets: {moves.median():+.2%}"]
    for bench in ("BTC", "SPY"):
        if bench in moves:
            lines.append(f"* {bench}: {moves[bench]:+.2%}")
    return lines


def _why_absent(name: str, played: Sequence[pd.Timestamp], at: pd.Timestamp) -> str:
    """Why ``name`` has no record at ``at``, as far as its records tell: it starts later, it
    played before (retired, or its model could not be reached), or it skipped this one."""
    before, after = [t for t in played if t < at], [t for t in played if t > at]
    if not before:
        return f"{name} (not playing yet)"
    if not after:
        return (f"{name} (last played {max(before):%Y-%m-%d}: retired, or its model could not "
                "be reached)")
    return f"{name} (its model could not be reached)"


def answer_reasoning(text: str | None) -> str | None:
    """The ``reasoning`` field of a raw answer, when it parses."""
    if not text:
        return None
    parsed = parse_answer(text)
    return parsed.answer.reasoning if parsed.ok else None


def render_daily_html(text: str, *, back: str = "../season.html") -> str:
    """A daily report's Markdown as a self-contained HTML page (the season report's style),
    linking back to the season report at ``back``."""
    lines = text.splitlines()
    title = lines[0].lstrip("# ").strip() if lines and lines[0].startswith("# ") else "Daily report"
    body = "\n".join(lines[1:] if lines and lines[0].startswith("# ") else lines)
    # no raw HTML, and no image or link: model-written text must not fetch or point anywhere
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    markup = parser.disable(["image", "link", "autolink"]).render(body)
    markup = markup.replace("<table>", '<table class="data">')
    # markdown-it escaped every text it rendered (and was given no raw HTML to pass through):
    # its output is the page's one piece of HTML made outside a template
    return render("daily.html.j2", title=title, back=back, markdown_html=Markup(markup))


def write_daily_report(lake: Lake, text: str, at: pd.Timestamp) -> Path:
    """Write the day's report as Markdown, and as HTML beside it; returns the Markdown's path."""
    path = write_text(lake.root / DAILY_DIR / f"{at:%Y-%m-%d}.md", text)
    write_text(path.with_suffix(".html"), render_daily_html(text))
    return path


def daily_reports(lake: Lake, provider: Providers, universe: Universe,
                  cycles: Sequence[pd.Timestamp], ledger: Ledger | None = None) -> list[Path]:
    ledger = ledger or Ledger(lake)
    return [write_daily_report(lake, daily_report(ledger, lake, provider, universe, at), at)
            for at in cycles]
