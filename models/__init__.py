"""Package data: the default roster (roster.yaml) and the prompt templates (prompts/)."""
