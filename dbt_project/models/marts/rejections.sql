-- Rejected decisions by reason code over time: one row per contestant, cycle, round and code.
select
    contestant,
    cycle_at,
    cast(cycle_at as date) as day,
    round,
    code,
    count(*) as rejections,
    list(distinct symbol order by symbol) as symbols,
    min(message) as example_message
from {{ ref('stg_ledger__rejections') }}
group by contestant, cycle_at, round, code
