{#- Staging and intermediate models go to their own schemas; marts and seeds stay in `main`,
    where analysts look first. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ custom_schema_name if custom_schema_name is not none else target.schema }}
{%- endmacro %}
