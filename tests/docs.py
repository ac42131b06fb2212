"""The documentation as its readers meet it: the README, the lake's README, and the pages of the
documentation site in the order of its navigation (``mkdocs.yml``). The tests that run the
documentation's commands, queries and snippets read it from here."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _nav_files(entries: list) -> list[str]:
    files: list[str] = []
    for entry in entries:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            files += _nav_files(value) if isinstance(value, list) else [value]
    return files


class _ConfigLoader(yaml.SafeLoader):
    """mkdocs.yml as YAML: its mkdocs tags (``!relative``) read as their plain values."""


_ConfigLoader.add_multi_constructor("!", lambda loader, _tag, node: loader.construct_scalar(node))


def pages() -> list[Path]:
    """Every page a reader may follow, README first, then the site in its navigation's order."""
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), _ConfigLoader)["nav"]
    return [ROOT / "README.md", ROOT / "data_lake" / "README.md",
            *(DOCS / name for name in _nav_files(nav))]


def page(name: str) -> str:
    """One page's text, by its path from the repository's root (``docs/guides/mcp.md``)."""
    return (ROOT / name).read_text(encoding="utf-8")


def page_with(marker: str) -> str:
    """The text of the one page that holds ``marker``."""
    found = [path for path in pages() if marker in path.read_text(encoding="utf-8")]
    assert len(found) == 1, f"{marker!r} is on {len(found)} pages: {found}"
    return found[0].read_text(encoding="utf-8")
