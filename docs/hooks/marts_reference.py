"""The marts' reference page, written at build time from the dbt project's YAML: every model
of the marts, league and signals folders with its description and each column's, and the data
tests on it. The YAML is the one source: the warehouse's column comments come from it too."""

from __future__ import annotations

from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parents[2] / "dbt_project" / "models"
FOLDERS = {  # folder: what its models are
    "marts": "A season's marts (`marts` schema of `<lake>/warehouse.duckdb`, and "
             "`<lake>/marts/<mart>.parquet`)",
    "league": "A league's marts (`arena league publish`)",
    "signals": "The signal server's marts (`arena signal-marts`)",
}
MARKER = "<!-- marts reference -->"


def _cell(text: object) -> str:
    """A table cell: one line, its pipes escaped."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _tests(column: dict) -> str:
    names = []
    for test in column.get("data_tests") or column.get("tests") or []:
        names.append(test if isinstance(test, str) else next(iter(test)))
    return ", ".join(f"`{name}`" for name in names)


def _model(model: dict) -> str:
    lines = [f"### `{model['name']}`", "", " ".join(model.get("description", "").split()), ""]
    columns = model.get("columns") or []
    if columns:
        lines += ["| column | description | tests |", "|---|---|---|"]
        lines += [f"| `{c['name']}` | {_cell(c.get('description'))} | {_tests(c)} |"
                  for c in columns]
        lines.append("")
    return "\n".join(lines)


def reference() -> str:
    """The markdown of every documented model, folder by folder, models by name."""
    parts = []
    for folder, title in FOLDERS.items():
        models = []
        for path in sorted((PROJECT / folder).glob("*.yml")):
            models += (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("models", [])
        parts += [f"## {title}", ""]
        parts += [_model(model) for model in sorted(models, key=lambda m: m["name"])]
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, reference())
