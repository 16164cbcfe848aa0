"""Shared fixtures. The stevedore entry-point cache is disabled for tests (it can go stale)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

# pytest keeps its assertion-rewritten test modules as byte code only where writing byte code is on.
# PYTHONDONTWRITEBYTECODE (set on these machines, and in many CI images) turned it off, so each xdist
# worker parsed and rewrote all ~400 test modules again: about 7 s of CPU a worker, every run. It is
# turned on for this process only; the child processes the tests start keep the environment as it is.
sys.dont_write_bytecode = False

# The user's cache dir, for tools worth keeping between sessions (the SARIF Multitool install).
USER_CACHE_HOME = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
_cache = Path(tempfile.mkdtemp(prefix="agentv-ci-test-cache-"))
(_cache / "python-entrypoints").mkdir()
(_cache / "python-entrypoints" / ".disable").touch()
os.environ["XDG_CACHE_HOME"] = str(_cache)

import pytest  # noqa: E402

from tests.fakes.github_server import FakeGitHub  # noqa: E402
from tests.fakes.llm_server import FakeLlmServer  # noqa: E402
from tests.file_order import longest_files_first  # noqa: E402
from tests.fresh_venv import (  # noqa: E402
    PLUGIN_DIRS,
    FreshVenv,
    build_wheels,
    create_fresh_venv,
    venv_lock,
    wheelhouse,
)
from tests.session_once import once_per_session  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
# The output schemas: ../shared/schemas when present, else the unmodified copies vendored in tests/.
_SHARED = REPO_ROOT.parent / "shared" / "schemas"
SHARED_SCHEMAS = (
    _SHARED if (_SHARED / "sarif-schema-2.1.0.json").is_file() else REPO_ROOT / "tests" / "schemas"
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = longest_files_first(items)


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
def _shared_fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    """agentv-ci and the in-repo plugins built as wheels and installed into a new venv (once per
    session, across xdist workers; dependency wheels cached between sessions under the user's cache
    dir)."""
    house = USER_CACHE_HOME / "agentv-ci-tests"

    def build(base: Path) -> None:
        (base / "wheels").mkdir()
        build_wheels([REPO_ROOT, *PLUGIN_DIRS], base / "wheels", base / "sources")
        create_fresh_venv(base / "venv", base / "wheels", wheelhouse(house))

    base = once_per_session(tmp_path_factory, "fresh-venv", build)
    return FreshVenv(base / "venv", base / "wheels", wheelhouse(house))


@pytest.fixture
def fresh_venv(_shared_fresh_venv: FreshVenv) -> Iterator[FreshVenv]:
    """The session's fresh venv, to run programs in: no test changes it meanwhile (a shared lock)."""
    with venv_lock(_shared_fresh_venv, exclusive=False):
        yield _shared_fresh_venv


@pytest.fixture
def fresh_venv_to_change(_shared_fresh_venv: FreshVenv) -> Iterator[FreshVenv]:
    """The session's fresh venv, to install more into: no other test uses it meanwhile (an exclusive
    lock), so none sees a half-installed package. What it installs stays for later tests."""
    with venv_lock(_shared_fresh_venv, exclusive=True):
        yield _shared_fresh_venv


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
