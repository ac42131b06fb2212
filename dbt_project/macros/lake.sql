{#- The lake's root, as every source reads it: $ARENA_LAKE, or ../data_lake from this project. -#}
{% macro lake_root() -%}
    {{ env_var('ARENA_LAKE', '../data_lake') }}
{%- endmacro %}
