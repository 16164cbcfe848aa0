"""Shared fixtures. The stevedore entry-point cache is disabled for tests (it can go stale)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

# The user's cache dir, for tools worth keeping between sessions (the SARIF Multitool install).
USER_CACHE_HOME = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
_cache = Path(tempfile.mkdtemp(prefix="agentv-ci-test-cache-"))
(_cache / "python-entrypoints").mkdir()
(_cache / "python-entrypoints" / ".disable").touch()
os.environ["XDG_CACHE_HOME"] = str(_cache)

import pytest  # noqa: E402

from tests.fakes.github_server import FakeGitHub  # noqa: E402
from tests.fakes.llm_server import FakeLlmServer  # noqa: E402
from tests.fresh_venv import PLUGIN_DIRS, FreshVenv, build_wheels, create_fresh_venv, wheelhouse  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
# The output schemas: ../shared/schemas when present, else the unmodified copies vendored in tests/.
_SHARED = REPO_ROOT.parent / "shared" / "schemas"
SHARED_SCHEMAS = (
    _SHARED if (_SHARED / "sarif-schema-2.1.0.json").is_file() else REPO_ROOT / "tests" / "schemas"
)


@pytest.fixture
def llm_server() -> Iterator[FakeLlmServer]:
    """A fake OpenAI/Anthropic-compatible server on 127.0.0.1 (script it via `.responder`)."""
    with FakeLlmServer() as server:
        yield server


@pytest.fixture
def github_server() -> Iterator[FakeGitHub]:
    """A fake GitHub REST API on 127.0.0.1 (its module docstring lists endpoints, tokens, faults)."""
    with FakeGitHub() as server:
        yield server


@pytest.fixture(scope="session")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    """agentv-ci and the in-repo plugins built as wheels and installed into a new venv (once per
    session; dependency wheels cached between sessions under the user's cache dir)."""
    base = tmp_path_factory.mktemp("fresh-venv")
    wheels = base / "wheels"
    wheels.mkdir()
    build_wheels([REPO_ROOT, *PLUGIN_DIRS], wheels, base / "sources")
    house = wheelhouse(USER_CACHE_HOME / "agentv-ci-tests")
    return create_fresh_venv(base / "venv", wheels, house)


@pytest.fixture(autouse=True)
def _own_response_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test its own response cache: the default one is per user, and keys are portable, so two
    tests with identical fixtures would otherwise share answers."""
    monkeypatch.setenv("AGENTV_CI_CACHE_DIR", str(tmp_path_factory.mktemp("responses")))


@pytest.fixture(autouse=True)
def _no_secrets_between_tests() -> Iterator[None]:
    """The redaction registry and `--pass-env` names are process-wide: each test starts without any."""
    from agentv_ci.security.child_env import reset_pass_through
    from agentv_ci.security.redaction import SECRETS

    yield
    SECRETS.clear()
    reset_pass_through()
