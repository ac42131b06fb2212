"""The site's pages rendered from a hand-made season's marts (``tiny_marts``): what each page
shows and links, without a server (``tests/doors/test_web.py`` serves a real season)."""

from __future__ import annotations

import html
import math

import numpy as np
import pandas as pd
import pytest

from arena.reporting import site
from arena.reporting.season import ReportError
from tests.reporting.tiny_marts import C1, C2, tiny_marts

SEASON = site.Season("s1", "Season s1", "SYNTHETIC", "2026-10-01", "2026-10-02", 2, "live")
URLS = site.Urls("s1")
DAYS = ["2026-10-01", "2026-10-02"]


def shown(text: str) -> str:
    return html.unescape(text)


def test_the_leaderboard_ranks_the_contestants_and_keeps_the_rulers_apart():
    page = shown(site.leaderboard_page(tiny_marts(), SEASON, URLS, DAYS, version="v1"))
    assert '<a href="/seasons/s1/contestants/alpha">alpha</a></strong>\nleads the contestants' in page
    assert "The best house rule (a ruler, not ranked) is" in page
    assert page.index('href="/seasons/s1/contestants/alpha"') < page.index(
        'href="/seasons/s1/contestants/momentum"')
    assert '<meta name="arena-version" content="v1">' in page
    assert page.count('href="/seasons/s1/days/') == 3  # the two days and the latest
    assert "replicated models" not in page.lower()  # none in this season


def test_a_contaminated_season_is_marked_beside_its_model():
    """A season its model may have read (the leaderboard's contaminated) is said beside the
    name, with the cutoff; a board where nobody is contaminated has no such column."""
    marts = tiny_marts()
    assert "knowledge" not in shown(site.leaderboard_page(marts, SEASON, URLS, DAYS))
    board = marts["leaderboard"]
    marts["leaderboard"] = board.assign(contaminated=board["contestant"] == "alpha",
                                        knowledge_cutoff=np.where(board["contestant"] == "alpha",
                                                                  "2024-10", None))
    page = shown(site.leaderboard_page(marts, SEASON, URLS, DAYS))
    assert ">knowledge<" in page and ">contaminated (cutoff 2024-10)<" in page
    assert page.count("contaminated (") == 1


def test_a_replicated_model_shows_its_median_and_spread():
    marts = tiny_marts()
    marts["replicates"] = pd.DataFrame({
        "replicate_of": ["gpt"], "instances": [3], "median_return": [0.012],
        "min_return": [-0.005], "max_return": [0.029], "return_iqr": [0.017],
        "median_zero_skill_percentile": [0.61], "zero_skill_q05_return": [-0.031],
        "zero_skill_median_return": [0.0012], "zero_skill_q95_return": [0.0352]})
    page = shown(site.leaderboard_page(marts, SEASON, URLS, DAYS))
    assert "Replicated models: median and spread" in page
    assert ">+1.20%<" in page and ">-0.50%<" in page and ">+2.90%<" in page


def test_a_contestants_page_links_each_trade_to_its_page_and_its_decision():
    page = shown(site.contestant_page(tiny_marts(reasoning="ETH keeps trending"), "alpha",
                                      SEASON, URLS, DAYS))
    assert "#1 of the contestants" in page
    assert 'href="/seasons/s1/trades/alpha/ETH/1"' in page
    assert 'href="/seasons/s1/contestants/alpha#d-alpha-' in page  # "decision"
    assert "ETH keeps trending" in page  # the answer's reasoning, in the decisions
    assert 'href="/seasons/s1/assets/ETH"' in page
    ruler = shown(site.contestant_page(tiny_marts(), "momentum", SEASON, URLS, DAYS))
    assert "a ruler (a house rule: the yardstick, not ranked)" in ruler
    with pytest.raises(site.PageNotFound, match="no contestant named 'zeta'"):
        site.contestant_page(tiny_marts(), "zeta", SEASON, URLS, DAYS)


def test_a_trades_page_shows_the_opening_decision_and_how_it_closed():
    marts = tiny_marts(reasoning="ETH keeps trending", thesis="trend intact")
    unnamed = shown(site.trade_page(marts, "alpha", "ETH", 1, SEASON, URLS, DAYS))
    assert "The decision is not in the published marts." in unnamed  # no exit decision named
    marts["trades"] = marts["trades"].assign(exit_round=["answer", None],
                                             exit_decision_index=[0, None])
    page = shown(site.trade_page(marts, "alpha", "ETH", 1, SEASON, URLS, DAYS))
    assert "<blockquote>ETH keeps trending</blockquote>" in page
    assert '"action": "open_long"' in page and "Thesis:</strong> trend intact" in page
    assert f'href="/seasons/s1/days/{C1:%Y-%m-%d}"' in page
    assert '"action": "close"' in page  # closed by its decision of the second cycle
    held = shown(site.trade_page(marts, "momentum", "BTC", 1, SEASON, URLS, DAYS))
    assert "Still open at the last published cycle." in held
    with pytest.raises(site.PageNotFound, match="no trade ETH #2 of 'alpha'"):
        site.trade_page(marts, "alpha", "ETH", 2, SEASON, URLS, DAYS)


def test_an_assets_page_names_what_its_publication_lacks():
    marts = tiny_marts()
    page = shown(site.asset_page(marts, "ETH", SEASON, URLS, DAYS))
    assert "This season's publication has no single-asset track table." in page
    assert "buy_and_hold" in page and 'href="/seasons/s1/trades/alpha/ETH/1"' in page
    # an asset traded without a luck table still has a page; an unknown one has none
    assert "no luck table for this asset" in shown(site.asset_page(marts, "BTC", SEASON, URLS,
                                                                    DAYS))
    with pytest.raises(site.PageNotFound, match="no asset 'DOGE'"):
        site.asset_page(marts, "DOGE", SEASON, URLS, DAYS)
    marts["asset_tracks"] = pd.DataFrame({
        "entrant": ["outsider"], "symbol": ["ETH"], "status": ["scored"],
        "total_return": [0.031], "coverage": [0.75], "eligible": [True],
        "luck_percentile": [0.66], "rank_score": [-math.log10(1 - 0.66)]})
    tracked = shown(site.asset_page(marts, "ETH", SEASON, URLS, DAYS))
    assert "outsider" in tracked and ">+3.10%<" in tracked and ">75.0%<" in tracked


def test_pages_refuse_marts_a_publication_lacks():
    marts = tiny_marts()
    del marts["decisions"]
    with pytest.raises(ReportError, match="lack decisions"):
        site.leaderboard_page(marts, SEASON, URLS, DAYS)
    assert C2 > C1


def league_marts() -> dict[str, pd.DataFrame]:
    """A league's marts as ``arena league publish`` writes them: two seasons, one contestant
    flagged, one not, a ruler and a newcomer with too few seasons."""
    seasons = pd.DataFrame({"ordinal": [1, 2], "season_id": ["s1", "s2"],
                            "state": ["closed", "closed"],
                            "first_cycle": [C1, C2], "last_cycle": [C1, C2], "cycles": [1, 1],
                            "published": [True, True], "counted": [True, True]})
    totals = pd.DataFrame({"contestant": ["alpha", "beta", "momentum"],
                           "role": ["contestant", "contestant", "ruler"], "seasons": [2, 2, 2],
                           "fills": [10, 4, 6], "round_trips": [4, 2, 3],
                           "profitable_share": [0.75, 0.5, 1 / 3], "mean_return": [0.04, -0.01,
                                                                                   0.002],
                           "median_return": [0.04, -0.01, 0.002],
                           "chained_return": [0.0816, -0.0199, 0.004004],
                           "mean_zero_skill_percentile": [0.99, 0.4, 0.55],
                           "mean_rank_score": [2.0, 0.22, 0.35]})
    verdict = pd.DataFrame({
        "model": ["alpha", "beta", "gamma", "momentum"],
        "role": ["contestant", "contestant", "contestant", "ruler"],
        "instances": [1, 1, 1, 1], "seasons": [2, 2, 1, 2],
        "median_skill_percentile": [0.995, 0.4, 0.7, 0.55],
        "stouffer_z": [3.29, -0.36, None, 0.18], "p_value": [0.0005, 0.64, None, 0.43],
        "fisher_p_value": [0.0004, 0.6, None, 0.4], "holm_p_value": [0.001, 0.64, None, 0.43],
        "bh_p_value": [0.001, 0.64, None, 0.43], "family_size": [2, 2, 0, 1],
        "family_skill_share": [0.5, 0.5, None, None],
        "in_words": ["With 2 seasons tested among 2, an edge that places it at percentile 90 ...",
                     "With 2 seasons tested among 2, ...",
                     "Not tested: 1 season with positions; the verdict needs at least 2.",
                     "With 2 seasons tested alone, ..."],
        "null_hypothesis": ["no skill: ... relabelled at random ..."] * 4,
        "verdict": ["evidence of skill at 5% after correction", "not distinguishable from luck",
                    "too few seasons", "not distinguishable from luck"],
        "method": ["Stouffer's Z over the mid-rank luck percentiles, Holm-Bonferroni over 2 "
                   "contestants", None, None, "Stouffer's Z ..., Holm over 1 ruler"]})
    return {"league_seasons": seasons, "league_totals": totals, "league_verdict": verdict}


def test_a_leagues_page_gives_the_verdict_in_words_and_how_it_was_computed():
    page = shown(site.league_page(league_marts(), title="League main"))
    assert page.index("evidence of skill at 5% after correction") < page.index(
        "not distinguishable from luck") < page.index("too few seasons")
    assert "Holm-Bonferroni over 2 contestants" in page  # how it was computed
    assert "a small p-value says\nthey are too high to be luck" in page
    assert "simply long in a rising market sits in the middle" in page
    assert "Not tested: 1 season with positions" in page  # what its seasons could detect
    assert "an estimated 50% have\nskill" in page and "The null hypothesis: no skill" in page
    assert "1 ruler tested: too few to estimate the share of them\nwith skill" in page
    assert "<strong>gamma</strong>: Not tested: 1 season with positions" in page
    assert 'href="/seasons/s1/"' in page and 'href="/seasons/s2/"' in page
    assert ">+8.16%<" in page and ">75.0%<" in page  # alpha's chained return, profitable share
    marts = league_marts()
    del marts["league_verdict"]
    with pytest.raises(ReportError, match="lack league_verdict"):
        site.league_page(marts)


def test_every_page_of_a_synthetic_season_says_its_prices_are_invented():
    """The banner is on every page of a season on the synthetic market (the front page
    included), above all, and on none of a season on real prices."""
    real = site.Season("s1", "Season s1", "ccxt+yfinance", "2026-10-01", "2026-10-02", 2, "live")
    marts = tiny_marts()
    for season in (SEASON, real):
        pages = {
            "front": site.leaderboard_page(marts, season, URLS, DAYS),
            "contestant": site.contestant_page(marts, "alpha", season, URLS, DAYS),
            "assets": site.assets_page(marts, season, URLS, DAYS),
            "asset": site.asset_page(marts, "ETH", season, URLS, DAYS),
            "trade": site.trade_page(marts, "alpha", "ETH", 1, season, URLS, DAYS),
        }
        for name, page in pages.items():
            banner = '<p class="banner" role="alert">SYNTHETIC market data: not real prices</p>'
            assert (banner in page) == (season is SEASON), (season.market, name)
