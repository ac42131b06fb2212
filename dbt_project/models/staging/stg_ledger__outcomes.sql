-- One row per (cycle, contestant) record. status is the outcome of arena.engine.outcomes
-- (traded, no_trade, forfeited, skipped); records written before that vocabulary said 'executed'
-- for any read answer, which is traded or no_trade by its fills.
with

source as (

    select * from {{ source('ledger', 'outcome') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        case
            when status = 'executed' and n_fills > 0 then 'traded'
            when status = 'executed' then 'no_trade'
            else status
        end as status,
        repaired,
        prompt_sha256,
        prompt_chars,
        n_calls,
        n_fills,
        n_rejections,
        parse_error_answer,
        parse_error_repair,
        errors
    from source

)

select * from renamed
