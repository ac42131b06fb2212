{#- The skill percentile, one rule for every mart that places a book among its matched players
    (arena/scoring/matched.py): the share of the players whose return is below `value`, ties
    counted half, returns compared at 10 decimals (a player on the book's own asset sums in
    another order, a last bit apart: a tie, not a place; arena.scoring.verdict.TIE_DECIMALS);
    null unless the book's `status` is scored. An aggregate over the players' rows. -#}
{% macro skill_percentile(value, player_return, status, players) -%}
    case when {{ status }} = 'scored' then
        (count(*) filter (where round({{ player_return }}, 10) < round({{ value }}, 10))
         + 0.5 * count(*) filter (where round({{ player_return }}, 10) = round({{ value }}, 10)))
        / any_value({{ players }})
    end
{%- endmacro %}
