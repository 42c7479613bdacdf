"""Point every citation of the rules at the page that states them: `python scripts/cite_rules.py`.

The code, the tests, the clients and the docs cited the rules (R1, R2, …) as "SEMANTICS.md
R20" and the storage layout as "DESIGN.md, Storage": documents the repository does not
hold. This rewrites each citation to what the repository has:

- in Markdown, "SEMANTICS.md R55–R65" becomes a link, [R55–R65](…/docs/reference/rules.md#r55),
  relative to the file, and a bare "SEMANTICS.md" a link to the page;
- everywhere else (code, comments, docstrings, the proto and the code generated from it),
  "SEMANTICS.md" becomes "docs/reference/rules.md";
- "DESIGN.md, Storage" becomes "docs/storage.md, Layout" (where the O(new messages) layout
  is described);
- the proto's "See the README for the table." (of errors) names docs/reference/errors.md.

Then it regenerates the reference pages (scripts/gendocs.py), whose text comes from
docstrings and proto comments. It changes only tracked files and is idempotent: run it
again after merging a branch that still cites the old names.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RULES_PAGE = ROOT / "docs" / "reference" / "rules.md"
OLD = "SEMANTICS" + ".md"  # spelt apart so that this file cites nothing itself
MD_CITATION = re.compile(
    re.escape(OLD) + r"(?P<sep>,?\s+)?(?P<rules>R(?P<first>\d+)(?:\s*[–-]\s*R\d+)?)?"
)
SKIP = {"scripts/cite_rules.py"}


def markdown(text: str, path: Path) -> str:
    page = os.path.relpath(RULES_PAGE, path.parent)

    def repl(m: re.Match[str]) -> str:
        if m.group("rules"):
            return f"[{m.group('rules')}]({page}#r{m.group('first')})"
        return f"[the rules]({page}){m.group('sep') or ''}"

    return MD_CITATION.sub(repl, text)


def other(text: str) -> str:
    return text.replace(OLD, "docs/reference/rules.md")


def main() -> int:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    changed = []
    for rel in filter(None, tracked):
        if rel in SKIP:
            continue
        path = ROOT / rel
        try:
            text = path.read_text()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        new = markdown(text, path) if path.suffix == ".md" else other(text)
        new = new.replace("DESIGN" + ".md, Storage", "docs/storage.md, Layout")
        # The proto's header named the README for the error table, which is a docs page now.
        new = new.replace("See the README for the table.", "The table: docs/reference/errors.md.")
        if new != text:
            path.write_text(new)
            changed.append(rel)
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gendocs.py")], cwd=ROOT, check=True)
    print(f"rewrote the citations of {len(changed)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
