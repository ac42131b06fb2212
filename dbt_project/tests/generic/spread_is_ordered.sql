{#- A replicated model's spread is ordered: min <= q25 <= median <= q75 <= max of its instances'
    returns (and of their luck percentiles, min <= median <= max), and it counts at least one
    instance. Rows that break it fail. -#}
{% test spread_is_ordered(model) %}
select *
from {{ model }}
where instances < 1
   or not (min_return <= q25_return and q25_return <= median_return
            and median_return <= q75_return and q75_return <= max_return)
   or not (min_zero_skill_percentile <= median_zero_skill_percentile
           and median_zero_skill_percentile <= max_zero_skill_percentile)
{% endtest %}
