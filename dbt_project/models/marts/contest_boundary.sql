-- Per asset of the season's contest: where luck ends on it and who is past it - the fee, the
-- luck ceiling of its tracks' zero-skill players, how many entrants hold a track, how many are
-- eligible and how many cleared the ceiling, the best eligible return and the entrant(s) who
-- hold it (tied entrants listed together), and the prize paid so far against the pool. Every
-- asset of the contest has a row, with or without entrants; no rows when the season is not a
-- contest.
with

assets as (

    select * from {{ ref('stg_analytics__contest_assets') }}

),

standings as (

    select * from {{ ref('contest_standings') }}

),

per_asset as (

    select
        symbol,
        count(*) as entrants,
        count(*) filter (where eligible) as eligible_tracks,
        count(*) filter (where cleared) as cleared_tracks,
        max(luck_ceiling) as luck_ceiling,
        max(zero_skill_players) as zero_skill_players,
        max(total_return) filter (where eligible) as best_return,
        sum(prize) as prize_paid
    from standings
    group by symbol

),

leaders as (

    select
        symbol,
        string_agg(entrant, ', ' order by entrant) as leaders,
        count(*) as leader_count
    from standings
    where eligible and place = 1
    group by symbol

)

select
    a.contest,
    a.symbol,
    a.name,
    a.ordinal,
    a.fee_rate,
    a.eligibility,
    p.luck_ceiling,
    p.zero_skill_players,
    coalesce(p.entrants, 0) as entrants,
    coalesce(p.eligible_tracks, 0) as eligible_tracks,
    coalesce(p.cleared_tracks, 0) as cleared_tracks,
    p.best_return,
    l.leaders,
    coalesce(l.leader_count, 0) as leader_count,
    coalesce(p.best_return > p.luck_ceiling, false) as leader_cleared,
    coalesce(p.prize_paid, 0.0) as prize_paid,
    a.prize_pool,
    a.prizes,
    a.currency
from assets as a
left join per_asset as p using (symbol)
left join leaders as l using (symbol)
