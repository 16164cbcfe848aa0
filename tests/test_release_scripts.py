"""The release workflow's two scripts (.github/scripts), run as the workflow runs them: a Python 3
subprocess on real files, standard library only."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PIN = ROOT / ".github" / "scripts" / "pin_action_image.py"
CHECK = ROOT / ".github" / "scripts" / "check_image_plugins.py"
DIGEST = "sha256:" + "0123456789abcdef" * 4


def _run(script: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-I", str(script), *args], capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def action(tmp_path: Path) -> Path:
    copy = tmp_path / "action.yml"
    shutil.copy2(ROOT / "action.yml", copy)
    return copy


def test_pin_rewrites_the_image_line_only(action: Path) -> None:
    before = action.read_text(encoding="utf-8")
    done = _run(PIN, str(action), "ghcr.io/agentevals/action", DIGEST)
    assert done.returncode == 0, done.stderr
    after = action.read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [("  image: Dockerfile", f"  image: docker://ghcr.io/agentevals/action@{DIGEST}")]
    pinned = yaml.safe_load(after)
    assert pinned["runs"] == {
        "using": "docker",
        "image": f"docker://ghcr.io/agentevals/action@{DIGEST}",
        "entrypoint": "/usr/local/bin/agentv-ci-action",
    }
    assert pinned["inputs"] == yaml.safe_load(before)["inputs"]


@pytest.mark.parametrize(
    ("image", "digest", "message"),
    [
        ("ghcr.io/AgentEvals/action", DIGEST, "lower case"),
        ("docker.io/agentevals/action", DIGEST, "ghcr.io/<owner>/<repo>"),
        ("ghcr.io/agentevals/action", "sha256:abc", "64 lower-case hex"),
        ("ghcr.io/agentevals/action", "latest", "64 lower-case hex"),
    ],
)
def test_pin_refuses_a_malformed_image_or_digest(action: Path, image: str, digest: str, message: str) -> None:
    before = action.read_text(encoding="utf-8")
    done = _run(PIN, str(action), image, digest)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert action.read_text(encoding="utf-8") == before


def test_pin_refuses_an_action_already_pinned(action: Path) -> None:
    assert _run(PIN, str(action), "ghcr.io/agentevals/action", DIGEST).returncode == 0
    pinned = action.read_text(encoding="utf-8")
    again = _run(PIN, str(action), "ghcr.io/agentevals/action", DIGEST)
    assert again.returncode == 2 and "found 0" in again.stderr
    assert action.read_text(encoding="utf-8") == pinned


def _listing() -> dict[str, object]:
    """This environment's own `agentv-ci plugins --json` (make setup installs the in-repo plugins)."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "agentv-ci"), "plugins", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    listing: dict[str, object] = json.loads(done.stdout)
    return listing


def test_check_image_plugins_passes_a_listing_with_every_in_repo_plugin(tmp_path: Path) -> None:
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps(_listing()))
    done = _run(CHECK, str(path))
    assert done.returncode == 0, done.stdout
    assert "reporter html" in done.stdout


def test_check_image_plugins_fails_without_the_html_reporter(tmp_path: Path) -> None:
    listing = _listing()
    plugins = listing["plugins"]
    assert isinstance(plugins, list)
    listing["plugins"] = [p for p in plugins if p["name"] != "html"]
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps(listing))
    done = _run(CHECK, str(path))
    assert done.returncode == 1
    assert "::error::image plugins: reporter 'html' (agentv-ci-html-report) is not installed" in done.stdout


def test_check_image_plugins_fails_on_a_plugin_that_does_not_load(tmp_path: Path) -> None:
    listing = _listing()
    plugins = listing["plugins"]
    assert isinstance(plugins, list)
    for plugin in plugins:
        if plugin["name"] == "json-schema":
            plugin["error"] = "ImportError: no module named jsonschema"
    path = tmp_path / "plugins.json"
    path.write_text(json.dumps(listing))
    done = _run(CHECK, str(path))
    assert done.returncode == 1 and "'json-schema' does not load: ImportError" in done.stdout
