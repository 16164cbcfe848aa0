"""The plugin API version and which declared versions a loaded plugin may have.

`PLUGIN_API_VERSION` is "MAJOR.MINOR". A minor release only adds (a new optional field on a context,
a new helper); a major release may change or remove what a plugin relies on. A plugin declares the
version it is written for as `api_version = "1.1"`; it loads when the major numbers are equal and its
minor is not newer than ours. Built-in plugins ship with the core and are always at its version.
"""

from __future__ import annotations

import re

PLUGIN_API_VERSION = "1.1"

_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


def parse_api_version(text: str) -> tuple[int, int] | None:
    """(major, minor) of "1" or "1.0"; None when `text` is not such a version."""
    match = _VERSION.fullmatch(text.strip())
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


def api_version_problem(declared: object, *, core_version: str) -> str | None:
    """Why a plugin declaring `declared` cannot load into this core, or None when it can.

    `core_version` is the agentv-ci release, named in the message so the user knows what to upgrade.
    """
    ours = parse_api_version(PLUGIN_API_VERSION)
    assert ours is not None
    if declared is None:
        return (
            "it declares no plugin API version: add `api_version = "
            f'"{PLUGIN_API_VERSION}"` (the agentv_ci.api version it is written for) to the class'
        )
    if not isinstance(declared, str) or (theirs := parse_api_version(declared)) is None:
        return f'api_version must be a string "MAJOR.MINOR" such as "{PLUGIN_API_VERSION}", got {declared!r}'
    if theirs[0] != ours[0]:
        return (
            f"it is written for plugin API {declared}, but agentv-ci {core_version} provides plugin API "
            f"{PLUGIN_API_VERSION} (it loads plugins written for API {ours[0]}.x up to {PLUGIN_API_VERSION})"
        )
    if theirs[1] > ours[1]:
        return (
            f"it is written for plugin API {declared}, newer than the {PLUGIN_API_VERSION} of agentv-ci "
            f"{core_version}: upgrade agentv-ci"
        )
    return None
