-- Which patterns of disagreement paid: each debate's pattern (how the two directional analysts
-- leaned, the risk level, the verdict, whether the judge held on split opinions) against the
-- returns that followed it, per horizon, with counts.
with

debates as (
    select
        id as debate_id,
        symbol,
        signal,
        risk,
        case
            when bull_lean = bear_lean and bull_lean in ('BULLISH', 'BEARISH') then 'agree'
            when bull_lean in ('BULLISH', 'BEARISH') and bear_lean in ('BULLISH', 'BEARISH')
                then 'split'
            when bull_lean = 'NEUTRAL' and bear_lean = 'NEUTRAL' then 'no lean'
            else 'one-sided'
        end as agreement,
        coalesce(judge_signal = 'hold', false)
            and bull_lean in ('BULLISH', 'BEARISH') and bear_lean in ('BULLISH', 'BEARISH')
            and bull_lean <> bear_lean as judge_held_on_split,
        coalesce(overruled, false) as overruled
    from {{ source('signals', 'debates') }}
    where command = 'DEBATE' and error is null and id is not null
),

outcomes as (
    -- one outcome per (debate, horizon), whatever a race between two requests wrote
    select debate_id, horizon_bars, "return"
    from {{ source('signals', 'outcomes') }}
    where debate_id is not null
    qualify row_number() over (partition by debate_id, horizon_bars order by attached_at) = 1
),

joined as (
    select
        d.*,
        o.horizon_bars,
        o."return",
        case d.signal when 'buy' then o."return" when 'sell' then -o."return" end
            as signal_return
    from debates as d
    inner join outcomes as o using (debate_id)
)

select
    agreement,
    risk,
    signal,
    judge_held_on_split,
    horizon_bars,
    count(distinct debate_id) as debates,
    count(*) as outcomes,
    avg("return") as mean_return,
    avg(signal_return) as mean_signal_return,
    avg(case when signal_return > 0 then 1.0 when signal_return is not null then 0.0 end)
        as hit_rate
from joined
group by all
