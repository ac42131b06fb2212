with

source as (

    select * from {{ source('analytics', 'knowledge') }}

),

renamed as (

    select
        contestant,
        model,
        knowledge_cutoff,
        contaminated,
        contamination
    from source

)

select * from renamed
