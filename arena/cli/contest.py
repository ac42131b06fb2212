"""``arena contest init``: a contest's season (FINCHAL's by default)."""

from __future__ import annotations

from typing import Annotated

import cyclopts
from cyclopts import Parameter

from arena.cli._options import (
    CryptoSource,
    Days,
    Json,
    Roster,
    SeasonLake,
    Seed,
    StockSource,
    Within,
)
from arena.cli._render import market_text, print_json

contest_app = cyclopts.App(name="contest", help="a contest: single-asset tracks with their own "
                           "fees, eligibility and prizes (FINCHAL's by default)",
                           version_flags=[])

Share = Annotated[float, Parameter(validator=Within(0, 1, above=True, whole=False))]


@contest_app.command
def init(*, start: str, days: Days = 122, assets: str = "NVDA,BTC,GLD,USO",
         fee: tuple[str, ...] = (), prizes: str = "500", eligibility: Share = 0.70,
         max_correlation: Share = 0.70,
         correlation_days: Annotated[int, Parameter(validator=Within(30, 3660))] = 1095,
         name: str = "FINCHAL", id: str | None = None, crypto: CryptoSource = "synthetic",
         stocks: StockSource = "synthetic", seed: Seed = None, roster: Roster = None,
         lake: SeasonLake = None, json: Json = False) -> int:
    """Write a contest's season into a lake, once its assets pass the correlation check.

    Parameters
    ----------
    start
        the contest's first day, ISO date
    assets
        comma-separated house symbols (default: FINCHAL's NVIDIA, Bitcoin, gold and crude oil)
    fee
        SYMBOL=RATE, the cost per unit of position change of an asset's track and zero-skill
        players (repeatable; default: FINCHAL's 0.0006 BTC, 0.0003 USO, 0.0002 NVDA and GLD,
        else the asset's calendar's)
    prizes
        comma-separated prize of each place among an asset's eligible tracks, the best first
        (the same for every asset; ties share the places they take); 0 for none
    eligibility
        share of an asset's season a track must cover to be ranked
    max_correlation
        the largest absolute correlation of daily returns two assets may have
    correlation_days
        days of daily history before the start the check reads
    id
        season id (default: <start>-<providers>)
    json
        print the season config as JSON
    """
    from arena.app.contest import start_contest
    from arena.app.params import parse_day, symbol_list
    from arena.core.errors import BadArgument
    from arena.data.lake import Lake
    from arena.pipeline.contest import finchal
    from arena.pipeline.season_config import default_providers

    rates = dict(_fee(item) for item in fee)
    try:
        places = tuple(float(p) for p in prizes.split(",") if p.strip())
    except ValueError:
        raise BadArgument(f"--prizes {prizes!r}: give the prizes as numbers, e.g. 500,200"
                          ) from None
    contest = finchal(symbol_list(assets), prizes=places, fees=rates, name=name,
                      eligibility=eligibility, max_correlation=max_correlation,
                      correlation_days=correlation_days)
    started = start_contest(Lake(lake), contest, parse_day(start, "--start"), days,
                            providers=default_providers(crypto, stocks), seed=seed,
                            roster=roster, season_id=id)
    config, rules = started.config, started.config.contest
    if json:
        print_json(config.to_json())
        return 0
    fees = ", ".join(f"{s} {r:.2%}" for s, r in rules.fees.items())
    pool = f"{rules.prize_pool:,.0f} {rules.currency}"
    print(f"contest {rules.name} ({config.id}) in {Lake(lake).root}: {config.days} days from "
          f"{config.first:%Y-%m-%d} to {config.last:%Y-%m-%d} ({market_text(config)}); fees "
          f"{fees}; a track is ranked from {rules.eligibility:.0%} of its asset's season; "
          f"prizes {pool} in all")
    print(f"correlations of daily returns over the {rules.correlation_days} days before the "
          f"start (each pair at most {rules.max_correlation:g} either way):")
    print(started.check.table())
    return 0


def _fee(item: str) -> tuple[str, float]:
    """``SYMBOL=RATE`` of ``--fee``, read."""
    from arena.core.errors import BadArgument

    symbol, sep, rate = item.partition("=")
    try:
        if sep and symbol.strip():
            return symbol.strip(), float(rate)
    except ValueError:
        pass
    raise BadArgument(f"--fee {item!r}: give SYMBOL=RATE, e.g. --fee USO=0.0003")
