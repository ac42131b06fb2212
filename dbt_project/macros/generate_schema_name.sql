{#- A model's schema is exactly the one its folder names in dbt_project.yml (`+schema:`), not dbt's
    default `<target schema>_<custom>`: the marts (and the signal server's mart) in `marts`, the
    layers below them in `staging` and `intermediate`; a node naming none (the universe seed)
    stays in the target's schema, `main`. Readers name the schema: `select * from
    marts.leaderboard` in the published warehouse. -#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ (custom_schema_name if custom_schema_name is not none else target.schema) | trim }}
{%- endmacro %}
