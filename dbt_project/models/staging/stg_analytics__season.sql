select provider, market, season_start, season_end, cycles, arena_players, asset_players, seed,
       arena_rejections, start_cash, assets_without_luck_tables
from {{ source('analytics', 'season') }}
