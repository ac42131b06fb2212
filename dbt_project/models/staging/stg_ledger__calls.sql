with

source as (

    select * from {{ source('ledger', 'calls') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        seq,
        role,
        model,
        tokens_in,
        tokens_out,
        latency_s,
        queue_s,
        cost_usd,
        retries,
        error,
        seed,
        temperature,
        replicate_of
    from source

)

select * from renamed
