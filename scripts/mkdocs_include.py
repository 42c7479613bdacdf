"""mkdocs hook: `<!-- include clients/go/README.md -->` in a page becomes that file's text.

The READMEs stay where their tests read them (each client's suite runs its README's example;
the repository's README is the site's home page): the site shows them as they are. Their
own title gives way to the page's; their links into docs/ become links between the site's
pages; their links to other files of the repository become the file's path as code, since
the site does not serve those files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
#: The READMEs that are pages of the site themselves.
PAGES = {
    "README.md": "index.md",
    "clients/python/README.md": "getting-started/python.md",
    "clients/go/README.md": "getting-started/go.md",
    "clients/typescript/README.md": "getting-started/typescript.md",
    "clients/java/README.md": "getting-started/java.md",
}
INCLUDE = re.compile(r"^<!-- include (\S+) -->$", re.M)


def _included(path: str, page_uri: str) -> str:
    source = ROOT / path
    text = re.sub(r"\A# .*\n", "", source.read_text())  # the page has its own title
    page_dir = (DOCS / page_uri).parent

    def link(m: re.Match[str]) -> str:
        bang, label, url = m.group(1), m.group(2), m.group(3)
        if url.startswith(("http://", "https://", "#", "mailto:")):
            return m.group(0)
        file, _, frag = url.partition("#")
        target = (source.parent / file).resolve()
        if target.is_relative_to(DOCS):
            return (
                f"{bang}[{label}]({os.path.relpath(target, page_dir)}{'#' + frag if frag else ''})"
            )
        rel = target.relative_to(ROOT) if target.is_relative_to(ROOT) else Path(file)
        if str(rel) in PAGES:
            if PAGES[str(rel)] == page_uri:
                return f"[{label}](#{frag})" if frag else label
            return f"[{label}]({os.path.relpath(DOCS / PAGES[str(rel)], page_dir)})"
        return label if label.startswith("`") else f"{label} (`{rel}`)"

    return re.sub(r"(!?)\[([^\]]+)\]\(([^)\s]+)\)", link, text)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    return INCLUDE.sub(lambda m: _included(m.group(1), page.file.src_uri), markdown)
