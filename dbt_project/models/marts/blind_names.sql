-- A blind season's names revealed: one row per asset once the season has ended - the neutral
-- name its prompts showed, the asset's real symbol and name, the factor the prompts multiplied
-- its prices by and how many weeks they moved the calendar. No rows while the season runs, nor
-- for a season that is not blind (arena/pipeline/blind_reveal.py writes the table).
with

blinding as (

    select * from {{ ref('stg_analytics__blinding') }}

),

universe as (

    select symbol, name from {{ ref('universe') }}

)

select
    b.symbol,
    u.name,
    b.neutral_name,
    b.price_factor,
    b.shift_weeks,
    b.sectors_shown
from blinding as b
left join universe as u using (symbol)
order by b.neutral_name
