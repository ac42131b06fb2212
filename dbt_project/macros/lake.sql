{#- The lake's root, as every source reads it: $ARENA_LAKE (absolute; required). -#}
{% macro lake_root() -%}
    {{ env_var('ARENA_LAKE') }}
{%- endmacro %}
