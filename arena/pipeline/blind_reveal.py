"""The reveal of a blind season (:mod:`arena.market.blind`): once the season has ended, its
secret is no longer one, and the season's ``blinding`` table says which neutral name stood for
which asset, by what factor the prompts' prices were scaled (and their volumes divided) and by
how many weeks their calendar was moved. dbt reads it into the mart ``blind_names``, which the
season report and the site show.

A season has **ended** here when no contestant will be asked again under its secret: it is
closed (``arena season publish --final``), or every contestant the ledger holds a record of
has one at the season's last cycle time
(:attr:`~arena.pipeline.season_config.SeasonConfig.last`) - so a contestant that failed there,
and that a retry may still play, keeps the secret sealed. It is the ledger's own fact, the same
for a live season and a replay, and it needs no clock. Before it, and for a season
that is not blind (or a lake replayed without a season config), the table has no rows - typed
all the same (:func:`~arena.pipeline.season_tables.store.blinding_schema`): nothing of the
secret is published while a contestant may still be shown a prompt.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from arena.data.lake import Lake
from arena.ledger.store import Ledger
from arena.pipeline.season_config import SeasonConfig, season_blinding
from arena.pipeline.season_files import closed_path

COLUMNS = ("symbol", "neutral_name", "price_factor", "shift_weeks", "sectors_shown")
DTYPES = {"symbol": "object", "neutral_name": "object", "price_factor": "float64",
          "shift_weeks": "int64", "sectors_shown": "bool"}


def season_ended(lake: Lake, config: SeasonConfig) -> bool:
    """Whether the season of ``config`` has ended (the module docstring): closed, or every
    contestant of its ledger recorded at its last cycle time."""
    if closed_path(lake).is_file():
        return True
    keys = Ledger(lake).records()
    played = {k.contestant for k in keys}
    last = {k.contestant for k in keys if k.cycle_at == config.last}
    return bool(last) and last == played


def blinding_frame(lake: Lake, config: SeasonConfig | None) -> pd.DataFrame:
    """The season's ``blinding`` table: for a blind season that has ended, one row per asset -
    its real ``symbol``, its ``neutral_name``, its ``price_factor`` (``2**k``: the prompts'
    prices were the real ones times it, their volumes divided by it), the calendar's
    ``shift_weeks`` and whether the prompts showed sectors (``sectors_shown``) - read from the
    sealed blinding (:func:`~arena.pipeline.season_config.season_blinding`, which refuses a
    damaged one); otherwise no rows."""
    if config is None or not config.blind or not season_ended(lake, config):
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in DTYPES.items()})
    secret = season_blinding(lake, config)
    if secret is None:  # season_blinding gives one for every blind season, or refuses
        raise ValueError(f"season {config.id!r} is blind but has no blinding")
    rows = [{"symbol": s, "neutral_name": secret.name(s), "price_factor": secret.factor(s),
             "shift_weeks": secret.shift_weeks, "sectors_shown": secret.sectors}
            for s in sorted(secret.names)]
    return pd.DataFrame(rows, columns=list(COLUMNS)).astype(DTYPES)


__all__: Sequence[str] = ("COLUMNS", "blinding_frame", "season_ended")
