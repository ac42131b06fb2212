"""The splice check on real and synthetic series: its false-positive rate and what it catches.

* False positives: bars the splice check rejects (see ``ValidationConfig``) out of the bars it
  judges, on the committed real series (GOOG daily 2004-2013 with the 2008 crash, EURUSD hourly
  2017, the S&P 500 and NASDAQ Composite daily 1999-2018, each validated alone: no market
  series) and on a year of the synthetic market at every interval the lake stores, each interval
  validated as one batch (so the benchmark and the batch median are the market, as at ingest).
* Power: on the real series, a level shift without volume (5%, an unadjusted 2:1 split, a 10x
  unit error) placed at ``--shifts`` random calm and busy bars; the share of them rejected.

    python benchmarks/jump_check.py [--days 365] [--shifts 40]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from arena.core.sessions import FX, NYSE
from arena.core.settings import prepare_process
from arena.core.universe import load_universe
from arena.data.ingest import derive_complete
from arena.data.price_files import load_price_file
from arena.data.providers.synthetic import SyntheticProvider
from arena.data.validation import stats as cs
from arena.data.validation.config import ValidationConfig, Window

PRICES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "prices"
CONFIG = ValidationConfig()


def rejected(frame: pd.DataFrame) -> pd.Series:
    """The rows the splice expectation rejects (the rule of expectations/custom.py)."""
    explained = (frame[cs.ABS_LOG_RETURN] < np.log(CONFIG.max_explained_factor)) & (
        (frame[cs.VOLUME_RATIO] >= CONFIG.splice_volume_multiple) | (frame[cs.JUMP_REVERTED] == 1)
        | (frame[cs.JUMP_TRADED] >= CONFIG.traded_share)
        | ((frame[cs.JUMP_FOLLOWED] >= CONFIG.follow_sigmas)
           & (frame[cs.JUMP_FOLLOWED] >= CONFIG.follow_share * frame[cs.JUMP_SIGMAS])))
    return (frame[cs.JUMP_SIGMAS] > CONFIG.splice_sigmas) & ~explained


def judge(bars: pd.DataFrame, windows: list[Window]) -> pd.DataFrame:
    return cs.prepare(bars, windows, as_of=None, config=CONFIG)[0]


def rate_line(name: str, frame: pd.DataFrame) -> str:
    judged = int(frame[cs.JUMP_SIGMAS].notna().sum())
    bad = frame[rejected(frame)]
    shown = ", ".join(f"{r.symbol} {r.timestamp:%Y-%m-%d %H:%M} ({r.jump_return:+.1%}, "
                      f"{r.jump_sigmas:.1f} sigmas, volume {r.volume_ratio:.1f}x)"
                      for r in bad.head(3).itertuples())
    return (f"{name:<24} {len(bad):>4} of {judged:>7} judged bars rejected "
            f"({len(bad) / max(judged, 1):.4%}){'  e.g. ' + shown if shown else ''}")


def real_series() -> dict[str, tuple[pd.DataFrame, Window]]:
    goog = load_price_file(PRICES / "GOOG.csv").assign(symbol="GOOG", interval="1d")
    eurusd = load_price_file(PRICES / "EURUSD_1h.csv").assign(symbol="EURUSD", interval="1h")
    series = {"GOOG 1d (real)": (goog, Window("GOOG", "1d", NYSE)),
              "EURUSD 1h (real)": (eurusd, Window("EURUSD", "1h", FX))}
    for name in ("SP500", "NASDAQ"):
        bars = load_price_file(PRICES / f"{name}_1d.csv.gz").assign(symbol=name, interval="1d")
        series[f"{name} 1d (real)"] = (bars, Window(name, "1d", NYSE))
    return series


def synthetic_batches(days: int) -> dict[str, tuple[pd.DataFrame, list[Window]]]:
    """A year of the whole synthetic universe per interval, derived from 15m as ingest does."""
    provider, universe = SyntheticProvider(), load_universe().select(None)
    end = pd.Timestamp("2025-12-01", tz="UTC")
    start = end - pd.Timedelta(days=days)
    frames: dict[str, list[pd.DataFrame]] = {}
    for asset in universe:
        base = provider.fetch_bars(asset, "15m", start, end)
        for interval in ("15m", "1h", "4h", "1d"):
            bars = base if interval == "15m" else derive_complete(base, "15m", interval,
                                                                  asset.calendar)
            frames.setdefault(interval, []).append(
                bars.assign(symbol=asset.symbol, interval=interval))
    return {f"synthetic {i} ({days} days)": (
        pd.concat(f, ignore_index=True),
        [Window(a.symbol, i, a.calendar) for a in universe]) for i, f in frames.items()}


def power(bars: pd.DataFrame, window: Window, factor: float, n: int, rng) -> float:
    """Share of ``n`` level shifts by ``factor`` (first shifted bar on its trailing median
    volume) that the check rejects at the shifted bar."""
    caught = 0
    rows = rng.choice(np.arange(80, len(bars) - 10), size=n, replace=False)
    for i in rows:
        shifted = bars.copy()
        shifted.loc[i:, ["open", "high", "low", "close"]] *= factor
        shifted.loc[i, "volume"] = shifted["volume"].iloc[i - 20:i].median()
        caught += bool(rejected(judge(shifted, [window])).iloc[i])
    return caught / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365, help="synthetic history per interval")
    parser.add_argument("--shifts", type=int, default=40, help="injected shifts per case")
    args = parser.parse_args()
    prepare_process()
    print("false positives (bars rejected / bars judged)")
    real = real_series()
    for name, (bars, window) in real.items():
        print(" ", rate_line(name, judge(bars, [window])))
    t0 = time.perf_counter()
    for name, (bars, windows) in synthetic_batches(args.days).items():
        print(" ", rate_line(name, judge(bars, windows)))
    print(f"  (synthetic: {time.perf_counter() - t0:.1f} s)")
    print(f"power (level shifts without volume rejected, {args.shifts} random bars each)")
    rng = np.random.default_rng(7)
    for name, (bars, window) in real.items():
        cells = [f"{label} {power(bars, window, f, args.shifts, rng):.0%}"
                 for label, f in (("5% shift", 1.05), ("2:1 split", 0.5), ("10x unit", 10.0))]
        print(f"  {name:<24} " + ", ".join(cells))


if __name__ == "__main__":
    main()
