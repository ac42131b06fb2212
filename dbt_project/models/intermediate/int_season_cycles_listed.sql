-- Every contestant of the ledger at every cycle of the season. A contestant whose first record
-- comes later (a missing key, a late entry) holds its start cash until then: every result is
-- measured over the same window, the season's (SPEC §4).
with

cycles as (

    select distinct cycle_at from {{ ref('stg_analytics__cycle_prices') }}

),

contestants as (

    select distinct contestant from {{ ref('stg_ledger__outcomes') }}

),

listed as (

    select c.contestant, s.cycle_at
    from contestants as c
    cross join cycles as s

)

select * from listed
