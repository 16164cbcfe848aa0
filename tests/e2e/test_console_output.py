"""What `run` prints while it runs, through the CLI in a subprocess: a failing test explains itself
(its failed checks with expected and actual, capped and escaped), a CI log gets failures and errors
in full plus a progress line every 10% (never a line per passing test unless -v), -q prints less, a
terminal (a real pty) gets a bar with elapsed time, rate, ETA and spend, and a dry run prints no FAIL."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from tests.cli_helpers import run_cli

REFUND_EVAL = """\
name: support
tests:
  - id: refund-policy
    input: How long do I have to ask for a refund?
    assertions:
      - type: contains
        value: 30 days
  - id: greeting
    input: Say hello
    assertions:
      - type: contains
        value: refund
"""
# A hostile answer: a workflow command on its own line, a terminal escape, and far more text than a
# log needs. Printed, it stays on one line per check, escaped and cut.
SECRET = "sk-live-4f9a8b7c6d5e4f3a2b1c"  # in the environment under a secret's name, and in the answer
ANSWER = f"We refund within 14 days.\n::stop-commands::pwned\n\x1b[31mred {SECRET}" + " filler" * 2000


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_", "CI"))}
    return {**env, **extra}


def _project(root: Path, *, response: str, cost: float | None = None) -> Path:
    (root / ".git").mkdir(parents=True)  # the search for targets.yaml stops at the repository root
    (root / ".agentv").mkdir()
    price = f"    cost_usd: {cost}\n" if cost is not None else ""
    (root / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: default\n    provider: mock\n    response: {json.dumps(response)}\n{price}"
    )
    return root


def _dataset(root: Path, count: int) -> None:
    with (root / "cases.jsonl").open("w") as out:
        for i in range(count):
            out.write(json.dumps({"id": f"t{i:04d}", "input": "q", "expected_output": "42"}) + "\n")
    (root / "cases.yaml").write_text('name: cases\nassertions:\n  - type: contains\n    value: "42"\n')


def test_a_failing_test_prints_its_failed_checks_capped_and_escaped(tmp_path: Path) -> None:
    root = _project(tmp_path, response=ANSWER)
    (root / "support.eval.yaml").write_text(REFUND_EVAL)
    env = _env(CI="true", SUPPORT_API_KEY=SECRET)
    done = run_cli("run", "support.eval.yaml", "-o", "out", "-v", cwd=root, env=env, timeout=120)
    assert SECRET not in done.stdout + done.stderr and "answer: We refund" in done.stderr
    done = run_cli("run", "support.eval.yaml", "-o", "out", cwd=root, env=env, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # the gate failed: never a pass
    err = done.stderr.splitlines()
    at = next(i for i, line in enumerate(err) if line.startswith("FAIL    support/refund-policy [default]"))
    block = err[at : at + 4]
    text = "\n".join(block)
    assert 'expected "30 days"' in text, done.stderr
    assert 'got "We refund within 14 days.\\n::stop-commands::pwned\\n' in text, done.stderr  # escaped
    assert all(len(line) < 400 for line in err), done.stderr  # capped: 14,000 characters of answer
    assert not any(line.lstrip().startswith("::") for line in done.stderr.splitlines())
    assert "\x1b" not in done.stderr and "\x1b" not in done.stdout
    # The final summary (stdout) names the failed check too, on the failing test's line.
    summary = next(line for line in done.stdout.splitlines() if "support/refund-policy" in line)
    assert 'expected "30 days"' in summary and "got" in summary, done.stdout


def test_quiet_prints_less_and_verbose_more(tmp_path: Path) -> None:
    root = _project(tmp_path, response=ANSWER)
    (root / "support.eval.yaml").write_text(REFUND_EVAL)
    normal = run_cli("run", "support.eval.yaml", "-o", "o1", cwd=root, env=_env(CI="true"), timeout=120)
    quiet = run_cli("run", "support.eval.yaml", "-o", "o2", "-q", cwd=root, env=_env(CI="true"), timeout=120)
    loud = run_cli("run", "support.eval.yaml", "-o", "o3", "-v", cwd=root, env=_env(CI="true"), timeout=120)
    assert normal.returncode == quiet.returncode == loud.returncode == 1
    assert "FAIL" not in quiet.stderr and "expected" not in quiet.stderr  # no per-test lines at all
    assert 'expected "30 days"' in quiet.stdout  # the summary still says why, in one line
    assert len(quiet.stdout + quiet.stderr) < len(normal.stdout + normal.stderr)
    assert len(loud.stdout + loud.stderr) > len(normal.stdout + normal.stderr)
    assert "answer:" in loud.stderr  # -v also shows the answer excerpt
    both = run_cli("run", "support.eval.yaml", "-q", "-v", cwd=root, env=_env(CI="true"), timeout=120)
    assert both.returncode == 2 and "-q and -v cannot be used together" in both.stderr, both.stderr


def test_a_ci_log_of_2000_tests_prints_progress_lines_not_a_line_per_pass(tmp_path: Path) -> None:
    root = _project(tmp_path, response="42", cost=0.001)
    _dataset(root, 2000)
    done = run_cli("run", "cases.jsonl", "-o", "out", cwd=root, env=_env(CI="true"), timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    assert not [line for line in lines if line.startswith("PASS")], done.stderr[:500]
    progress = [line for line in lines if line.startswith("progress:")]
    assert 1 <= len(progress) <= 11, done.stderr
    last = progress[-1]
    assert "2000/2000" in last and "tests/s" in last and "ETA" in last, last
    assert re.search(r"spent \$2\.00", last), last  # 2,000 answers at $0.001
    assert len(lines) <= 15, done.stderr
    verbose = run_cli("run", "cases.jsonl", "-o", "out2", "-v", cwd=root, env=_env(CI="true"), timeout=300)
    assert len([line for line in verbose.stderr.splitlines() if line.startswith("PASS")]) == 2000


def test_a_dry_run_prints_no_fail_for_placeholder_answers(tmp_path: Path) -> None:
    root = _project(tmp_path, response=ANSWER)
    (root / "support.eval.yaml").write_text(REFUND_EVAL)
    for flags in ((), ("-v",)):
        done = run_cli(
            "run", "support.eval.yaml", "-o", "out", "--dry-run", *flags,
            cwd=root, env=_env(CI="true"), timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        output = done.stdout + done.stderr
        assert not [line for line in output.splitlines() if line.lstrip().startswith("FAIL")], output
    assert "DRY RUN support/refund-policy [default]: placeholder answer" in done.stderr, done.stderr


def _read_pty(args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """Run `python -m agentv_ci ARGS` with stderr on a pseudo-terminal; what it wrote there."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentv_ci", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    return process.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def test_the_terminal_bar_shows_elapsed_rate_eta_and_spend(tmp_path: Path) -> None:
    root = _project(tmp_path, response="42", cost=0.001)
    _dataset(root, 300)
    code, text = _read_pty(["run", "cases.jsonl", "-o", "out"], root, _env(TERM="xterm"))
    assert code == 0, text
    bar = [piece for piece in text.split("\r") if piece.startswith("[")]
    assert bar, text
    final = bar[-1]
    assert "300/300" in final and "tests/s" in final and "ETA" in final and "elapsed" in final, final
    assert "$0.30" in final, final  # spend so far
    assert "PASS" not in text
