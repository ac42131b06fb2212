"""``arena validate``, ``arena check`` and the luck ruler: ``arena score``, ``arena luck``,
``arena rules`` - each reads files, runs one pure stage and prints its result."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from arena.cli._options import (
    MAX_PLAYERS,
    PLAYERS_RANGE,
    CostRate,
    Interval,
    Prices,
    RandomSeed,
    whole,
)
from arena.cli._render import console, print_json, text_table

Calendar = Literal["24/7", "XNYS", "FX"]
Players = Annotated[int, whole(1, MAX_PLAYERS, f"zero-skill players ({PLAYERS_RANGE})")]


def validate(path: str, /, *, interval: Interval | None = None,
             calendar: Calendar | None = None, symbol: str | None = None,
             as_of: str | None = None, json: bool = False) -> int:
    """Run the candle expectations on a price file or a lake partition.

    Exit 0 passed, 1 failed (each failed check named), 2 unusable input.

    Parameters
    ----------
    path
        CSV/Parquet price file, or a lake partition directory
    interval
        bar interval (default 1d; a partition's own)
    calendar
        trading calendar (default XNYS; FX: Sunday to Friday 5 pm New York, intraday only)
    symbol
        symbol to name in messages
    as_of
        judge staleness at this time (default: the file's last bar)
    json
        machine-readable result
    """
    from arena.app.params import optional_time
    from arena.core.universe import UniverseError, load_universe
    from arena.data.validation.checks import UnusableInputError, validate_file

    file = Path(path)
    if file.is_dir():  # a lake partition: read its address from the path
        parts = dict(p.split("=", 1) for p in file.parts if "=" in p)
        symbol = symbol or parts.get("symbol")
        interval = interval or parts.get("interval")  # type: ignore[assignment]
        if calendar is None and symbol:
            try:
                calendar = load_universe()[symbol].calendar  # type: ignore[assignment]
            except UniverseError:
                calendar = None
        file = file / "data.parquet"
    try:
        report = validate_file(file, interval=interval or "1d", calendar=calendar or "XNYS",
                               as_of=optional_time(as_of, "--as-of"), symbol=symbol)
    except (FileNotFoundError, UnusableInputError) as exc:
        if json:
            print_json({"path": str(file), "usable": False, "error": str(exc)})
        raise UnusableInputError(f"unusable input: {exc}") from exc
    if json:
        print_json({"path": str(file), "usable": True, **report.to_dict()})
    else:
        print(f"{file}: {report.summary()}")
        for r in report.failed():
            print(f"  FAILED {r.check}: {r.message}")
    return 0 if report.success else 1


def check(*, state: str, answer: str, prices: Prices, at: str, json: bool = False) -> int:
    """Dry-run one answer against a portfolio state and prices.

    Exit 0 everything parsed and executed, 1 something was rejected or did not parse, 2 an
    input file is unusable.

    Parameters
    ----------
    state
        STATE.json: cash, positions, cycle so far
    answer
        the model's raw answer (JSON, maybe fenced)
    prices
        PRICES.json: symbol -> cycle price
    at
        cycle time, ISO-8601 UTC
    json
        machine-readable result
    """
    from arena.app.params import parse_time
    from arena.engine.check import render_check, run_check

    report = run_check(Path(state), Path(answer), Path(prices), parse_time(at, "--at"))
    if json:
        print_json(report)
    else:
        print(render_check(report))
    return 0 if report["parsed"] and not report["rejections"] else 1


def _inputs(prices: Prices, cost_rate: float | None):
    """The bars of a price file, the cost rate (the calendar's default when None), the
    calendar and the grid inferred from the file."""
    import pandas as pd

    from arena.data.validation.checks import UnusableInputError, load_price_file
    from arena.market.clocks import infer_grid
    from arena.scoring.scorer import ScorerInputError, default_cost_rate

    try:
        bars = load_price_file(prices)
    except (UnusableInputError, FileNotFoundError) as exc:
        raise ScorerInputError(f"prices file {prices}: {exc}") from exc
    if len(bars) < 2:
        raise ScorerInputError(f"prices file {prices} has {len(bars)} bar(s); need two")
    calendar, grid = infer_grid(pd.DatetimeIndex(bars["timestamp"]))
    rate = default_cost_rate(calendar) if cost_rate is None else cost_rate
    return bars, rate, calendar, grid


def score(*, prices: Prices, positions: str, cost_rate: CostRate = None,
          json: bool = False) -> int:
    """Score a position series on a price file.

    Parameters
    ----------
    positions
        CSV timestamp,position (held until replaced)
    json
        machine-readable result (fractions)
    """
    from arena.scoring.rules_table import load_positions
    from arena.scoring.scorer import score as run
    from arena.scoring.self_check import ensure_self_checked

    ensure_self_checked()
    bars, rate, calendar, grid = _inputs(prices, cost_rate)
    closes = bars.set_index("timestamp")["close"]
    result = run(closes, load_positions(positions, closes.index), rate)
    if json:
        print_json({**result.as_dict(), "cost_rate": rate, "grid": grid, "calendar": calendar})
    else:
        print(f"return {result.total_return:+.4%}  turnover {result.turnover:.2f}  "
              f"fees {result.fees:.4%}  valid {result.valid_share:.0%}  "
              f"({len(closes)} {grid} bars, cost rate {rate:g})")
    return 0


def luck(*, prices: Prices, players: Players = 20_000, seed: RandomSeed = 0,
         step: Literal["1d", "bar"] = "1d", draw: Literal["uniform", "sign"] = "uniform",
         entrant: str | None = None, cost_rate: CostRate = None, json: bool = False) -> int:
    """Zero-skill distribution, luck ceiling, an entrant's rank.

    Parameters
    ----------
    step
        decision step
    draw
        position draw: uniform on [-1, 1], or -1/0/+1
    entrant
        positions CSV to place among the players
    json
        machine-readable result (fractions)
    """
    from arena.app.params import at_least
    from arena.scoring.asset_luck import luck as simulate
    from arena.scoring.rules_table import load_positions
    from arena.scoring.scorer import score as run
    from arena.scoring.self_check import ensure_self_checked

    ensure_self_checked()
    bars, rate, calendar, grid = _inputs(prices, cost_rate)
    closes = bars.set_index("timestamp")["close"]
    result = simulate(closes, players=at_least(players, 1, "--players"), seed=seed,
                      cost_rate=rate, step=step, calendar=calendar, draw=draw)
    payload = {**result.as_dict(), "grid": grid, "calendar": calendar}
    if entrant:
        scored = run(closes, load_positions(entrant, closes.index), rate)
        p, rank = result.place(scored.total_return)
        payload.update(entrant_return=scored.total_return, percentile=p, rank_score=rank)
    if json:
        print_json(payload)
        return 0
    q = payload["quantiles"]
    print(f"{payload['players']:,} zero-skill players on {payload['bars']} {grid} bars "
          f"({payload['steps']} decisions, cost rate {rate:g}, seed {seed})")
    print("  quantiles  " + "  ".join(f"{k}: {v:+.2%}" for k, v in q.items()))
    print(f"  luck ceiling (95th percentile): {payload['ceiling']:+.2%}")
    if entrant:
        print(f"  entrant {payload['entrant_return']:+.2%}: percentile {payload['percentile']:.3f}, "
              f"rank score {payload['rank_score']:.2f}")
    return 0


def rules(*, prices: Prices, start: str | None = None, players: Players = 20_000,
          seed: RandomSeed = 0, cost_rate: CostRate = None, json: bool = False) -> int:
    """The reference-rules table of a price file.

    Parameters
    ----------
    start
        score from this date on (indicators use the whole file)
    json
        machine-readable result (fractions)
    """
    from arena.app.params import at_least, optional_time
    from arena.market.clocks import PERIODS_PER_YEAR
    from arena.scoring.rules_table import rules_table

    bars, rate, calendar, grid = _inputs(prices, cost_rate)
    table, ruler = rules_table(bars, cost_rate=rate, start=optional_time(start, "--start"),
                               players=at_least(players, 1, "--players"), seed=seed,
                               calendar=calendar,
                               periods_per_year=PERIODS_PER_YEAR[(calendar, grid)])
    if json:
        rows = table.astype(object).where(table.notna(), None)  # no result: null, not NaN
        print_json({"grid": grid, "calendar": calendar, "cost_rate": rate,
                    "luck": ruler.as_dict(), "rules": rows.to_dict(orient="records")})
        return 0
    print(f"reference rules on {ruler.bars} {grid} bars (cost rate {rate:g}); luck ceiling "
          f"{ruler.ceiling:+.2%} from {ruler.players:,} zero-skill players")
    shown = text_table(("#", "right"), "rule", ("return", "right"), ("turnover", "right"),
                       ("fees", "right"), ("percentile", "right"), ("rank score", "right"))
    for row in table.itertuples():  # row._3: the "return" column (a keyword, so no attribute)
        if row.status != "scored":  # too little history before --start for the rule's window
            shown.add_row("", row.rule, f"n/a: needs {row.needed_bars} bars before --start, "
                          f"has {row.history_bars}", "", "", "", "")
            continue
        shown.add_row(str(int(row.rank)) if row.kind == "rule" else "", row.rule, f"{row._3:+.2%}",
                      f"{row.turnover:.1f}", f"{row.fees:.2%}", f"{row.percentile:.3f}",
                      f"{row.rank_score:.2f}")
    console().print(shown)
    return 0
