"""The environment of child processes (code graders, prompt scripts, workspace hooks, cli targets):
scrubbed to an allowlist, so a script written in a pull request does not inherit `GITHUB_TOKEN`,
`AWS_SECRET_ACCESS_KEY`, `OPENAI_API_KEY` or anything else the runner holds.

A child gets:
1. the variables of `ALLOWED_NAMES` and those starting with `ALLOWED_PREFIXES` (what interpreters,
   locales, proxies and certificates need), when the parent has them;
2. the variables named by `--pass-env NAME` / `AGENTV_CI_PASS_ENV` (names separated by commas or
   spaces): the invocation's way to hand a secret to graders and agents;
3. the variables its own configuration sets explicitly (a cli target's `env:`, a workspace's
   `env:`) and the protocol variables agentv-ci sets (`AGENTV_WORKSPACE_PATH`, `AGENTV_EVAL_ID`...).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

PASS_ENV_VARIABLE = "AGENTV_CI_PASS_ENV"

ALLOWED_NAMES = frozenset(
    {
        # the process basics
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TERM",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "LANG",
        "LANGUAGE",
        "CI",
        # interpreters and package managers finding their own installation
        "VIRTUAL_ENV",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "NODE_PATH",
        "JAVA_HOME",
        "GOPATH",
        "GOROOT",
        # networks and certificates
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "REQUESTS_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS",
    }
)
ALLOWED_PREFIXES = ("LC_", "XDG_")

_SEPARATORS = re.compile(r"[\s,]+")
_extra_names: set[str] = set()


def pass_through(names: Iterable[str]) -> None:
    """Also hand the variables `names` to every child process of this run (`--pass-env`)."""
    _extra_names.update(name.strip() for name in names if name.strip())


def reset_pass_through() -> None:
    """Forget `pass_through` names (tests)."""
    _extra_names.clear()


def passed_names(parent: Mapping[str, str]) -> frozenset[str]:
    """The names handed through on request: `pass_through` ones and `AGENTV_CI_PASS_ENV`'s."""
    named = {name for name in _SEPARATORS.split(parent.get(PASS_ENV_VARIABLE, "")) if name}
    return frozenset(named | _extra_names)


def is_allowed(name: str, passed: frozenset[str] = frozenset()) -> bool:
    return name in ALLOWED_NAMES or name.startswith(ALLOWED_PREFIXES) or name in passed


def child_environment(
    explicit: Mapping[str, str] | None = None, *, parent: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The environment for a child process: the allowed and passed variables of `parent` (default:
    this process's environment), then `explicit` (which wins)."""
    source = os.environ if parent is None else parent
    passed = passed_names(source)
    env = {name: value for name, value in source.items() if is_allowed(name, passed)}
    if explicit:
        env.update(explicit)
    return env
