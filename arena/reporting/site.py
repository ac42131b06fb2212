"""The site's pages (``arena web``, served by :mod:`arena.doors.web`): a season's leaderboard, a
page per contestant, per trade, per asset and per day, a contest's page (who cleared the luck
ceiling on which asset, and the standings), and the list of seasons.

Each page is read from a season's published marts, with the season report's templates
(``page.html.j2``, ``macros.html.j2``, ``people.html.j2``: one template set renders the report
and the site), its columns and its numbers; only the links differ: where the report points at an
anchor of its one file, the site points at the page of the contestant, the trade, the asset or
the day (:class:`Urls`). A page is a function of the marts and the season, so the door can keep
it until the next publication.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

import pandas as pd
from markupsafe import Markup

from arena.core.marts import LEAGUE_PAGES, SEASON_PAGES
from arena.data.providers import SYNTHETIC_MARKET, market_note
from arena.reporting import people
from arena.reporting.blind import SECTION, blind_view
from arena.reporting.daily import answer_reasoning, render_daily_html
from arena.reporting.fragments import Fragments
from arena.reporting.layout import Column, missing, records, render
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
    decision_cycles,
    entry,
    knowledge,
    person_columns,
)
from arena.reporting.plots import drawdown_chart, equity_chart, series_colours
from arena.reporting.roles import RULER
from arena.reporting.season import (
    BENCHMARK_LABELS,
    LUCK_COLUMNS,
    RULE_COLUMNS,
    START_CASH,
    ReportError,
    contestant_curves,
    luck_rows,
    open_positions,
    rule_tables,
)
from arena.scoring.verdict import SHARE_FAMILY

TRACK_COLUMNS = [
    Column("entrant", "entrant"), Column("status", "status"),
    Column("total_return", "return", "return"), Column("coverage", "covered", "share"),
    Column("eligible", "eligible"), Column("luck_percentile", "luck pct", "share"),
    Column("rank_score", "rank score", "score"),
]


class PageNotFound(LookupError):
    """The page names a contestant, trade, asset, day or season the season does not have."""


@dataclass(frozen=True)
class Season:
    """A season as the site lists it: its id (the URL's), its title and span, and its state."""

    id: str
    title: str
    market: str | None
    start: str | None  # first cycle day, ISO
    end: str | None  # last published cycle day, ISO
    cycles: int
    state: str  # "live", "closed", "replay" or "not published"
    leader: str | None = None  # the best contestant, when there is one
    blind: bool = False  # played blind (its config's): said, then its names revealed at its end

    @property
    def banner(self) -> str:
        """The line above every page of a season on invented prices (empty for real ones): a
        reader who lands on any page, not only the report, is told."""
        markets = (self.market or "").split(", ")
        return market_note(SYNTHETIC_MARKET) if SYNTHETIC_MARKET in markets else ""


class Urls:
    """Where a season's pages live on the site (all absolute paths)."""

    def __init__(self, season_id: str, *, league: bool = False, entries: bool = False) -> None:
        self.season = f"/seasons/{quote(season_id, safe='')}"
        self.league = league  # the site serves a league: its page is /league/
        self.entries = entries  # the site takes entries (arena web --entries)

    @property
    def home(self) -> str:
        return f"{self.season}/"

    def contestant(self, name: object) -> str:
        return f"{self.season}/contestants/{quote(str(name), safe='')}"

    def trade(self, contestant: object, symbol: object, trip: object) -> str:
        return (f"{self.season}/trades/{quote(str(contestant), safe='')}/"
                f"{quote(str(symbol), safe='')}/{int(trip)}")  # type: ignore[call-overload]

    def asset(self, symbol: object) -> str:
        return f"{self.season}/assets/{quote(str(symbol), safe='')}"

    @property
    def assets(self) -> str:
        return f"{self.season}/assets/"

    def enter(self, symbol: object) -> str:
        """The entry page of ``symbol``: a person's position on its single-asset track."""
        return f"{self.season}/enter/{quote(str(symbol), safe='')}"

    def day(self, day: str) -> str:
        return f"{self.season}/days/{day}"

    @property
    def report(self) -> str:
        return f"{self.season}/report"

    @property
    def contest(self) -> str:
        return f"{self.season}/contest"

    def api(self, mart: str) -> str:
        return f"/api{self.season}/{mart}"


def check_marts(marts: Mapping[str, pd.DataFrame]) -> None:
    missing = [m for m in SEASON_PAGES if m not in marts]
    if missing:
        raise ReportError(f"the published marts lack {', '.join(missing)}: publish the season "
                          "again (arena season publish)")


def contest_name(marts: Mapping[str, pd.DataFrame]) -> str | None:
    """The season's contest as its publication names it (``contest_boundary``: a row per
    contest asset), or None when the season is not a contest (or was published before
    contests had marts)."""
    boundary = marts.get("contest_boundary")
    if boundary is None or boundary.empty:
        return None
    return str(boundary["contest"].iloc[0])


def _nav(urls: Urls, days: Sequence[str],
         marts: Mapping[str, pd.DataFrame]) -> list[tuple[str, str]]:
    links = [("Leaderboard", urls.home), ("Assets", urls.assets)]
    if contest_name(marts) is not None:
        links.append(("Contest", urls.contest))
    if days:
        links.append((f"Latest day ({days[-1]})", urls.day(days[-1])))
    return [*links, ("Season report", urls.report), ("All seasons", "/seasons/"),
            *([("League", "/league/")] if urls.league else []), ("JSON API", "/api/")]


def _board_columns(board: pd.DataFrame, role: str, urls: Urls) -> list[Column]:
    """The report's leaderboard columns of a band, each name linking to its contestant's page."""
    return [dataclasses.replace(c, href=lambda r: urls.contestant(r["contestant"]))
            if c.key == "contestant" else c for c in people.leaderboard_columns(board, role)]


def _band(marts: Mapping[str, pd.DataFrame]) -> tuple[list[tuple[object, float, float, float]], int]:
    band = marts["zero_skill_band"].sort_values("cycle_at")
    players = int(band["players"].iloc[0]) if len(band) else 0
    rows = [(r.cycle_at, r.q05_equity, r.q50_equity, r.q95_equity) for r in band.itertuples()]
    return rows, players


def _benchmarks(marts: Mapping[str, pd.DataFrame]) -> dict[str, list[tuple[object, float]]]:
    bench = marts["benchmark_equity"].sort_values("cycle_at")
    return {BENCHMARK_LABELS.get(str(name), str(name)):
            [(t, float(v)) for t, v in zip(g["cycle_at"], g["equity"], strict=True)]
            for name, g in bench.groupby("benchmark", sort=True)}


def _board(marts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    board = marts["leaderboard"]
    if board.empty:
        raise ReportError("the leaderboard is empty: no contestant played this season yet")
    board = sorted_board(board)
    return board.assign(entry=entry(board), knowledge=knowledge(board))


def _replicates(marts: Mapping[str, pd.DataFrame]) -> list[dict[str, object]]:
    frame = marts.get("replicates")
    return records(frame) if frame is not None and len(frame) else []


def leaderboard_page(marts: Mapping[str, pd.DataFrame], season: Season, urls: Urls,
                     days: Sequence[str], *, version: str = "") -> str:
    """The season's live leaderboard: the contestants ranked, the rulers apart, the equity of
    every player against the zero-skill band and the benchmarks, and where to go next; a blind
    season says so until the ``blind_names`` mart reveals its names (:mod:`arena.reporting.blind`)."""
    check_marts(marts)
    board = _board(marts)
    (_, rivals), (_, rulers) = bands(board)
    band, players = _band(marts)
    chart = equity_chart(contestant_curves(marts["equity_daily"], "equity"),
                         benchmarks=_benchmarks(marts), band=band, players=players,
                         start_cash=START_CASH)
    return render("site_board.html.j2", title=season.title, season=season,
                  links=_nav(urls, days, marts), urls=urls, version=version,
                  leader=records(rivals.head(1))[0] if len(rivals) else None,
                  best_ruler=records(rulers.head(1))[0] if len(rulers) else None,
                  board=records(rivals), board_columns=_board_columns(board, "contestant", urls),
                  ruler_board=records(rulers), ruler_columns=_board_columns(board, RULER, urls),
                  band_titles=BAND_TITLES, players=players, chart=Markup(chart),
                  replicates=_replicates(marts), replicate_columns=list(REPLICATES),
                  replicates_title=REPLICATES_TITLE, days=list(days),
                  contest=contest_name(marts), blind=blind_view(marts, season.blind),
                  blind_section=SECTION)


def contestant_page(marts: Mapping[str, pd.DataFrame], name: str, season: Season, urls: Urls,
                    days: Sequence[str], *, version: str = "") -> str:
    """One contestant's (or ruler's) page: its equity against the zero-skill band and the
    benchmarks, its drawdown, its stats, every trade linked to the decision that opened it and to
    the trade's own page, its decisions cycle by cycle with the answers' reasoning, its rejections,
    calls and cost."""
    check_marts(marts)
    board = _board(marts)
    if name not in set(board["contestant"].astype(str)):
        raise PageNotFound(f"no contestant named {name!r} in season {season.id}")
    daily = {day: urls.day(day) for day in days}
    decisions = marts["decisions"]
    own = decisions[decisions["contestant"].astype(str) == name]
    links = Links(daily, own, page=urls.contestant)
    trade_columns = [Column("trip", "trip", "int",
                            href=lambda r: urls.trade(r["contestant"], r["symbol"], r["trip"])),
                     *(dataclasses.replace(c, href=lambda r: urls.asset(r["symbol"]))
                       if c.key == "symbol" else c for c in people.trade_columns(links, who=False))]
    cycles = decision_cycles(own, links, Fragments()).get(name, [])
    colour = series_colours(list(board["contestant"].astype(str)))[name]
    person = people.person(name, marts, open_positions(marts), colour, cycles, trade_columns,
                         Fragments(), ByContestant(marts))
    band, players = _band(marts)
    curves = {k: v for k, v in contestant_curves(marts["equity_daily"], "equity").items()
              if k == name}
    drawdowns = {k: v for k, v in contestant_curves(marts["equity_daily"], "drawdown").items()
                 if k == name}
    row = records(board[board["contestant"].astype(str) == name])[0]
    return render("site_contestant.html.j2", title=f"{name}: {season.title}", season=season,
                  links=_nav(urls, days, marts), urls=urls, version=version, person=person,
                  row=row, columns=person_columns(trade_columns), players=players,
                  equity=Markup(equity_chart(curves, benchmarks=_benchmarks(marts), band=band,
                                             players=players, start_cash=START_CASH)),
                  drawdown=Markup(drawdown_chart(drawdowns)))


TRADE_COLUMNS = [
    Column("side", "side"), Column("status", "status"), Column("opened_at", "opened (UTC)", "time"),
    Column("closed_at", "closed (UTC)", "time"), Column("closed_by", "closed by"),
    Column("holding_days", "days held", "score"), Column("quantity", "quantity", "num"),
    Column("entry_price", "entry", "price"), Column("exit_price", "exit", "price"),
    Column("fees", "fees", "money"), Column("gross_pnl", "gross P&L", "pnl"),
    Column("net_pnl", "net P&L", "pnl"), Column("fills", "fills", "int"),
]


def _decision_at(decisions: pd.DataFrame, contestant: str, at: object, round_: object,
                 index: object) -> dict[str, object] | None:
    """The decision a trade names (its answer's reasoning and its JSON), or None."""
    if any(v is None or pd.isna(v) for v in (at, round_, index)):
        return None
    rows = decisions[(decisions["contestant"].astype(str) == contestant)
                     & (pd.to_datetime(decisions["cycle_at"], utc=True) == pd.Timestamp(at))
                     & (decisions["round"].astype(str) == str(round_))
                     & (decisions["decision_index"].astype("int64") == int(index))]  # type: ignore[call-overload]
    if rows.empty:
        return None
    row = records(rows.head(1))[0]
    try:
        pretty = json.dumps(json.loads(str(row["decision"])), indent=2, ensure_ascii=False)
    except ValueError:
        pretty = str(row["decision"])
    return {**row, "json": pretty, "reasoning": answer_reasoning(row.get("answer_text"))}  # type: ignore[arg-type]


def trade_page(marts: Mapping[str, pd.DataFrame], contestant: str, symbol: str, trip: int,
               season: Season, urls: Urls, days: Sequence[str], *, version: str = "") -> str:
    """One round trip: its numbers, the decision that opened it with the answer's reasoning and
    the decision's JSON, the one that closed it (or the monitor), and the days it spans."""
    check_marts(marts)
    trades = marts["trades"]
    found = trades[(trades["contestant"].astype(str) == contestant)
                   & (trades["symbol"].astype(str) == symbol) & (trades["trip"] == trip)]
    if found.empty:
        raise PageNotFound(f"no trade {symbol} #{trip} of {contestant!r} in season {season.id}")
    trade = records(found.head(1))[0]
    decisions = marts["decisions"]
    opened = _decision_at(decisions, contestant, trade["entry_cycle_at"], trade["entry_round"],
                          trade["entry_decision_index"])
    closed = _decision_at(decisions, contestant, trade.get("exit_cycle_at"),
                          trade.get("exit_round"), trade.get("exit_decision_index"))
    links = Links({day: urls.day(day) for day in days}, decisions, page=urls.contestant)
    return render("site_trade.html.j2", title=f"{contestant}: {symbol} trip {trip}",
                  season=season, links=_nav(urls, days, marts), urls=urls, version=version,
                  trade=trade, columns=TRADE_COLUMNS, opened=opened, closed=closed,
                  opened_href=links.decision(contestant, trade["entry_cycle_at"],
                                             trade["entry_round"],
                                             trade["entry_decision_index"]),
                  opened_day=links.day(trade["opened_at"]),
                  closed_day=links.day(trade["exit_window_end"]
                                       if trade.get("closed_by") == "automatic"
                                       else trade.get("exit_cycle_at")))


def _asset_symbols(marts: Mapping[str, pd.DataFrame]) -> list[str]:
    symbols = set(marts["asset_luck_ceilings"]["symbol"].astype(str))
    symbols |= set(marts["trades"]["symbol"].astype(str))
    return sorted(symbols)


def assets_page(marts: Mapping[str, pd.DataFrame], season: Season, urls: Urls,
                days: Sequence[str], *, version: str = "") -> str:
    """Every asset of the season: its luck ceiling, best reference rule, and a link to its page."""
    check_marts(marts)
    luck = luck_rows(marts["asset_luck_ceilings"], marts["reference_rules"])
    columns = [dataclasses.replace(c, href=lambda r: urls.asset(r["symbol"]))
               if c.key == "symbol" else c for c in LUCK_COLUMNS]
    traded = sorted(set(marts["trades"]["symbol"].astype(str))
                    - set(marts["asset_luck_ceilings"]["symbol"].astype(str)))
    return render("site_assets.html.j2", title=f"Assets: {season.title}", season=season,
                  links=_nav(urls, days, marts), urls=urls, version=version, luck=luck,
                  luck_columns=columns, traded=traded)


def asset_page(marts: Mapping[str, pd.DataFrame], symbol: str, season: Season, urls: Urls,
               days: Sequence[str], *, version: str = "") -> str:
    """One asset: its luck ceiling (the zero-skill players on its path), the reference rules on
    it, the entrants' single-asset tracks on it, and every contestant's trades in it."""
    check_marts(marts)
    if symbol not in _asset_symbols(marts):
        raise PageNotFound(f"no asset {symbol!r} in season {season.id}")
    luck = [r for r in luck_rows(marts["asset_luck_ceilings"], marts["reference_rules"])
            if str(r["symbol"]) == symbol]
    rules = dict(rule_tables(marts["reference_rules"])).get(symbol, [])
    tracks = marts.get("asset_tracks")
    track_rows, share = None, None
    if tracks is not None:
        key = "symbol" if "symbol" in tracks.columns else None
        mine = tracks[tracks[key].astype(str) == symbol] if key else tracks.iloc[0:0]
        track_rows = records(mine.sort_values("entrant")) if "entrant" in mine else records(mine)
        if "eligibility_share" in mine and len(mine):  # 70%, or the season's contest's
            share = f"{float(mine['eligibility_share'].iloc[0]):.0%}"
    trades = marts["trades"]
    trades = trades[trades["symbol"].astype(str) == symbol].sort_values(["opened_at",
                                                                         "contestant"])
    links = Links({day: urls.day(day) for day in days}, marts["decisions"],
                  page=urls.contestant)
    trade_columns = [Column("trip", "trip", "int",
                            href=lambda r: urls.trade(r["contestant"], r["symbol"], r["trip"])),
                     *(dataclasses.replace(c, href=lambda r: urls.contestant(r["contestant"]))
                       if c.key == "contestant" else c
                       for c in people.trade_columns(links) if c.key != "symbol")]
    links_ = _nav(urls, days, marts)
    if urls.entries and season.state == "live":  # the site takes a person's position on it
        links_ = [(f"Enter a position on {symbol}", urls.enter(symbol)), *links_]
    return render("site_asset.html.j2", title=f"{symbol}: {season.title}", season=season,
                  links=links_, urls=urls, version=version, symbol=symbol,
                  luck=luck, luck_columns=LUCK_COLUMNS, rules=rules,
                  rule_columns=RULE_COLUMNS, tracks=track_rows, track_columns=TRACK_COLUMNS,
                  eligibility=share or "its share (70% unless the season is a contest)",
                  trades=records(trades.assign(why=trades["entry_cycle_at"].notna().map(
                      {True: "decision", False: None}))),
                  trade_columns=trade_columns)


CONTEST_MARK = "✓"  # a standing that cleared its asset's luck ceiling


def _contest_columns(marts: Mapping[str, pd.DataFrame], urls: Urls,
                     currency: str) -> tuple[list[Column], list[Column]]:
    """The contest page's two tables: the boundary per asset and the standings, each asset
    linking to its page when the season has one."""
    pages = (set(_asset_symbols(marts)) if {"asset_luck_ceilings", "trades"} <= set(marts)
             else set())
    asset = Column("symbol", "asset",
                   href=lambda r: urls.asset(r["symbol"]) if r["symbol"] in pages else None)
    boundary = [
        asset, Column("fee_rate", "fee", "drawdown"),
        Column("luck_ceiling", "luck ceiling", "return"), Column("entrants", "entrants", "int"),
        Column("eligible_tracks", "eligible", "int"), Column("cleared_tracks", "cleared", "int"),
        Column("leaders", "leader"), Column("best_return", "leader's return", "return"),
        Column("prize_paid", f"prize ({currency})", "money"),
        Column("prize_pool", f"pool ({currency})", "money"),
    ]
    standings = [
        asset, Column("entrant", "entrant"), Column("total_return", "return", "return"),
        Column("luck_percentile", "luck pct", "share"), Column("coverage", "covered", "share"),
        Column("mark", "cleared"), Column("place", "place", "int"),
        Column("prize", f"prize ({currency})", "money"),
    ]
    return boundary, standings


def _standings(marts: Mapping[str, pd.DataFrame]) -> list[dict[str, object]]:
    """The contest's standings as the page lists them: by asset (the contest's order), then
    by place, the unplaced by return; each marked when it cleared the ceiling."""
    frame = marts.get("contest_standings")
    if frame is None or frame.empty:
        return []
    frame = frame.sort_values(["ordinal", "place", "total_return", "entrant"],
                              ascending=[True, True, False, True], na_position="last")
    return [{**r, "mark": CONTEST_MARK if r["cleared"] else ""} for r in records(frame)]


def contest_page(marts: Mapping[str, pd.DataFrame], season: Season, urls: Urls,
                 days: Sequence[str], *, version: str = "") -> str:
    """A contest's page (``contest_boundary``, ``contest_standings``): per asset, its fee, its
    luck ceiling and who cleared it, the leader and the prize paid; then every entrant's track
    on each asset with its place and prize. A season that is not a contest has none."""
    name = contest_name(marts)
    if name is None:
        raise PageNotFound(f"season {season.id} is not a contest (its publication has no "
                           "contest asset)")
    boundary = marts["contest_boundary"].sort_values("ordinal")
    rows = records(boundary)
    currency = str(rows[0]["currency"])
    players = [int(p) for p in boundary["zero_skill_players"].dropna()]
    boundary_columns, standing_columns = _contest_columns(marts, urls, currency)
    return render("site_contest.html.j2", title=f"{name}: {season.title}", season=season,
                  links=_nav(urls, days, marts), urls=urls, version=version, contest=name,
                  boundary=rows, boundary_columns=boundary_columns,
                  standings=_standings(marts), standing_columns=standing_columns,
                  players=max(players) if players else None, mark=CONTEST_MARK,
                  eligibility=rows[0]["eligibility"], currency=currency)


LEAGUE_TOTAL_COLUMNS = [
    Column("contestant", "contestant"), Column("role", "role"), Column("seasons", "seasons", "int"),
    Column("fills", "fills", "int"), Column("round_trips", "closed trips", "int"),
    Column("profitable_share", "profitable trips", "share"),
    Column("mean_return", "mean return", "return"), Column("median_return", "median return",
                                                              "return"),
    Column("chained_return", "chained return", "return"),
    Column("positive_share", "seasons positive", "share"),
    Column("mean_zero_skill_percentile", "mean luck pct", "share"),
    Column("mean_rank_score", "mean rank score", "score"),
    Column("mean_skill_percentile", "mean skill pct", "share"),
]
VERDICT_COLUMNS = [
    Column("model", "model"), Column("role", "role"), Column("instances", "instances", "int"),
    Column("seasons", "seasons", "int"),
    Column("median_skill_percentile", "median skill pct", "share"),
    Column("stouffer_z", "Stouffer Z", "score"), Column("p_value", "p", "num"),
    Column("holm_p_value", "Holm p", "num"), Column("bh_p_value", "BH p", "num"),
    Column("family_size", "tested", "int"), Column("verdict", "verdict", wrap=True),
]
LEAGUE_SEASON_COLUMNS = [
    Column("season_id", "season", href=lambda r: Urls(str(r["season_id"])).home),
    Column("state", "state"), Column("first_cycle", "first cycle", "time"),
    Column("last_cycle", "last cycle", "time"), Column("cycles", "cycles", "int"),
    Column("published", "published"), Column("counted", "counted"), Column("blind", "blind"),
]


def league_page(marts: Mapping[str, pd.DataFrame], *, title: str = "League") -> str:
    """A league's seasons added up: the totals per contestant across the counted seasons, and
    the verdict on skill per model, in words and with how it was computed (the league marts of
    ``arena league publish``)."""
    lacking = [m for m in LEAGUE_PAGES if m not in marts]
    if lacking:
        raise ReportError(f"the league's marts lack {', '.join(lacking)}: publish the league "
                          "(arena league publish)")
    totals = marts["league_totals"]
    verdict = marts["league_verdict"]
    order = {"contestant": 0}
    totals = totals.sort_values(["role", "chained_return"], ascending=[True, False],
                                key=lambda c: c.map(order).fillna(1) if c.name == "role" else c)
    verdict = verdict.sort_values(["role", "holm_p_value", "model"],
                                  key=lambda c: c.map(order).fillna(1) if c.name == "role" else c,
                                  na_position="last")
    methods = sorted({str(m) for m in verdict["method"].dropna()}) if "method" in verdict else []
    nulls = sorted({str(m) for m in verdict["null_hypothesis"].dropna()}) \
        if "null_hypothesis" in verdict else []
    tested = verdict[verdict["family_size"] > 0] if "family_size" in verdict else verdict.iloc[:0]
    shares = [(str(r["role"]), r.get("family_skill_share"), int(r["family_size"]))
              for r in records(tested.drop_duplicates("role"))]
    shares = [(role, None if missing(share) else float(share), n) for role, share, n in shares]
    powers = [(str(r["model"]), str(r["in_words"])) for r in records(verdict)
              if not missing(r.get("in_words"))]
    seasons = marts["league_seasons"].sort_values("ordinal") \
        if "ordinal" in marts["league_seasons"] else marts["league_seasons"]
    return render("site_league.html.j2", title=title, links=[("All seasons", "/seasons/"),
                                                             ("Archive", "/league/archive"),
                                                             ("JSON API", "/api/")],
                  totals=records(totals), total_columns=LEAGUE_TOTAL_COLUMNS,
                  verdicts=records(verdict), verdict_columns=VERDICT_COLUMNS, methods=methods,
                  nulls=nulls, shares=shares, powers=powers, share_family=SHARE_FAMILY,
                  seasons=records(seasons), season_columns=LEAGUE_SEASON_COLUMNS)


def day_page(markdown: str, urls: Urls) -> str:
    """A daily report's page on the site, linking back to the season's leaderboard."""
    return render_daily_html(markdown, back=urls.home)


def seasons_page(seasons: Sequence[Season]) -> str:
    """Every season the site serves, the current (newest) first."""
    rows = [dataclasses.asdict(s) | {"href": Urls(s.id).home} for s in seasons]
    columns = [Column("id", "season", href=lambda r: r["href"]), Column("state", "state"),
               Column("start", "first cycle"), Column("end", "last published"),
               Column("cycles", "cycles", "int"), Column("market", "market"),
               Column("leader", "leading contestant")]
    return render("site_seasons.html.j2", title="Seasons", rows=rows, columns=columns,
                  links=[("JSON API", "/api/")])


__all__: Sequence[str] = ("PageNotFound", "Season", "Urls", "asset_page", "assets_page",
                          "contest_name", "contest_page", "contestant_page", "day_page",
                          "leaderboard_page", "league_page", "seasons_page", "trade_page")
