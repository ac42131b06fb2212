"""The marts the product publishes, named once.

A season's marts are dbt models of ``dbt_project/models/marts/`` that a publication copies into
``<lake>/marts/<mart>.parquet`` and the warehouse's schema ``marts``; a league's are the models
of ``dbt_project/models/league/``, published into ``<league>/marts/``. Every reader takes its
list from here: the publication (:mod:`arena.pipeline.warehouse`, :mod:`arena.pipeline.league_marts`),
the site's pages (the marts they need) and its JSON API (the marts it serves), and the tests that
hold the dbt project's models and exposures to it (``tests/pipeline/test_report_marts.py``). A new
mart is one line below (and its model with its YAML).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mart:
    """One published mart: its name (the dbt model's), what one row is, and whether the site's
    pages need it (a publication without it is named, not guessed at)."""

    name: str
    grain: str
    pages: bool = False


SEASON: tuple[Mart, ...] = (
    Mart("leaderboard", "contestant", pages=True),
    Mart("equity_daily", "contestant, cycle", pages=True),
    Mart("positions", "contestant, cycle, asset", pages=True),
    Mart("trades", "round trip", pages=True),
    Mart("asset_luck_ceilings", "asset", pages=True),
    Mart("reference_rules", "asset, rule", pages=True),
    Mart("model_calls", "contestant", pages=True),
    Mart("rejections", "contestant, cycle, round, reason code", pages=True),
    Mart("zero_skill_band", "cycle", pages=True),
    Mart("zero_skill_band_by_contestant", "contestant, cycle"),
    Mart("asset_correlations", "asset pair"),
    Mart("decisions", "contestant, cycle, round, decision", pages=True),
    Mart("benchmark_equity", "cycle, benchmark", pages=True),
    Mart("replicates", "replicated model"),
    Mart("asset_tracks", "outside entrant, asset"),
    Mart("contest_standings", "contest entrant, asset"),
    Mart("contest_boundary", "contest asset"),
    Mart("matched_players", "contestant or replicated model, matched player"),
    Mart("blind_names", "asset of a blind season (rows once the season has ended)"),
)
LEAGUE: tuple[Mart, ...] = (
    Mart("league_seasons", "season", pages=True),
    Mart("league_results", "season, contestant"),
    Mart("league_totals", "contestant", pages=True),
    Mart("league_verdict", "model", pages=True),
    Mart("league_archive", "league (one row: its headline figures)"),
)

SEASON_MARTS: tuple[str, ...] = tuple(m.name for m in SEASON)  # published, and served by the API
LEAGUE_MARTS: tuple[str, ...] = tuple(m.name for m in LEAGUE)
SEASON_PAGES: tuple[str, ...] = tuple(m.name for m in SEASON if m.pages)  # a season's pages need
LEAGUE_PAGES: tuple[str, ...] = tuple(m.name for m in LEAGUE if m.pages)  # a league's page needs
