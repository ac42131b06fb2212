"""A blind season's names revealed at its end: the ``blinding`` table and the ``blind_names``
mart of a replayed blind season (``tests/blind_lakes.py``) hold every asset with the names and
price factors sealed in its ``season/blind.json``; the same season with its last cycle not
recorded, and a season played open, have none (typed all the same); a league marks each season
blind or not."""

from __future__ import annotations

import shutil

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest

from arena.core.universe import load_universe
from arena.data.lake import Lake
from arena.ledger.store import Ledger
from arena.pipeline.blind_reveal import COLUMNS, blinding_frame, season_ended
from arena.pipeline.league import league_frame, read_season
from arena.pipeline.season_config import (
    REPLAY,
    config_path,
    default_providers,
    init_season,
    make_season,
)
from arena.pipeline.season_files import sealed_json, write_sealed
from arena.pipeline.season_tables import read_analytics
from arena.pipeline.season_tables.store import Analytics, blinding_schema, write_analytics
from tests.blind_lakes import DAYS, ROSTER, START, SYMBOLS, BlindSeason, blind_season  # noqa: F401


def _expected(season: BlindSeason) -> pd.DataFrame:
    """The table the sealed blinding says, written by hand from its JSON body."""
    body = season.blinding.as_json()
    return pd.DataFrame([{"symbol": a["symbol"], "neutral_name": a["neutral"],
                          "price_factor": 2.0 ** a["price_factor_exponent"],
                          "shift_weeks": body["shift_weeks"], "sectors_shown": body["sectors"]}
                         for a in body["assets"]]).sort_values("symbol", ignore_index=True)


def _copy(season: BlindSeason, target: Lake, *, drop_last: bool) -> Lake:
    """The season's folder and its ledger's cycle records in ``target``, the records of its
    last cycle left out when ``drop_last``."""
    shutil.copytree(season.lake.root / "season", target.root / "season")
    ledger = Ledger(season.lake)
    last = ledger.record_dir(season.config.last, "any").parent.name  # the cycle's folder
    shutil.copytree(ledger.dir / "cycles", Ledger(target).dir / "cycles",
                    ignore=lambda _d, names: [n for n in names if drop_last and n == last])
    return target


def test_the_table_and_the_mart_reveal_every_asset_with_its_sealed_name_and_factor(
        blind_season):  # noqa: F811
    lake = blind_season.lake
    expected = _expected(blind_season)
    assert sorted(expected["symbol"]) == sorted(SYMBOLS)  # every asset of the season
    table = read_analytics(lake, "blinding").sort_values("symbol", ignore_index=True)
    pd.testing.assert_frame_equal(table, expected, check_dtype=False)
    assert pq.read_schema(lake.root / "analytics" / "blinding.parquet").equals(
        blinding_schema(), check_metadata=False)
    with duckdb.connect(str(lake.root / "warehouse.duckdb"), read_only=True) as con:
        mart = con.execute("select * from marts.blind_names order by symbol").df()
    names = {a.symbol: a.name for a in load_universe()}
    assert list(mart.columns) == ["symbol", "name", *COLUMNS[1:]]
    assert list(mart["name"]) == [names[s] for s in mart["symbol"]]
    pd.testing.assert_frame_equal(mart.drop(columns="name"), expected, check_dtype=False)
    # the names are no real symbols, and the factors powers of two far from 1
    assert not set(mart["neutral_name"]) & set(names)
    assert all(f in (2.0 ** k for k in (-6, -5, -4, -3, -2, 2, 3, 4, 5, 6))
               for f in mart["price_factor"])
    published = pd.read_parquet(lake.root / "marts" / "blind_names.parquet")
    assert sorted(published["neutral_name"]) == sorted(expected["neutral_name"])


def test_before_its_last_cycle_is_recorded_a_blind_season_reveals_nothing(blind_season,  # noqa: F811
                                                                          tmp_path):
    running = _copy(blind_season, Lake(tmp_path / "running"), drop_last=True)
    assert {k.cycle_at for k in Ledger(running).records()} == {blind_season.config.first}
    assert not season_ended(running, blind_season.config)
    frame = blinding_frame(running, blind_season.config)
    assert frame.empty and list(frame.columns) == list(COLUMNS)
    write_analytics(running, Analytics({"blinding": frame}))
    written = pq.read_table(running.root / "analytics" / "blinding.parquet")
    assert written.num_rows == 0 and written.schema.equals(blinding_schema(),
                                                           check_metadata=False)
    # the same season with its last cycle recorded has ended: every asset revealed
    ended = _copy(blind_season, Lake(tmp_path / "ended"), drop_last=False)
    assert season_ended(ended, blind_season.config)
    assert len(blinding_frame(ended, blind_season.config)) == len(SYMBOLS)
    # one contestant not yet recorded there (it failed; a retry would still prompt it): sealed
    [name, *_] = sorted({k.contestant for k in Ledger(ended).records()})
    shutil.rmtree(Ledger(ended).record_dir(blind_season.config.last, name))
    assert not season_ended(ended, blind_season.config)
    (ended.root / "season" / "closed.json").write_text('{"closed_at": "2026-01-01"}')
    assert season_ended(ended, blind_season.config)  # closed: no prompt will follow


def test_a_season_played_open_reveals_nothing_even_when_it_has_ended(blind_season,  # noqa: F811
                                                                    tmp_path):
    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    lake = Lake(tmp_path / "open")
    config = init_season(lake, make_season(START, DAYS, SYMBOLS, mode=REPLAY,
                                           providers=default_providers(), seed=7),
                         roster=roster)
    shutil.copytree(Ledger(blind_season.lake).dir / "cycles", Ledger(lake).dir / "cycles")
    assert not config.blind and season_ended(lake, config)
    assert not (lake.root / "season" / "blind.json").exists()
    assert blinding_frame(lake, config).empty
    assert blinding_frame(lake, None).empty  # a lake replayed without a season config


@pytest.fixture
def league(tmp_path):
    """A league of three seasons in a row: played open, played blind, and one written before
    seasons could be blind (its season.json without the field, sealed again)."""
    root = tmp_path / "league"
    roster = tmp_path / "roster.yaml"
    roster.write_text(ROSTER, encoding="utf-8")
    for i, (start, blind) in enumerate((("2026-10-01", False), ("2026-10-03", True),
                                        ("2026-10-05", False)), start=1):
        lake = Lake(root / f"s{i}")
        config = init_season(lake, make_season(start, 2, SYMBOLS, season_id=f"s{i}",
                                               blind=blind), roster=roster, blind_seed=i)
        if i == 3:
            old = {k: v for k, v in config.to_json().items() if k != "blind"}
            write_sealed(config_path(lake), sealed_json(old).encode())
    return root


def test_the_league_marks_each_season_blind_or_not(league):
    seasons = [read_season(league / name) for name in ("s1", "s2", "s3")]
    assert [s.config.blind for s in seasons] == [False, True, False]
    frame = league_frame(seasons)
    assert frame["blind"].dtype == bool
    assert list(zip(frame["season_id"], frame["blind"], strict=True)) == [
        ("s1", False), ("s2", True), ("s3", False)]
