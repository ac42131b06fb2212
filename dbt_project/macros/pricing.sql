{#- Whether a contestant's model calls carry a price, one rule for every mart that sums their
    cost (leaderboard, model_calls). A model call is a call of a model or a house rule, not an
    outside entrant's submission read from its inbox (model entrant/inbox); a call carries a
    price when its cost_usd was recorded: from the roster's `prices:` (USD per million input and
    output tokens), else litellm's price map, and 0 for a house rule; a local model without
    `prices:` that litellm does not know records none. A failed call records no tokens and no
    cost, so only the calls that answered are judged. -#}
{% macro answered_model_call(model, error) -%}
    ({{ error }} is null and {{ model }} <> 'entrant/inbox')
{%- endmacro %}

{#- priced (every answered call carries a price), unpriced (none does), partly_priced (some do:
    the summed cost is a lower bound) or no_calls (no model call answered), from the counts of
    the answered model calls and of those with a cost. -#}
{% macro call_pricing(answered_calls, priced_calls) -%}
    case
        when coalesce({{ answered_calls }}, 0) = 0 then 'no_calls'
        when {{ priced_calls }} = {{ answered_calls }} then 'priced'
        when {{ priced_calls }} = 0 then 'unpriced'
        else 'partly_priced'
    end
{%- endmacro %}
