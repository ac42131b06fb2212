with

source as (

    select * from {{ source('ledger', 'responses') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        round,
        text,
        chars,
        extra,
        notes,
        raw_json
    from source

)

select * from renamed
