"""The pages a newcomer reads lead somewhere: every link of README.md and docs/ reaches a file of the
repository (and the section it names), every docs page the code cites is there, and every section of
docs/PROTOCOLS.md the code names (A5, C1a, D1.4) has its anchor. No page sends a reader outside the
repository: the notes the project was built from are not shipped with it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PROTOCOLS = ROOT / "docs" / "PROTOCOLS.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")
SECTION = r"[A-E]\d+[a-z]?(?:\.\d+)?"
# "docs/PROTOCOLS.md A5, C1a", "PROTOCOLS.md E3", "(docs/PROTOCOLS.md D3-D4)"
CITED_SECTIONS = re.compile(rf"PROTOCOLS\.md((?:[ ,;-]+(?:and )?{SECTION}\b)+)")
CITED_PAGE = re.compile(r"\bdocs/([A-Za-z_]+\.md)")


def _anchors(page: Path) -> set[str]:
    """The ids a link may name: explicit <a id> anchors and GitHub's ids of the page's headings."""
    text = page.read_text(encoding="utf-8")
    found = set(re.findall(r'<a id="([^"]+)"', text))
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        found.add(re.sub(r"[^\w\- ]", "", heading.lower()).strip().replace(" ", "-"))
    return found


def _tracked(*patterns: str) -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", *patterns], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [ROOT / name for name in listed if not name.startswith("tests/test_docs.py")]


def _leads_nowhere(page: Path, link: str) -> bool:
    if re.match(r"[a-z][a-z+.-]*:", link):  # https:, mailto:
        return False
    path, _, anchor = link.partition("#")
    target = (page.parent / path).resolve() if path else page
    if not target.exists() or ROOT not in target.parents:
        return True
    return bool(anchor) and target.suffix == ".md" and anchor not in _anchors(target)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_link_of_a_page_reaches_a_file_and_its_section(page: Path) -> None:
    broken = [link for link in LINK.findall(page.read_text(encoding="utf-8")) if _leads_nowhere(page, link)]
    assert broken == [], f"{page.relative_to(ROOT)}: links that lead nowhere: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_no_page_sends_a_reader_outside_the_repository(page: Path) -> None:
    assert "../shared" not in page.read_text(encoding="utf-8"), page.relative_to(ROOT)


def test_every_docs_page_and_protocol_section_the_code_cites_is_there() -> None:
    sections = _anchors(PROTOCOLS)
    missing = []
    for source in _tracked("*.py", "*.js", "*.css", "*.sh", "*.toml"):
        text = source.read_text(encoding="utf-8", errors="replace")
        name = source.relative_to(ROOT)
        missing += [
            f"{name}: docs/{cited}"
            for cited in CITED_PAGE.findall(text)
            if not (ROOT / "docs" / cited).exists()
        ]
        for cited in CITED_SECTIONS.findall(text):
            missing += [
                f"{name}: PROTOCOLS.md {s}" for s in re.findall(SECTION, cited) if s.lower() not in sections
            ]
    assert missing == []


def test_the_checks_see_what_they_look_for() -> None:
    """Citations are read as they are written, and a link to a missing file or section is caught."""
    assert _leads_nowhere(PROTOCOLS, "NOWHERE.md") and _leads_nowhere(PROTOCOLS, "#z9")
    assert _leads_nowhere(PROTOCOLS, "../../outside.md") and not _leads_nowhere(PROTOCOLS, "#d1.4")
    assert CITED_SECTIONS.findall("see docs/PROTOCOLS.md A5, C1a and D1.4") == [" A5, C1a and D1.4"]
    assert "z9" not in _anchors(PROTOCOLS) and "d1.4" in _anchors(PROTOCOLS)
