-- Every parsed decision of every record (contestants and house agents alike), one row per
-- (contestant, cycle, round, decision index), with the record's outcome, whether the engine
-- accepted it and the answer text of its round: a report links a trade (trades.entry_cycle_at,
-- entry_round, entry_decision_index) to the reasoning behind it.
-- A decision is identified the same way in the ledger's decisions and rejections tables: the
-- record key (cycle_at, contestant), the round (answer or repair) and the decision's index in
-- that round's parsed list (arena/pipeline/cycle.py records both from the same answer, and the
-- broker judges each decision once, so it has at most one rejection). A round has one response
-- row (arena/ledger/records.py writes responses per round), the text the round's decisions were
-- parsed from.
with decisions as (
    select * from {{ ref('stg_ledger__decisions') }}
),

rejections as (
    select cycle_at, contestant, round, decision_index, count(*) as rejections
    from {{ ref('stg_ledger__rejections') }}
    group by cycle_at, contestant, round, decision_index
),

responses as (
    select * from {{ ref('stg_ledger__responses') }}
),

outcomes as (
    select * from {{ ref('stg_ledger__outcomes') }}
),

final as (
    select
        d.contestant || '@' || strftime(timezone('UTC', d.cycle_at), '%Y-%m-%dT%H:%M:%SZ')
            || '#' || d.round || '.' || cast(d.decision_index as varchar) as decision_id,
        d.contestant,
        d.cycle_at,
        cast(timezone('UTC', d.cycle_at) as date) as day,
        d.round,
        d.decision_index,
        d.action,
        d.symbol,
        d.thesis,
        d.rationale,
        d.confidence,
        d.decision,
        o.status as outcome,
        j.rejections is null as accepted,
        r.text as answer_text
    from decisions as d
    left join rejections as j
        on j.cycle_at = d.cycle_at and j.contestant = d.contestant and j.round = d.round
        and j.decision_index = d.decision_index
    left join responses as r
        on r.cycle_at = d.cycle_at and r.contestant = d.contestant and r.round = d.round
    left join outcomes as o
        on o.cycle_at = d.cycle_at and o.contestant = d.contestant
)

select * from final
