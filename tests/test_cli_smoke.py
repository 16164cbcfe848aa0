import subprocess
import sys
from pathlib import Path

from agentv_ci import __version__
from tests.fakes.llm_server import FakeLlmServer


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


def test_a_run_that_talks_http_does_not_load_httpxs_command_line(tmp_path: Path) -> None:
    """httpx imports its own CLI (click, rich, pygments: ~55 ms) wherever click is installed, as it is
    here; an agentv-ci process keeps it out. The run still answers through httpx from the model API."""
    with FakeLlmServer(lambda call: "ok") as server:
        evals = tmp_path / "evals"
        (evals / ".agentv").mkdir(parents=True)
        (evals / ".agentv" / "targets.yaml").write_text(
            f"targets:\n  - name: default\n    provider: openai\n    base_url: {server.base_url}\n"
            "    api_key: sk-test\n    model: m\n"
        )
        (evals / "a.eval.yaml").write_text(
            "tests:\n  - id: t\n    input: hi\n    assertions: [{type: equals, value: ok}]\n"
        )
        proc = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "agentv_ci", "run", str(evals), "-o", str(tmp_path)],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert len(server.calls) == 1
    imported = {
        line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")
    }
    assert "httpx" in imported
    assert not imported & {"httpx._main", "click", "rich", "pygments"}, sorted(imported & {"click", "rich"})
