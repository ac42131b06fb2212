"""Great Expectations' Data Docs of the ingest: built by the first validated run of each UTC day,
by every run that fails validation and on request; every other run validates without importing
Great Expectations (the hourly run of a few hundred bars)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from arena.data.ingest import DOCS_BUILT, IngestError, run_ingest
from arena.data.providers.files import FilesProvider
from tests.conftest import ts

SYMBOLS = ["BTC", "ETH", "AAPL", "SPY"]
START = ts("2025-10-06")


def _docs(lake):
    root = lake.root / "validation" / "docs"
    return root / "index.html", root / DOCS_BUILT


def _hour(synthetic, universe, lake, hour: str, **kw):
    end = ts(hour)
    return run_ingest(synthetic, universe.select(SYMBOLS), start=end - pd.Timedelta(hours=1),
                      end=end, lake=lake, now=end, **kw)


def test_the_first_run_of_a_day_builds_them_the_next_runs_of_the_day_do_not(
        lake, universe, synthetic):
    first = run_ingest(synthetic, universe.select(SYMBOLS), start=START,
                       end=ts("2025-10-27 14:00"), lake=lake, now=ts("2025-10-27 14:00"))
    index, marker = _docs(lake)
    assert index.is_file()
    assert json.loads(marker.read_text()) == {"day": "2025-10-27", "run_id": first.run_id}
    assert first.manifest["validation"]["data_docs"] == str(index)
    built = index.stat().st_mtime_ns
    later = _hour(synthetic, universe, lake, "2025-10-27 15:00")
    assert later.manifest["validation"]["success"]
    assert index.stat().st_mtime_ns == built  # not rebuilt
    assert json.loads(marker.read_text())["run_id"] == first.run_id
    assert later.manifest["validation"]["data_docs"] == str(index)  # the day's docs
    asked = _hour(synthetic, universe, lake, "2025-10-27 16:00", data_docs=True)
    assert json.loads(marker.read_text())["run_id"] == asked.run_id
    next_day = _hour(synthetic, universe, lake, "2025-10-28 15:00")
    assert json.loads(marker.read_text()) == {"day": "2025-10-28", "run_id": next_day.run_id}


def test_a_run_that_fails_validation_builds_them(tmp_path, lake, universe, synthetic):
    from tests.data.test_ingest import _write_drop

    drop = tmp_path / "drop"
    sub = universe.select(["ETH", "SOL"])
    end = ts("2025-10-28")
    for a in sub:
        _write_drop(drop, a.symbol, synthetic.fetch_bars(a, "1h", START, ts("2025-10-27")))
    run_ingest(FilesProvider(drop), sub, start=START, end=ts("2025-10-27"), lake=lake, now=end)
    _, marker = _docs(lake)
    assert json.loads(marker.read_text())["day"] == "2025-10-28"
    spliced = synthetic.fetch_bars(universe["SOL"], "1h", START, end)
    spliced.loc[spliced.timestamp >= ts("2025-10-27 05:00"), ["open", "high", "low", "close"]] *= 1.4
    _write_drop(drop, "SOL", spliced)
    _write_drop(drop, "ETH", synthetic.fetch_bars(universe["ETH"], "1h", START, end))
    with pytest.raises(IngestError, match="SOL") as err:
        run_ingest(FilesProvider(drop), sub, start=START, end=end, lake=lake, now=end)
    assert json.loads(marker.read_text())["run_id"] == err.value.manifest["run_id"]
    assert err.value.manifest["assets"]["SOL"]["status"] == "quarantined"


def test_a_run_after_the_days_first_imports_no_great_expectations(lake, universe, synthetic):
    run_ingest(synthetic, universe.select(SYMBOLS), start=START, end=ts("2025-10-27 14:00"),
               lake=lake, now=ts("2025-10-27 14:00"))
    code = textwrap.dedent(f"""
        import json, sys
        import pandas as pd
        from arena.core.universe import load_universe
        from arena.data.ingest import run_ingest
        from arena.data.lake import Lake
        from arena.data.providers.synthetic import SyntheticProvider
        end = pd.Timestamp("2025-10-27 15:00", tz="UTC")
        result = run_ingest(SyntheticProvider(), load_universe().select({SYMBOLS!r}),
                            start=end - pd.Timedelta(hours=1), end=end,
                            lake=Lake({str(lake.root)!r}), now=end)
        print(json.dumps({{"ge": "great_expectations" in sys.modules,
                           "validation": result.manifest["validation"]}}))
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["ge"] is False
    assert out["validation"]["summary"].startswith("candle validation passed")
    assert out["validation"]["data_docs"].endswith("index.html")  # the day's, built before


def test_inside_docs_beside_they_are_built_in_a_process_of_their_own(lake):
    """A replay's ingests build their Data Docs in a process of their own while its days go
    on: the ingest returns without importing Great Expectations, and when the block ends the
    day's docs and their marker are there (run in a fresh interpreter, where Great
    Expectations is not imported yet)."""
    code = textwrap.dedent(f"""
        import json, sys
        import pandas as pd
        from arena.core.universe import load_universe
        from arena.data.ingest import docs_beside, run_ingest
        from arena.data.lake import Lake
        from arena.data.providers.synthetic import SyntheticProvider
        end = pd.Timestamp("2025-10-27 14:00", tz="UTC")
        lake = Lake({str(lake.root)!r})
        with docs_beside():
            result = run_ingest(SyntheticProvider(), load_universe().select({SYMBOLS!r}),
                                start=pd.Timestamp("2025-10-06", tz="UTC"), end=end,
                                lake=lake, now=end)
            ge_inside = "great_expectations" in sys.modules
        print(json.dumps({{"ge": ge_inside or "great_expectations" in sys.modules,
                           "run_id": result.run_id,
                           "docs": result.manifest["validation"]["data_docs"]}}))
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=300)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    index, marker = _docs(lake)
    assert out["ge"] is False  # built by the other process
    assert out["docs"] == str(index) and index.is_file()
    assert json.loads(marker.read_text()) == {"day": "2025-10-27", "run_id": out["run_id"]}
