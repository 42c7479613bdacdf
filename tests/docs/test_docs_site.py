"""The docs hold to what they say about themselves: the generated reference pages match the
code, and the README stays a front door."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_reference_pages_are_current() -> None:
    """Settings, errors, metrics, events, the API and the rules' tests, as the code has them."""
    done = subprocess.run(
        [sys.executable, "scripts/gendocs.py", "--check"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) <= 25_000, (
        f"README.md is {len(readme.encode())} bytes; move sections into docs/"
    )
    first_block = re.search(r"```sh\n(.*?)```", readme, flags=re.S)
    assert first_block and first_block.group(1).splitlines()[:2] == [
        line
        for line in first_block.group(1).splitlines()
        if line.startswith(("make run", "make test"))
    ], "the README's first commands are make run and make test"
    assert readme.index("make run") < readme.index("## ")


def test_every_rule_the_code_cites_is_stated() -> None:
    """No R-number in the code or the tests that the rules page does not state."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import gendocs

    stated = {
        int(r[1:])
        for sec in gendocs.tomllib.loads((ROOT / "scripts" / "rules.toml").read_text())["section"]
        for r, _ in sec.get("rules", [])
    }
    assert gendocs.code_citations() <= stated, sorted(gendocs.code_citations() - stated)


def test_the_readme_status_not_yet_lines_hold_against_the_code() -> None:
    """Each "not yet" of the README's status is still so; when one is built, this fails and
    the status (and this test) change with it."""
    readme = (ROOT / "README.md").read_text()
    status = readme[readme.index("## Status") :]
    assert "rules R1–R92" in status
    assert 'title = "Planned"' not in (ROOT / "scripts" / "rules.toml").read_text()
    assert (ROOT / "luoshod" / "store" / "verify.py").exists()  # the hash chain is built
    # torture sends every if_busy mode; it never cancels a run or dequeues an input, and
    # its sub-agents (luoshod/torture/phases.py) have no tool that needs approval.
    torture = "".join(p.read_text() for p in (ROOT / "luoshod" / "torture").glob("*.py"))
    for mode in ("IF_BUSY_ENQUEUE", "IF_BUSY_INTERRUPT", "IF_BUSY_ROLLBACK"):
        assert mode in torture, f"torture no longer sends {mode}"
    assert "`Cancel` or `DequeueInput`" in status and "pause on an" in status
    assert "Cancel(" not in torture and "DequeueInput" not in torture
    phases = (ROOT / "luoshod" / "torture" / "phases.py").read_text()
    assert "needs_approval" not in phases
    # ListMcpServers has no route in the JSON API; MCP resources and prompts are not used.
    http = "".join(p.read_text() for p in (ROOT / "luoshod" / "http").glob("*.py"))
    assert "ListMcpServers" not in http and "`ListMcpServers` has no route" in status
    # Compaction (R85) is the lead's only: the sub-agents' loop never compacts.
    subagents = (ROOT / "luoshod" / "engine" / "subagents.py").read_text()
    assert (
        "compaction" not in subagents and "a sub-agent's transcript is\n  never compacted" in status
    )
    mcp = "".join(p.read_text() for p in (ROOT / "luoshod" / "mcpclient").glob("*.py"))
    assert "list_resources" not in mcp and "list_prompts" not in mcp


#: The script that rewrites the old citations names the documents it replaces.
REWRITES_OLD_NAMES = {"scripts/cite_rules.py"}
#: A document a file names: a path or name ending in .md.
CITED_DOC = re.compile(r"(?<![\w/.-])([\w./-]*[A-Za-z0-9_-]\.md)\b")


def test_no_file_cites_a_document_the_repository_does_not_hold() -> None:
    """Every .md a tracked file names exists: by its path from the repository's top, from
    the file's folder or from docs/ and its folders (the site's pages name each other so), or
    as the name of a file of the repository. Run scripts/cite_rules.py after merging a branch that
    cites
    the rules under an old name."""
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    paths = set(filter(None, tracked))
    names = {Path(p).name for p in paths}
    missing = []
    for rel in sorted(paths - REWRITES_OLD_NAMES):
        path = ROOT / rel
        try:
            text = path.read_text()
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for m in CITED_DOC.finditer(text):
            ref = m.group(1)
            bases = (ROOT, path.parent, ROOT / "docs", *(ROOT / "docs").glob("*/"))
            found = Path(ref).name in names or any(
                (base / ref).resolve().is_relative_to(ROOT)
                and str((base / ref).resolve().relative_to(ROOT)) in paths
                for base in bases
            )
            if not found:
                missing.append(f"{rel}: {ref}")
    assert not missing, "documents cited but not in the repository:\n" + "\n".join(
        sorted(set(missing))
    )


CITED_TEST = re.compile(r"`((?:[\w.-]+/)*tests/[\w/]+\.py)(?:::\w+)?`")


def test_every_test_file_the_docs_name_exists() -> None:
    """A page or README that names a test file (to say what holds a claim) names one the
    repository holds, by its path from the top or from the page's folder: a test moved to
    its layer's folder leaves no page pointing at its old place."""
    pages = [*ROOT.glob("docs/**/*.md"), *ROOT.glob("**/README.md"), ROOT / "scripts/rules.toml"]
    missing = []
    for page in pages:
        if any(p in page.parts for p in ("node_modules", ".venv", "build", "target")):
            continue
        for m in CITED_TEST.finditer(page.read_text()):
            ref = m.group(1)
            if not (ROOT / ref).is_file() and not (page.parent / ref).is_file():
                missing.append(f"{page.relative_to(ROOT)}: {ref}")
    assert not missing, "test files named but not in the repository:\n" + "\n".join(missing)


def test_the_store_pages_name_the_codec_format_of_today() -> None:
    """The pages on storage say which store format this luoshod writes, and describe it:
    a format raised in the codec without its pages fails here."""
    from luoshod.store.kit.codec import FORMAT_VERSION

    storage = (ROOT / "docs" / "storage.md").read_text()
    stores = (ROOT / "docs" / "guides" / "stores.md").read_text()
    assert f"`codec.FORMAT_VERSION` (today {FORMAT_VERSION})" in storage
    assert f"Format {FORMAT_VERSION} " in storage, f"docs/storage.md describes {FORMAT_VERSION}"
    assert f"store format {FORMAT_VERSION} (`codec.FORMAT_VERSION`)" in stores


def test_the_storage_page_names_each_drivers_newest_schema() -> None:
    """docs/storage.md says what each driver's newest schema version added: a migration
    appended without its line there fails here."""
    from luoshod_lmdb.environment import MIGRATIONS as LMDB
    from luoshod_postgres.migrations import MIGRATIONS as POSTGRES
    from luoshod_sqlite.migrations import MIGRATIONS as SQLITE

    storage = (ROOT / "docs" / "storage.md").read_text()
    assert f"since schema {len(SQLITE)}," in storage, "SQLite's newest schema"
    assert (
        f"(`schedules`: name → u64 version, then the schedule's data) since schema {len(LMDB)}."
        in storage
    ), "LMDB's"
    assert f"`leases.address` since {len(POSTGRES)})" in storage, "PostgreSQL's"
