"""The redaction layer: which values are secrets, the encodings caught, the results file, the console."""

from __future__ import annotations

import base64
import io
import json
import sys
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.model.result import TestResult
from agentv_ci.results.results_file import ResultsWriter
from agentv_ci.security.redaction import MIN_SECRET_LENGTH, SECRETS, SecretRegistry, excerpt, is_secret_name
from agentv_ci.security.streams import RedactingStream, protected_console
from tests.properties import property_settings

KEY = "sk-test-0123456789abcdef"


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True),
        ("AWS_SECRET_ACCESS_KEY", True),
        ("GITHUB_TOKEN", True),
        ("INPUT_GITHUB_TOKEN", True),
        ("ACTIONS_ID_TOKEN_REQUEST_TOKEN", True),
        ("CLIENT_SECRET", True),
        ("DB_PASSWORD", True),
        ("PGPASSWORD", True),
        ("TOKEN", True),
        ("OPENAI_APIKEY", True),
        ("PATH", False),
        ("HOME", False),
        ("MONKEY", False),
        ("KEYBOARD_LAYOUT", False),
        ("TOKENIZERS_PARALLELISM", False),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_short_values_are_never_secrets() -> None:
    registry = SecretRegistry()
    registry.add_environment({"FLAG_TOKEN": "1", "X_KEY": "true", "Y_KEY": "a" * (MIN_SECRET_LENGTH - 1)})
    assert not registry
    assert registry.redact("1 true aaaaaaa") == "1 true aaaaaaa"


def test_every_common_encoding_is_masked() -> None:
    registry = SecretRegistry()
    secret = "p@ss/word&<value>+more"
    registry.add(secret)
    texts = [
        secret,
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        json.dumps(secret),
        secret.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"),
        base64.b64encode(secret.encode()).decode(),
        base64.urlsafe_b64encode(secret.encode()).decode(),
    ]
    for text in texts:
        cleaned = registry.redact(f"before {text} after")
        assert "***" in cleaned, text
        assert secret[:6] not in cleaned and "word" not in cleaned


@property_settings(200, deadline_ms=None)
@given(
    prefix=st.text(max_size=20),
    secret=st.text(min_size=MIN_SECRET_LENGTH, max_size=40).filter(lambda s: s.strip() == s),
    suffix=st.text(max_size=20),
)
def test_base64_of_a_secret_inside_any_text_is_masked(prefix: str, secret: str, suffix: str) -> None:
    """`user:token` and the like: the secret's base64 is found whatever precedes and follows it."""
    registry = SecretRegistry()
    registry.add(secret)
    encoded = base64.b64encode((prefix + secret + suffix).encode("utf-8", "surrogatepass")).decode()
    assert registry.redact(encoded) != encoded


def test_a_target_config_registers_its_key_and_header_credentials() -> None:
    registry = SecretRegistry()
    registry.add_config(
        {
            "model": "gpt-4o-mini-long-name",
            "api_key": KEY,
            "headers": {"Authorization": "Bearer tok-0123456789", "X-Trace": "trace-value-1"},
            "config": {"secret_token": "nested-secret-9"},
        }
    )
    assert set(registry.values) == {
        KEY,
        "Bearer tok-0123456789",
        "tok-0123456789",
        "trace-value-1",
        "nested-secret-9",
    }
    assert registry.redact("gpt-4o-mini-long-name") == "gpt-4o-mini-long-name"


def test_a_results_row_is_written_and_kept_redacted(tmp_path: Path) -> None:
    SECRETS.add(KEY)
    result = TestResult("t", "s", "m", 0.0, "execution_error", error=f"HTTP 401: bad key {KEY}", output=KEY)
    with ResultsWriter(tmp_path / "index.jsonl") as writer:
        kept = writer.append(result)
    assert kept.error == "HTTP 401: bad key ***" and kept.output == "***"
    row = json.loads((tmp_path / "index.jsonl").read_text())
    assert row["error"] == "HTTP 401: bad key ***" and KEY not in json.dumps(row)


def test_without_secrets_a_row_is_returned_as_is(tmp_path: Path) -> None:
    result = TestResult("t", "s", "m", 1.0, "ok", output="nothing secret")
    with ResultsWriter(tmp_path / "index.jsonl") as writer:
        assert writer.append(result) is result


def test_the_console_announces_masks_first_then_redacts(monkeypatch: pytest.MonkeyPatch) -> None:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    env = {"GITHUB_ACTIONS": "true", "OPENAI_API_KEY": KEY, "SHORT_TOKEN": "abc"}
    with protected_console(env):
        print(f"the key {KEY}")
        print(f"to stderr {KEY}", file=sys.stderr)
        SECRETS.add("registered-later-0001")
        print("later: registered-later-0001")
    assert out.getvalue().splitlines() == [
        f"::add-mask::{KEY}",
        "the key ***",
        "::add-mask::registered-later-0001",
        "later: ***",
    ]
    assert err.getvalue() == "to stderr ***\n"
    assert sys.stdout is out and sys.stderr is err  # restored


def test_outside_github_actions_nothing_is_announced() -> None:
    inner = io.StringIO()
    stream = RedactingStream(inner)
    SECRETS.add(KEY)
    stream.write(f"x {KEY} y")
    assert inner.getvalue() == "x *** y"


@property_settings(200)
@given(
    st.lists(
        st.sampled_from(["x", "\n", "sk-test-", KEY, KEY[:10], "sk-other-0123456789", "é"]), max_size=40
    ),
    st.integers(min_value=1, max_value=40),
)
def test_redacting_a_file_in_chunks_masks_what_redacting_it_whole_masks(parts: list[str], chunk: int) -> None:
    # secrets straddle every chunk boundary for some chunk size: the file is read in pieces of `chunk`
    registry = SecretRegistry()
    registry.add(KEY)
    registry.add("sk-other-0123456789")
    data = "".join(parts).encode()
    streamed = list(registry.redact_stream(io.BytesIO(data), chunk))
    assert b"".join(piece for piece, _ in streamed) == registry.redact_bytes(data)
    assert any(changed for _, changed in streamed) == (registry.redact_bytes(data) != data)


def test_a_report_file_is_redacted_in_place_and_left_alone_without_secrets(tmp_path: Path) -> None:
    from agentv_ci.security import redaction

    SECRETS.add(KEY)  # the autouse fixture forgets it afterwards
    report = tmp_path / "report.xml"
    report.write_bytes(b"x" * 5000 + KEY.encode() + b"y" * 5000)
    redaction.redact_file(report, chunk_bytes=4096)  # the key straddles the first two chunks
    assert report.read_bytes() == b"x" * 5000 + b"***" + b"y" * 5000
    clean = tmp_path / "clean.xml"
    clean.write_bytes(b"nothing here")
    before = clean.stat().st_mtime_ns
    redaction.redact_file(clean, chunk_bytes=4)
    assert clean.read_bytes() == b"nothing here" and clean.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean.xml", "report.xml"]


def test_excerpt_caps_and_marks_the_cut() -> None:
    assert excerpt(None, 10) == ""
    text = excerpt("x" * 1000, 100)
    assert len(text) < 120 and text.endswith("[920 chars cut]")
