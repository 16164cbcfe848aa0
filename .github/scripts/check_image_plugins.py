"""Check that an image ships the in-repo plugins: `agentv-ci plugins --json` output, read from a file.

    docker run --rm IMAGE plugins --json > plugins.json
    python3 .github/scripts/check_image_plugins.py plugins.json

Exit 0 when the HTML reporter, the JSON Schema grader and the text-stats grader are all listed and
load without error; exit 1 naming what is missing or broken. Standard library only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REQUIRED = {
    ("reporter", "html"): "agentv-ci-html-report",
    ("grader", "json-schema"): "agentv-ci-jsonschema",
    ("grader", "text-stats"): "agentv-ci-text-stats-grader",
}


def problems(listing: dict[str, object]) -> list[str]:
    plugins = listing.get("plugins")
    if not isinstance(plugins, list):
        return ["the listing has no `plugins` list"]
    seen = {(p.get("kind"), p.get("name")): p for p in plugins if isinstance(p, dict)}
    found: list[str] = []
    for key, distribution in REQUIRED.items():
        plugin = seen.get(key)
        if plugin is None:
            found.append(f"{key[0]} {key[1]!r} ({distribution}) is not installed")
        elif plugin.get("error"):
            found.append(f"{key[0]} {key[1]!r} does not load: {plugin['error']}")
        elif plugin.get("distribution") != distribution:
            found.append(f"{key[0]} {key[1]!r} comes from {plugin.get('distribution')!r}, not {distribution}")
    return found


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: check_image_plugins.py PLUGINS_JSON", file=sys.stderr)
        return 2
    listing = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    found = problems(listing)
    for problem in found:
        print(f"::error::image plugins: {problem}")
    if not found:
        print("image plugins: " + ", ".join(f"{k} {n}" for k, n in REQUIRED))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
