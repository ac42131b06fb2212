import pandas as pd
import pytest

from arena.data.errors import BlockedError, NoDataError, UnsupportedError
from arena.data.providers.files import FilesProvider
from tests.conftest import ts

CSV = """timestamp,open,high,low,close,volume
2025-11-03T00:00:00Z,100,102,99,101,10
2025-11-03T01:00:00Z,101,103,100,102,11
2025-11-03T02:00:00Z,102,104,101,103,12
"""


@pytest.fixture
def drop(tmp_path):
    (tmp_path / "1h").mkdir()
    (tmp_path / "1h" / "ETH.csv").write_text(CSV)
    return tmp_path


def test_reads_csv_and_parquet_chunks_later_wins(drop, universe):
    chunk = pd.DataFrame({"timestamp": pd.to_datetime(["2025-11-03T02:00Z", "2025-11-03T03:00Z"]),
                          "open": [1.0, 2.0], "high": [2.0, 3.0], "low": [0.5, 1.5],
                          "close": [1.5, 2.5], "volume": [1.0, 1.0]})
    chunk.to_parquet(drop / "1h" / "ETH__2025-11-03.parquet")
    bars = FilesProvider(drop).fetch_bars(universe["ETH"], "1h", ts("2025-11-03"), ts("2025-11-04"))
    assert list(bars.close) == [101, 102, 1.5, 2.5]
    assert str(bars.timestamp.dtype) == "datetime64[us, UTC]"
    clipped = FilesProvider(drop).fetch_bars(universe["ETH"], "1h", ts("2025-11-03 01:00"),
                                             ts("2025-11-03 02:00"))
    assert list(clipped.close) == [102]


def test_failures_are_typed(drop, universe):
    provider = FilesProvider(drop)
    with pytest.raises(NoDataError, match="no file for SOL 1h"):
        provider.fetch_bars(universe["SOL"], "1h", ts("2025-11-03"), ts("2025-11-04"))
    (drop / "1h" / "SOL.csv").write_text("<!DOCTYPE html><html><body>Access denied</body></html>")
    with pytest.raises(BlockedError, match="HTML"):
        provider.fetch_bars(universe["SOL"], "1h", ts("2025-11-03"), ts("2025-11-04"))
    (drop / "1h" / "SOL.csv").write_text("timestamp,open,high,low,close,volume\n")
    with pytest.raises(NoDataError, match="zero rows"):
        provider.fetch_bars(universe["SOL"], "1h", ts("2025-11-03"), ts("2025-11-04"))
    (drop / "1h" / "ADA.parquet").write_bytes(b"PAR1 truncated garbage")
    with pytest.raises(BlockedError, match="not a readable parquet"):
        provider.fetch_bars(universe["ADA"], "1h", ts("2025-11-03"), ts("2025-11-04"))
    with pytest.raises(UnsupportedError, match="'2h'"):
        provider.fetch_bars(universe["ETH"], "2h", ts("2025-11-03"), ts("2025-11-04"))
    with pytest.raises(NoDataError, match="inside the requested window"):
        provider.fetch_bars(universe["ETH"], "1h", ts("2025-12-01"), ts("2025-12-02"))


def test_funding_and_earnings_files(drop, universe):
    (drop / "funding").mkdir()
    (drop / "funding" / "ETH.csv").write_text(
        "timestamp,funding_rate\n2025-11-03T00:00Z,0.0001\n2025-11-03T08:00Z,-0.0002\n")
    (drop / "earnings.csv").write_text("symbol,date\nAAPL,2025-10-30\nAAPL,2026-01-29\n")
    provider = FilesProvider(drop)
    f = provider.fetch_funding(universe["ETH"], ts("2025-11-03"), ts("2025-11-04"))
    assert list(f.funding_rate) == [0.0001, -0.0002]
    assert provider.earnings_dates(universe["AAPL"], ts("2025-11-01"), ts("2026-12-31")) == [ts("2026-01-29")]


def test_non_numeric_volume_is_not_candle_data(drop, universe):
    (drop / "1h" / "XRP.csv").write_text(CSV.replace(",10\n", ",lots\n"))
    with pytest.raises(BlockedError, match="non-numeric volume"):
        FilesProvider(drop).fetch_bars(universe["XRP"], "1h", ts("2025-11-03"), ts("2025-11-04"))


def test_a_time_given_twice_with_other_values_is_refused_naming_it(drop, universe):
    """The second row for 01:00 closes at 1.5 times the first: neither is the bar, so the
    file is refused, never resolved by taking the last row."""
    twice = CSV + "2025-11-03T01:00:00Z,101,103,100,153,11\n"
    (drop / "1h" / "ETH.csv").write_text(twice)
    with pytest.raises(BlockedError, match=r"ETH.csv gives 1 bar times twice with different "
                                           r"values \(2025-11-03 01:00 UTC\)"):
        FilesProvider(drop).fetch_bars(universe["ETH"], "1h", ts("2025-11-03"), ts("2025-11-04"))


def test_a_row_repeated_exactly_is_one_bar(drop, universe):
    repeated = CSV + "2025-11-03T01:00:00+00:00,101,103,100,102,11\n"  # the same time, spelt anew
    (drop / "1h" / "ETH.csv").write_text(repeated)
    bars = FilesProvider(drop).fetch_bars(universe["ETH"], "1h", ts("2025-11-03"), ts("2025-11-04"))
    assert list(bars.close) == [101, 102, 103]
