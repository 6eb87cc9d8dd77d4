"""The README and the docs/ pages it links: every relative link points at a file of the repo, and every
#anchor into a markdown page at one of its headings, so moving a section cannot leave a dead link behind."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "datasets" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to dashes."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def dead_links(page: Path) -> list[str]:
    dead = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            dead.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            dead.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    return dead


def test_every_link_of_the_readme_and_docs_resolves():
    dead = [d for page in PAGES for d in dead_links(page)]
    assert not dead, "dead links:\n" + "\n".join(dead)


def test_the_readme_links_every_docs_page():
    readme = (ROOT / "README.md").read_text()
    unlinked = [p.name for p in sorted((ROOT / "docs").glob("*.md")) if f"(docs/{p.name})" not in readme]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_anchors_follow_githubs_rule(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Where a sweep's time goes\n## Derived: % of hardware peak (`farm/data/peak.py`)\n")
    assert anchors(page) == {"where-a-sweeps-time-goes", "derived--of-hardware-peak-farmdatapeakpy"}
