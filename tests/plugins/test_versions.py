"""Which declared plugin API versions load into this core (PLUGIN_API_VERSION 1.0)."""

from __future__ import annotations

import pytest

from agentv_ci.plugins.versions import PLUGIN_API_VERSION, api_version_problem, parse_api_version


def test_parse() -> None:
    assert parse_api_version("1") == (1, 0) and parse_api_version(" 1.2 ") == (1, 2)
    assert parse_api_version("1.x") is None and parse_api_version("v1") is None


@pytest.mark.parametrize("declared", ["1.0", "1", "1.1", PLUGIN_API_VERSION])
def test_compatible(declared: str) -> None:
    assert api_version_problem(declared, core_version="0.1.0") is None


@pytest.mark.parametrize(
    ("declared", "problem"),
    [
        (None, 'it declares no plugin API version: add `api_version = "1.1"`'),
        (1.0, 'api_version must be a string "MAJOR.MINOR" such as "1.1", got 1.0'),
        ("one", "api_version must be a string"),
        ("0.9", "it is written for plugin API 0.9, but agentv-ci 0.1.0 provides plugin API 1.1"),
        ("2.0", "it is written for plugin API 2.0, but agentv-ci 0.1.0 provides plugin API 1.1"),
        ("1.2", "it is written for plugin API 1.2, newer than the 1.1 of agentv-ci 0.1.0: upgrade agentv-ci"),
    ],
)
def test_incompatible(declared: object, problem: str) -> None:
    found = api_version_problem(declared, core_version="0.1.0")
    assert found is not None and found.startswith(problem)
