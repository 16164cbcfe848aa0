"""The installed entry points are read once per process for every plugin kind; after pip installs
packages into the running process (the Action's `extra_packages`), `read_installed_again` makes the
kinds not listed yet see them, with the new distribution's name and version.

Runs in a fresh subprocess: the registry's caches are process-wide."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import importlib, sys
    from pathlib import Path

    from agentv_ci.plugins.registry import list_plugins, load_plugin_class, read_installed_again

    site = Path(sys.argv[1])
    # An earlier check lists one kind (the Action checks the HTML reporter before installing).
    assert "junit" in {p.name for p in list_plugins("agentv_ci.reporters")}
    # Then a package is installed: a grader the eval uses.
    (site / "late_plugins.py").write_text(
        "class Late:\\n"
        "    api_version = '1.0'\\n"
        "    config_schema = {'type': 'object'}\\n"
        "    def __init__(self, spec, config, *, base_dir):\\n"
        "        pass\\n"
        "    async def grade(self, ctx):\\n"
        "        return None\\n"
    )
    dist = site / "late_plugins-0.4.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\\nName: late-plugins\\nVersion: 0.4\\n")
    (dist / "entry_points.txt").write_text("[agentv_ci.graders]\\nlate = late_plugins:Late\\n")
    importlib.invalidate_caches()
    read_installed_again()
    found = [p for p in list_plugins("agentv_ci.graders") if p.name == "late"]
    print(found[0].distribution, found[0].version, found[0].entry_point)
    print(load_plugin_class("agentv_ci.graders", "late").__name__)
    print("contains" in {p.name for p in list_plugins("agentv_ci.graders")})
    """
)


def test_plugins_installed_after_a_first_listing_are_seen_with_their_distribution(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(site)], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["late-plugins 0.4 late_plugins:Late", "Late", "True"]
