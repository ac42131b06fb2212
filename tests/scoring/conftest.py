"""The scoring tests' shared 28-day synthetic season (tests/scoring/season28.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from tests.scoring.season28 import season_bars, season_prices


@pytest.fixture(scope="module")
def prices(universe, synthetic) -> pd.DataFrame:
    return season_prices(universe, synthetic)


@pytest.fixture(scope="module")
def bars(universe, synthetic, prices) -> dict[str, pd.DataFrame]:
    return season_bars(universe, synthetic, prices)
