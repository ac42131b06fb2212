"""A season's published marts written by hand: two contestants over two cycles, with the columns
the season report reads (a subset of each mart's), so a report renders in milliseconds without a
replay or dbt. ``tests/pipeline/test_season_marts.py`` renders the report of real marts."""

from __future__ import annotations

import json

import pandas as pd

C1, C2 = pd.Timestamp("2026-10-01 16:00", tz="UTC"), pd.Timestamp("2026-10-02 16:00", tz="UTC")
NaT = pd.NaT
NAN = float("nan")


def _answer(reasoning: str, decisions: list[dict]) -> str:
    return json.dumps({"reasoning": reasoning, "decisions": decisions})


def tiny_marts(name: str = "alpha", reasoning: str = "ETH keeps trending", *,
               thesis: str = "trend intact", late: bool = False) -> dict[str, pd.DataFrame]:
    """The marts of a season where the contestant ``name`` (first) opened and closed ETH, with
    ``reasoning`` in its first answer and ``thesis`` on the trade, and the house rule
    ``momentum`` (a ruler: no place) still holds BTC; ``late``: momentum entered at the second
    cycle."""
    opening = {"action": "open_long", "symbol": "ETH", "size_pct": 10, "thesis": thesis}
    board = pd.DataFrame({
        "place": [1, None], "contestant": [name, "momentum"], "role": ["contestant", "ruler"],
        "market": ["SYNTHETIC"] * 2,
        "cycles": [2, 2], "final_equity": [10_523.0, 9_990.0], "total_return": [0.0523, -0.001],
        "sharpe": [NAN, -1.25], "max_drawdown": [0.0, 0.0021], "win_rate": [1.0, NAN],
        "fills": [2, 1], "round_trips": [1, 0], "automatic_closes": [0, 0],
        "excess_vs_btc": [0.04, -0.013], "excess_vs_spy": [0.05, -0.003],
        "excess_vs_universe": [0.045, -0.006], "zero_skill_percentile": [0.797, 0.41], "skill_percentile": [0.66, 0.5],
        "rank_score": [0.692, 0.229], "model_calls": [2, 0], "cost_usd": [NAN, 0.0],
        "pricing": ["unpriced", "priced"],
        "pnl_per_call_dollar": [NAN, NAN], "outside_entrant": [False, False],
        "first_cycle_at": [C1, C2 if late else C1],
    })
    equity = pd.DataFrame({"contestant": [name, name, "momentum", "momentum"],
                           "cycle_at": [C1, C2, C1, C2],
                           "equity": [10_000.0, 10_523.0, 10_000.0, 9_990.0],
                           "drawdown": [0.0, 0.0, 0.0, 0.001]})
    band = pd.DataFrame({"cycle_at": [C1, C2], "q05_equity": [10_000.0, 9_800.0],
                         "q50_equity": [10_000.0, 10_000.0], "q95_equity": [10_000.0, 10_200.0],
                         "players": [200, 200]})
    benchmarks = pd.DataFrame({"benchmark": ["BTC", "BTC"], "cycle_at": [C1, C2],
                               "equity": [10_000.0, 10_123.0]})
    trades = pd.DataFrame({
        "contestant": [name, "momentum"], "symbol": ["ETH", "BTC"], "trip": [1, 1],
        "side": ["long", "long"], "status": ["closed", "open"], "opened_at": [C1, C2],
        "closed_at": [C2, NaT], "holding_days": [1.0, NAN], "entry_price": [100.0, 50_000.0],
        "exit_price": [105.0, NAN], "fees": [0.2, 0.5], "net_pnl": [523.0, NAN],
        "closed_by": ["decision", None], "entry_cycle_at": [C1, C2],
        "entry_round": ["answer", "answer"], "entry_decision_index": [0, 0],
        "thesis": [thesis, "momentum up"], "exit_cycle_at": [C2, NaT],
        "exit_window_end": [NaT, NaT],
    })
    positions = pd.DataFrame({
        "contestant": ["momentum"], "cycle_at": [C2], "symbol": ["BTC"], "side": ["long"],
        "quantity": [0.02], "entry_price": [50_000.0], "opened_at": [C2], "trip": [1],
        "thesis": ["momentum up"], "mark_price": [49_500.0], "unrealised_pnl": [-10.0],
    })
    decisions = pd.DataFrame({
        "contestant": [name, name, "momentum"], "cycle_at": [C1, C2, C2],
        "round": ["answer"] * 3, "decision_index": [0, 0, 0],
        "action": ["open_long", "close", "open_long"], "symbol": ["ETH", "ETH", "BTC"],
        "thesis": [thesis, None, "momentum up"], "accepted": [True, True, True],
        "decision": [json.dumps(opening), json.dumps({"action": "close", "symbol": "ETH"}),
                     json.dumps({"action": "open_long", "symbol": "BTC"})],
        "answer_text": [_answer(reasoning, [opening]), _answer("take profit", []), None],
    })
    rejections = pd.DataFrame({
        "contestant": [name], "cycle_at": [C2], "round": ["answer"], "code": ["stale_price"],
        "rejections": [1], "symbols": [["SOL"]], "example_message": [f"{name} was late"],
    })
    calls = pd.DataFrame({"contestant": [name, "momentum"], "cycles": [2, 2], "traded": [2, 1],
                          "no_trade": [0, 1], "forfeited": [0, 0], "skipped": [0, 0],
                          "calls": [2, 0], "tokens_in": [900, 0], "tokens_out": [120, 0],
                          "cost_usd": [NAN, 0.0], "pricing": ["unpriced", "priced"],
                          "mean_latency_s": [1.5, NAN]})
    luck = pd.DataFrame({"symbol": ["ETH"], "asset_class": ["crypto"], "grid": ["1d"],
                         "bars": [2], "players": [200], "q05_return": [-0.05],
                         "q50_return": [0.0], "luck_ceiling": [0.06]})
    rules = pd.DataFrame({"symbol": ["ETH", "ETH"], "rule": ["buy_and_hold", "sma_cross"],
                          "kind": ["rule", "rule"], "total_return": [0.05, -0.01],
                          "turnover": [1.0, 2.0], "fees": [0.001, 0.002],
                          "percentile": [0.8, 0.4], "rank_score": [0.7, 0.22],
                          "beats_luck_ceiling": [False, False]})
    correlations = pd.DataFrame({"symbol_a": ["BTC", "BTC", "ETH", "ETH"],
                                 "symbol_b": ["BTC", "ETH", "BTC", "ETH"],
                                 "correlation": [1.0, 0.8, 0.8, 1.0]})
    return {"leaderboard": board, "equity_daily": equity, "zero_skill_band": band,
            "benchmark_equity": benchmarks, "trades": trades, "positions": positions,
            "decisions": decisions, "rejections": rejections, "model_calls": calls,
            "asset_luck_ceilings": luck, "reference_rules": rules, "asset_correlations": correlations}
