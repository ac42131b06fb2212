{#- The per-period rate that compounds to an annual rate (arena/scoring/metrics.py). -#}
{% macro per_period_rate(annual_rate, periods_per_year) -%}
    (pow(1.0 + {{ annual_rate }}, 1.0 / {{ periods_per_year }}) - 1.0)
{%- endmacro %}

{#- +1 for a long position, -1 for a short one: the sign of its P&L per unit of price move. -#}
{% macro side_sign(side) -%}
    (case when {{ side }} = 'long' then 1 else -1 end)
{%- endmacro %}
