import subprocess
import sys

from agentv_ci import __version__


def test_version_in_subprocess() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agentv_ci", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"agentv-ci {__version__}"


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys; from agentv_ci.cli import app; "
        "print(','.join(m for m in ('httpx','jsonschema','stevedore','junit_xml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
