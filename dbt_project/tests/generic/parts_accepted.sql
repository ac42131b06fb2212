{#- Every `separator`-joined part of `column_name` is one of `values` (a market of several
    providers is labelled `ccxt+yfinance`). -#}
{% test parts_accepted(model, column_name, values, separator='+') %}
select {{ column_name }}, part
from {{ model }}, unnest(string_split({{ column_name }}, '{{ separator }}')) as t(part)
where part not in ({% for v in values %}'{{ v }}'{% if not loop.last %}, {% endif %}{% endfor %})
{% endtest %}
