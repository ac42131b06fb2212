with

source as (

    select * from {{ source('monitor', 'outcome') }}

),

renamed as (

    select
        window_start,
        window_end,
        contestant,
        n_fills,
        checked,
        unobserved,
        errors
    from source

)

select * from renamed
