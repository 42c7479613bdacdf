"""Named tokens (issue 17) without surprises for tokens configured before names existed:
``NAME:TOKEN`` is accepted as ``TOKEN`` and, whole, as it was before; both are audited
under NAME; a bare token is untouched."""

from __future__ import annotations

from pathlib import Path

from luoshod.server import audit
from luoshod.server.auth import TokenAuth, load_tokens


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def test_a_named_token_is_accepted_by_its_secret_and_whole(tmp_path: Path) -> None:
    file = tmp_path / "tokens"
    file.write_text("# app and operators\nci-bot:s3cret-1\nplain-token\n")
    auth = TokenAuth(load_tokens([], file))
    assert auth.accepts(bearer("s3cret-1")) is None
    assert auth.accepts(bearer("ci-bot:s3cret-1")) is None  # a colon-bearing secret of old
    assert auth.accepts(bearer("plain-token")) is None
    for wrong in ("ci-bot", "ci-bot:", "s3cret", "plain-token:x"):
        refused = auth.accepts(bearer(wrong))
        assert refused is not None and refused.reason == "TOKEN_INVALID", wrong


def test_both_forms_are_audited_under_the_name(tmp_path: Path) -> None:
    file = tmp_path / "tokens"
    file.write_text("reviewer:abc123\n")
    load_tokens([], file)
    digest = audit._digest  # the names are kept by the token's digest, never the token
    assert audit._NAMES[digest(b"abc123")] == "reviewer"
    assert audit._NAMES[digest(b"reviewer:abc123")] == "reviewer"
