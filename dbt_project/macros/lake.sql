{#- The lake's root, as every source reads it: the command-line var `lake` (absolute; required;
    arena/pipeline/warehouse.py passes it with --vars). -#}
{% macro lake_root() -%}
    {{ var('lake') }}
{%- endmacro %}
