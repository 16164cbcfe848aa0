import subprocess
import sys

from agentv_ci import __version__


def test_version_in_subprocess() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agentv_ci", "--version"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == f"agentv-ci {__version__}"


def test_help_does_not_import_heavy_modules() -> None:
    # msgspec and tempfile too: `--help` (issue 12: <= 0.08 s) imports typer and little else.
    heavy = ("httpx", "jsonschema", "stevedore", "junit_xml", "msgspec", "yaml", "tempfile")
    code = f"import sys; from agentv_ci.cli import app; print([m for m in {heavy!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_typer_exit_code_reaches_the_process() -> None:
    # A command that raises typer.Exit(n) must exit n, not 0 (standalone_mode=False returns it).
    code = (
        "import typer\n"
        "from agentv_ci.cli import app, run_app\n"
        "@app.command('zz-exit-probe')\n"
        "def probe() -> None:\n"
        "    raise typer.Exit(3)\n"
        "run_app(['zz-exit-probe'])\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr


def test_unknown_command_is_bad_input() -> None:
    proc = subprocess.run([sys.executable, "-m", "agentv_ci", "nosuch"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "No such command" in proc.stderr
