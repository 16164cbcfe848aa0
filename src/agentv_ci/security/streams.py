"""The console through the redaction layer: stdout and stderr wrapped so that everything printed
(progress, results, errors, warnings, tracebacks) has every known secret replaced by `***`, and, in
GitHub Actions, each secret announced with `::add-mask::` on the real stdout before it is first used.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO

from agentv_ci.security.redaction import SECRETS, SecretRegistry


class RedactingStream(io.TextIOBase):
    """A text stream that redacts what it writes and passes it to `inner`."""

    def __init__(self, inner: TextIO, registry: SecretRegistry = SECRETS) -> None:
        super().__init__()
        self.inner = inner
        self.registry = registry

    def write(self, text: str) -> int:
        self.inner.write(self.registry.redact(text))
        return len(text)

    def flush(self) -> None:
        self.inner.flush()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def fileno(self) -> int:
        return self.inner.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)


def add_mask_line(value: str) -> str:
    """The workflow command that makes the GitHub runner mask `value` in the log from now on."""
    return f"::add-mask::{value}\n"


@contextmanager
def protected_console(env: Mapping[str, str], registry: SecretRegistry = SECRETS) -> Iterator[None]:
    """For the duration: the secrets of `env` registered (announced with `::add-mask::` first when
    `GITHUB_ACTIONS=true`, and every later one too) and stdout/stderr redacted."""
    stdout, stderr = sys.stdout, sys.stderr
    previous_announce = registry.announce
    if env.get("GITHUB_ACTIONS") == "true":

        def announce(value: str) -> None:
            for line in value.splitlines():
                stdout.write(add_mask_line(line))
            stdout.flush()

        registry.announce = announce
    registry.add_environment(env)
    sys.stdout = RedactingStream(stdout, registry)  # type: ignore[assignment]
    sys.stderr = RedactingStream(stderr, registry)  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = stdout, stderr
        registry.announce = previous_announce
