{#- Each row's quantile `columns`, listed from the lowest to the highest (q05, q25, ..., q95),
    are ordered: none is above the next. Rows that break it fail (a distribution's quantiles
    mislabelled or mixed up between columns); a row with a null quantile fails too. -#}
{% test quantiles_are_ordered(model, columns) %}
select *
from {{ model }}
where
{%- for column in columns %}
    {{ column }} is null or
{%- endfor %}
{%- for column in columns[:-1] %}
    {{ column }} > {{ columns[loop.index] }}{{ ' or' if not loop.last }}
{%- endfor %}
{% endtest %}
