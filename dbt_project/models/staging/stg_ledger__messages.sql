with

source as (

    select * from {{ source('ledger', 'messages') }}

),

renamed as (

    select
        cycle_at,
        contestant,
        seq,
        role,
        chars,
        content,
        prompt_sha256,
        prompt_offset
    from source

)

select * from renamed
