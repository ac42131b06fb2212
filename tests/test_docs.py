"""The documentation site builds strict (``make docs``): a broken link or anchor fails it, the CLI
reference is generated from the commands themselves and the marts' reference from the dbt YAML,
so neither can fall behind the code. The README stays short and points into the site."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.docs import DOCS, ROOT, pages

ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def _build(site: Path, *, config: Path = ROOT / "mkdocs.yml") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(site)], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = _build(out)
    assert built.returncode == 0, built.stderr[-3000:]
    assert "WARNING" not in built.stderr, built.stderr
    return out


def test_every_page_of_the_navigation_is_built(site):
    for path in pages()[2:]:
        name = path.relative_to(DOCS).with_suffix("")
        built = site / ("index.html" if name.name == "index" else name / "index.html")
        assert built.is_file(), f"{path} was not built"
    docs = {p.relative_to(DOCS) for p in DOCS.rglob("*.md")}
    assert docs == {p.relative_to(DOCS) for p in pages()[2:]}, "a page missing from the nav"


def test_the_cli_reference_names_every_command_and_option(site):
    from arena.cli import COMMANDS, app

    page = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for _, name, _ in COMMANDS:
        assert f'id="arena-{name}"' in page, name
    for group in ("season", "league", "entrant", "contest", "lake"):
        for sub in (n for n in app[group] if not n.startswith("-")):
            assert f'id="arena-{group}-{sub}"' in page, f"arena {group} {sub}"
    assert "--max-correlation" in page and "--api-base" in page


def test_the_marts_reference_has_every_mart_and_column_of_the_dbt_yaml(site):
    page = (site / "reference" / "marts" / "index.html").read_text(encoding="utf-8")
    models = ROOT / "dbt_project" / "models"
    seen = 0
    for folder in ("marts", "league", "signals"):
        for path in (models / folder).glob("*.yml"):
            for model in yaml.safe_load(path.read_text(encoding="utf-8")).get("models", []):
                assert f'id="{model["name"]}"' in page, model["name"]
                for column in model.get("columns", []):
                    assert f"<code>{column['name']}</code>" in page, (model["name"], column)
                seen += 1
    assert seen >= 20


def test_a_broken_link_fails_the_build(tmp_path):
    """Strict means strict: a page linking to a page that does not exist stops the build."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](guides/missing.md).\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump({
        "site_name": "broken", "docs_dir": str(docs), "strict": True,
        "theme": {"name": "material", "font": False}, "nav": [{"Home": "index.md"}]}))
    built = _build(tmp_path / "site", config=config)
    assert built.returncode != 0
    assert "guides/missing.md" in built.stderr


def test_the_readme_is_short_and_points_into_the_site():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    for target in ("docs/getting-started.md", "docs/quickstart/analyst.md",
                   "docs/guides/runbook.md", "make docs"):
        assert target in readme
    for link in re.findall(r"\]\(([^)#]+)\)", readme):
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"
