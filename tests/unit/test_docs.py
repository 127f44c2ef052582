"""The README and docs/: short, one page per task, every relative link resolving, the settings
page generated from the settings classes."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = (
    "getting-started",
    "demo",
    "app",
    "sharing",
    "privacy",
    "mcp",
    "cli",
    "configuration",
    "architecture",
    "recall",
    "performance",
    "maintenance",
    "agent",
    "testing",
)
#: markdown links and images: [text](target) and ![alt](target)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HISTORY = re.compile(
    r"\bissue \d+|\b(first|second|third|fourth|fifth|sixth|seventh|eighth) pass\b", re.I
)


def _load_config_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_docs", ROOT / "docs/config_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _markdown_files() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "BENCHMARKS.md",
        ROOT / "benchmarks/README.md",
        *sorted(DOCS.glob("*.md")),
    ]


def test_the_readme_reads_in_five_minutes() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200
    head = "\n".join(lines[:40])
    # what it is, a screenshot and the two commands come first
    assert "](docs/screenshots/" in head
    assert "make run" in head and "make test" in head


def test_docs_hold_one_page_per_task_none_too_long() -> None:
    assert {p.stem for p in DOCS.glob("*.md")} == set(PAGES)
    for page in PAGES:
        lines = (DOCS / f"{page}.md").read_text(encoding="utf-8").splitlines()
        assert lines[0].startswith("# "), page
        assert len(lines) <= 350, f"docs/{page}.md has {len(lines)} lines"


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: p.name)
def test_every_relative_link_resolves_and_no_image_is_remote(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(target)
    assert broken == []
    assert not re.search(r"!\[[^\]]*\]\(https?://", text), "images are files of docs/screenshots"


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return out


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: p.name)
def test_no_page_tells_history(path: Path) -> None:
    assert not HISTORY.search(path.read_text(encoding="utf-8"))


def test_the_configuration_page_is_generated_from_the_settings_classes() -> None:
    committed = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert committed == _load_config_docs().render(), (
        "docs/configuration.md is out of date: run "
        "`PYTHONPATH=. python docs/config_docs.py > docs/configuration.md`"
    )


def test_the_configuration_page_lists_every_setting_that_env_example_lists() -> None:
    config_docs = _load_config_docs()
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    for _title, _module, cls in config_docs.LAYERS:
        for name, field in cls.model_fields.items():
            env = config_docs.env_name(cls, name, field)
            assert f"| `{env}` |" in page and f"{env}=" in example
