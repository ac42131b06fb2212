"""Human sentences and observed values for each (series, check) of a candle validation.

``describe`` gets what the preparation found for a series (:class:`SeriesStats`), the series'
rows of the prepared frame, and the rows Great Expectations found unexpected for this check
(with the problems it named); it returns ``(observed, message)``.
"""

from __future__ import annotations

import math

import pandas as pd

from arena.data.validation import stats as cs
from arena.data.validation.config import ValidationConfig

Observed = dict[str, float | int | str | bool | None]


def fmt_time(ts: object) -> str:
    """``2025-03-01 04:00 UTC`` (``-`` for no time)."""
    if ts is None or pd.isna(ts):
        return "-"
    return pd.Timestamp(ts).tz_convert("UTC").strftime("%Y-%m-%d %H:%M UTC")


def _iso(ts: object) -> str | None:
    return None if ts is None or pd.isna(ts) else pd.Timestamp(ts).isoformat()


def _duration(seconds: float) -> str:
    """``30 min``, ``2 h 30 min``, ``3 d 1 h``."""
    minutes = round(seconds / 60)
    days, rest = divmod(minutes, 1440)
    hours, mins = divmod(rest, 60)
    parts = [f"{days} d" if days else "", f"{hours} h" if hours else "", f"{mins} min" if mins else ""]
    return " ".join(p for p in parts if p) or f"{seconds:g} s"


def _bars(n: int, verb: str = "") -> str:
    """``1 bar fails`` / ``3 bars fail`` (``verb`` in its plural form)."""
    text = f"{n} bar{'' if n == 1 else 's'}"
    return f"{text} {verb + 's' if n == 1 else verb}" if verb else text


def describe(check: str, stats: cs.SeriesStats, rows: pd.DataFrame, failing: pd.DataFrame,
             config: ValidationConfig) -> tuple[Observed, str]:
    """Observed values and a sentence. ``failing`` holds the rows Great Expectations found
    unexpected for this check (empty: passed); ``rows`` (all rows of the series) is only given
    when some check of the series failed."""
    key = f"{stats.symbol} {stats.interval}"
    return _DESCRIBERS[check](key, stats, rows, failing, config)


def _bar_count(key, s, rows, failing, config):
    obs = {"bars": s.bars, "expected": s.expected, "missing": s.missing,
           "missing_share": round(s.missing_share, 6), "first_missing": _iso(s.first_missing)}
    window = f"{s.expected} expected from {fmt_time(s.start)} to {fmt_time(s.end)}" \
        if s.start is not None else "no data rows at all: an empty response?"
    if failing.empty:
        return obs, (f"{key}: {s.bars} bars, {s.missing} of {s.expected} expected missing "
                     f"({config.max_missing_share:.1%} allowed)")
    if s.bars == 0:
        return obs, f"{key}: zero bars ({window})"
    return obs, (f"{key}: {s.missing} of {s.expected} expected bars missing "
                 f"({s.missing_share:.1%} > {config.max_missing_share:.1%} allowed), "
                 f"first missing {fmt_time(s.first_missing)}")


def _off_calendar(key, s, rows, failing, config):
    first = s.first_off_calendar
    obs = {"off_calendar_bars": s.off_calendar, "first": _iso(first)}
    if failing.empty:
        return obs, f"{key}: {s.off_calendar} bars outside the {s.calendar} calendar"
    return obs, (f"{key}: {_bars(s.off_calendar)} where the {s.calendar} calendar (or the "
                 f"requested window) expects none, first at {pd.Timestamp(first):%a} "
                 f"{fmt_time(first)} ({config.max_off_calendar_bars} allowed)")


def _ohlc(key, s, rows, failing, config):
    if failing.empty:
        return {"bad_bars": 0}, f"{key}: OHLC sane on all {_bars(s.bars)}"
    broken = cs.ohlc_problems(failing)
    counts = {name: int(n) for name, n in broken.sum().items() if n}
    first = failing.iloc[0]
    values = ", ".join(f"{c[0].upper()} {first[c]:.6g}" for c in ("open", "high", "low",
                                                                   "close", "volume"))
    what = "; ".join(f"{name}: {n}" for name, n in counts.items())
    first_broken = ", ".join(name for name, hit in broken.iloc[0].items() if hit)
    return ({"bad_bars": len(failing), "first": _iso(first["timestamp"]), **counts},
            f"{key}: {_bars(len(failing), 'fail')} OHLC sanity ({what}), first at "
            f"{fmt_time(first['timestamp'])}: {first_broken} ({values})")


def _unique(key, s, rows, failing, config):
    if failing.empty:
        return {"duplicated_times": 0}, f"{key}: timestamps unique"
    times = failing[cs.BAR_TIME].drop_duplicates()
    return ({"duplicated_times": len(times), "rows": len(failing), "first": _iso(times.iloc[0])},
            f"{key}: {len(times)} timestamp(s) carry more than one bar ({len(failing)} rows), "
            f"first at {fmt_time(times.iloc[0])}")


def _increasing(key, s, rows, failing, config):
    if failing.empty:
        return {"breaks": 0}, f"{key}: timestamps strictly increasing"
    first = failing.iloc[0]
    before = rows[rows[cs.ROW_ID] < first[cs.ROW_ID]][cs.BAR_TIME].iloc[-1]
    return ({"breaks": len(failing), "first": _iso(first[cs.BAR_TIME])},
            f"{key}: timestamps not strictly increasing at {len(failing)} place(s), first "
            f"{fmt_time(first[cs.BAR_TIME])} after {fmt_time(before)}")


def _aligned(key, s, rows, failing, config):
    if failing.empty:
        return {"off_grid": 0}, f"{key}: timestamps on the {s.interval} grid"
    first = failing.iloc[0]
    return ({"off_grid": len(failing), "first": _iso(first["timestamp"])},
            f"{key}: {_bars(len(failing))} off the {s.interval} grid of {s.calendar}, first at "
            f"{fmt_time(first['timestamp'])} ({_duration(first[cs.GRID_OFFSET])} off the grid)")


def _splice(key, s, rows, failing, config):
    obs = {"returns": s.returns, "judged": s.judged, "robust_sigma": s.sigma,
           "overnight_sigma": s.overnight_sigma, "max_sigmas": s.max_jump, "market": s.market}
    k, m = config.splice_sigmas, config.splice_volume_multiple
    if not s.judged:
        return obs, (f"{key}: splice check not judged: {s.returns} close-to-close returns "
                     f"({config.min_returns} earlier returns needed before a move is judged)")
    if failing.empty:
        return obs, (f"{key}: no level shift beyond {k:g} local sigmas without market, "
                     f"{m:g}x volume, trading within the bar, reversion or volatility after "
                     f"it (largest move {s.max_jump or 0:.1f} sigmas, market: {s.market})")
    newest = failing[cs.JUMP_NEWEST].astype(bool)
    suspect = bool(newest.all())
    first = failing.iloc[0]
    obs.update(jumps=len(failing), first=_iso(first["timestamp"]), suspect=suspect)
    if suspect:
        obs["since"] = _iso(first["timestamp"])
        what = f"suspect at the newest bar{'s' if len(failing) > 1 else ''}: " \
               f"{_bars(len(failing), 'jump')}"
        later = max(config.revert_bars, config.follow_bars)
        tail = (f"; fewer than {later} later bars show whether it reverts or volatility "
                "follows: hold and judge again")
    else:
        what = f"{_bars(len(failing), 'jump')}"
        tail = ""
    return obs, (f"{key}: {what} more than {k:g} local sigmas without market, volume, "
                 f"trading within the bar, reversion or volatility after it, first at "
                 f"{fmt_time(first['timestamp'])} ({_move(first)}){tail}")


def _move(row) -> str:
    ratio = row[cs.VOLUME_RATIO]
    volume = "no volume data" if pd.isna(ratio) else f"volume {ratio:.1f}x median"
    gap = "overnight gap " if row[cs.OVERNIGHT] else ""
    market = "no market" if pd.isna(row[cs.MARKET_RETURN]) else \
        f"market {math.expm1(row[cs.MARKET_RETURN]):+.1%}"
    traded = row[cs.JUMP_TRADED]
    within = "" if pd.isna(traded) else f", {max(traded, 0.0):.0%} within the bar"
    followed = row[cs.JUMP_FOLLOWED]
    after = "" if pd.isna(followed) else f", {followed:.1f} sigmas after it"
    return (f"{gap}{row[cs.JUMP_RETURN]:+.1%}, {row[cs.JUMP_SIGMAS]:.1f} sigmas, {market}, "
            f"{volume}{within}{after}")


def _staleness(key, s, rows, failing, config):
    obs = {"last_bar": _iso(s.last_bar), "reference": _iso(s.reference), "late_bars": s.stale}
    if s.reference is None:
        return obs, (f"{key}: staleness judged against the series' own last bar "
                     f"{fmt_time(s.last_bar)} (no as_of)")
    if failing.empty:
        return obs, (f"{key}: last bar {fmt_time(s.last_bar)}, {s.stale} completed calendar "
                     f"bar(s) after it by {fmt_time(s.reference)}")
    return obs, (f"{key}: stale: last bar {fmt_time(s.last_bar)}, {s.stale} calendar bar(s) "
                 f"completed after it by {fmt_time(s.reference)} ({config.max_stale_bars} "
                 "allowed)")


def _incomplete(key, s, rows, failing, config):
    obs = {"incomplete_bars": s.incomplete}
    if s.incomplete is None:
        return obs, f"{key}: completeness not judged (no as_of)"
    if failing.empty:
        return obs, f"{key}: every bar closed by as_of"
    return obs, (f"{key}: {_bars(s.incomplete or 0)} not closed by as_of "
                 f"{fmt_time(s.as_of)}, the last opened {fmt_time(s.last_bar)} "
                 f"({config.max_incomplete_bars} allowed)")


_DESCRIBERS = {
    cs.BAR_COUNT: _bar_count, cs.OFF_CALENDAR: _off_calendar, cs.OHLC: _ohlc, cs.UNIQUE: _unique,
    cs.INCREASING: _increasing, cs.ALIGNED: _aligned, cs.SPLICE: _splice,
    cs.STALENESS: _staleness, cs.INCOMPLETE: _incomplete,
}
