-- The contestants are placed among themselves: 1 + the contestants with a strictly higher
-- return (ties share a place); a ruler (a house rule) has no place. Rows that break it fail.
with expected as (
    select
        b.contestant,
        b.role,
        b.place,
        case
            when b.role = 'contestant' then 1 + (
                select count(*)
                from {{ ref('leaderboard') }} as o
                where o.role = 'contestant' and o.total_return > b.total_return
            )
        end as expected_place
    from {{ ref('leaderboard') }} as b
)

select *
from expected
where place is distinct from expected_place
