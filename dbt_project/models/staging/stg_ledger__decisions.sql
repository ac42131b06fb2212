with

source as (

    select * from {{ source('ledger', 'decisions') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        round,
        decision_index,
        action,
        symbol,
        decision,
        json_extract_string(decision, '$.thesis') as thesis,
        json_extract_string(decision, '$.rationale') as rationale,
        try_cast(json_extract(decision, '$.confidence') as double) as confidence
    from source

)

select * from renamed
