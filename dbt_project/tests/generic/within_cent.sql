{#- `left` and `right` (SQL expressions over the model) agree to the tolerance var('cent'). -#}
{% test within_cent(model, left, right) %}
select *
from {{ model }}
where abs(({{ left }}) - ({{ right }})) > {{ var('cent') }}
   or (({{ left }}) is null) <> (({{ right }}) is null)
{% endtest %}
