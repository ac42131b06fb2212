with

source as (

    select * from {{ source('analytics', 'matched_books') }}

),

renamed as (

    select
        unit,
        unit_kind,
        instances,
        instance_names,
        positions,
        status,
        players,
        seed,
        own_return,
        fallbacks,
        skipped_opens,
        book_check_usd
    from source

)

select * from renamed
