"""No secret in any output: a whole `agentv-ci run` (and the Action) against targets and graders that
try to leak every secret of the runner, with every report and `GITHUB_ACTIONS=true`; every byte
written is searched for each secret, as written, URL-encoded, base64-encoded (alone and inside
`user:secret`), escaped, and by its first and last characters (a truncated or escaped copy)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import Call, FakeLlmServer, Reply

SECRETS = {
    "OPENAI_API_KEY": "sk-proj-Leak1234567890abcdefXYZuvw",
    "GITHUB_TOKEN": "ghs_LeakToken0987654321abcdefghij",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYLEAKKEY",
    "DB_PASSWORD": "correct-horse&<battery>staple",
}

AGENT = """\
import base64, json, os, sys, urllib.parse
prompt = open(sys.argv[1]).read()
key = os.environ.get("AGENT_KEY", "")
if "fail" in prompt:
    print("cannot authenticate with " + key, file=sys.stderr)
    sys.exit(1)
answer = (
    f"the key is {key}; url {urllib.parse.quote(key, safe='')}; "
    f"basic {base64.b64encode(('x-access-token:' + key).encode()).decode()}; "
    f"bare {base64.b64encode(key.encode()).decode()}"
)
json.dump({"text": answer}, open(sys.argv[2], "w"))
"""

# A hostile code grader: prints what it can find (its own env, the parent's through /proc) and the answer.
GRADER = """\
import json, os, sys
payload = json.load(sys.stdin)
try:
    parent = open(f"/proc/{os.getppid()}/environ", "rb").read().decode(errors="replace").split("\\0")
except OSError:
    parent = []
secrets = [line for line in parent if "=" in line]
print("stderr sees " + " ".join(secrets), file=sys.stderr)
print(json.dumps({
    "score": 0.5,
    "assertions": [{"text": "found " + " ".join(secrets), "passed": False, "evidence": payload["output"]}],
    "details": {"own_env": dict(os.environ), "parent_env": secrets, "answer": payload["output"]},
}))
"""

EVAL = """\
name: leak
tests:
  - id: answer
    input: answer please
    assertions:
      - type: contains
        value: nothing-matches-this
      - type: code-grader
        command: [{python}, grader.py]
  - id: broken
    input: fail please
    assertions:
      - type: contains
        value: x
"""


def targets_yaml(base_url: str) -> str:
    return f"""\
targets:
  - name: api
    provider: openai
    base_url: {base_url}
    model: gpt-test
    api_key: ${{{{ OPENAI_API_KEY }}}}
    max_retries: 0
  - name: agent
    provider: cli
    command: {sys.executable} agent.py {{PROMPT_FILE}} {{OUTPUT_FILE}}
    env:
      AGENT_KEY: ${{{{ OPENAI_API_KEY }}}}
"""


def echo_authorization(call: Call) -> Reply:
    """An OpenAI-compatible server answering 401 with the Authorization header in the error body."""
    return Reply(
        status=401,
        body={"error": {"message": f"Incorrect API key provided: {call.headers.get('authorization')}"}},
    )


def forms(secret: str) -> list[str]:
    """The secret as written, URL-encoded, base64 (alone and after `user:`-style prefixes, taking the
    characters that depend on the secret alone), JSON/XML-escaped, and its first and last 10
    characters."""
    found = {secret, urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret)}
    found |= {
        json.dumps(secret)[1:-1],
        secret.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"),
    }
    for prefix in ("", "u:", "us:", "x-access-token:"):
        encoded = base64.b64encode((prefix + secret).encode()).decode()
        start = -(-len(prefix) * 4 // 3) + 2  # past every character the prefix touches
        found.add(encoded[start : start + 16])
    found |= {secret[:10], secret[-10:]}
    return sorted(found)


def hits(text: str) -> list[str]:
    return [f"{name}:{form!r}" for name, value in SECRETS.items() for form in forms(value) if form in text]


def without_add_mask(stdout: str) -> str:
    """stdout without its leading `::add-mask::` block, which must come before any other line."""
    lines = stdout.splitlines()
    masks = 0
    while masks < len(lines) and lines[masks].startswith("::add-mask::"):
        masks += 1
    rest = lines[masks:]
    assert not any(line.startswith("::add-mask::") for line in rest), "an ::add-mask:: after output"
    return "\n".join(rest)


def written_files(*roots: Path, skip: frozenset[Path] = frozenset()) -> dict[Path, str]:
    files: dict[Path, str] = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and path not in skip and ".git" not in path.parts:
                files[path] = path.read_text(encoding="utf-8", errors="replace")
    return files


def project(root: Path, base_url: str) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / ".agentv").mkdir()
    (root / ".agentv" / "targets.yaml").write_text(targets_yaml(base_url))
    (root / "evals").mkdir()
    (root / "evals" / "agent.py").write_text(AGENT)
    (root / "evals" / "grader.py").write_text(GRADER)
    (root / "evals" / "leak.eval.yaml").write_text(EVAL.format(python=sys.executable))
    return root


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc/<ppid>/environ")
def test_a_whole_run_writes_no_secret_anywhere(tmp_path: Path, llm_server: FakeLlmServer) -> None:
    llm_server.responder = echo_authorization
    root = project(tmp_path / "repo", llm_server.base_url)
    files = tmp_path / "files"
    files.mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    out = root / "out"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))},
        **SECRETS,
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(files / "step-summary.md"),
        "TMPDIR": str(temp),
        "AGENTV_CI_CACHE_DIR": str(files / "responses"),  # searched like every other file written
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "agentv_ci",
            "run",
            "evals",
            "--target",
            "api",
            "--target",
            "agent",
            "-o",
            str(out),
            "--junit",
            str(out / "junit.xml"),
            "--sarif",
            str(out / "results.sarif"),
            "--markdown",
            str(out / "summary.md"),
            "--cache",
            "--record",
            str(out / "recorded.jsonl"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # a quality failure besides the errors

    # The leaks were attempted: the key reached the server, the agent and the grader.
    assert {c.headers.get("authorization") for c in llm_server.calls} == {
        f"Bearer {SECRETS['OPENAI_API_KEY']}"
    }
    rows = {
        (r["target"], r["test_id"]): r
        for r in map(json.loads, (out / "index.jsonl").read_text().splitlines())
    }
    assert "***" in rows[("api", "answer")]["error"]  # the 401 body, its echoed header masked
    assert "***" in rows[("agent", "answer")]["output"]
    assert "***" in rows[("agent", "broken")]["error"]  # the agent's stderr
    grader = next(s for s in rows[("agent", "answer")]["scores"] if s["type"] == "code-grader")
    assert grader["details"]["parent_env"], "the grader read the runner's environment through /proc"
    # The grader's own environment is scrubbed: no secret, nor the runner's other variables.
    assert not set(SECRETS) & set(grader["details"]["own_env"])
    assert "PATH" in grader["details"]["own_env"]

    # ::add-mask:: for each secret, first thing on stdout.
    first = done.stdout.splitlines()[: len(SECRETS)]
    assert sorted(first) == sorted(f"::add-mask::{v}" for v in SECRETS.values())
    written = written_files(
        root, files, temp, skip=frozenset(root.glob("evals/*")) | {root / ".agentv/targets.yaml"}
    )
    assert out / "junit.xml" in written and out / "results.sarif" in written and out / "summary.md" in written
    assert files / "step-summary.md" in written and out / "recorded.jsonl" in written
    assert any("responses" in p.parts for p in written), "the response cache was written"
    assert hits(without_add_mask(done.stdout)) == []
    assert hits(done.stderr) == []
    leaks = {str(path): hits(text) for path, text in written.items() if hits(text)}
    assert leaks == {}


def test_a_crash_log_holds_no_secret(tmp_path: Path) -> None:
    """An internal error whose message and traceback carry a secret: the log and stderr are redacted."""
    crash = (  # a bug inside `validate`, raised with the key in its message and in a local
        "import os, agentv_ci.validation.validator as v\n"
        "def boom(*args, **kwargs):\n"
        "    key = os.environ['OPENAI_API_KEY']\n"
        "    raise RuntimeError('failed with ' + key)\n"
        "v.validate_paths = boom\n"
        "import agentv_ci.cli as cli\n"
        "cli.run_app(['validate', '.'])\n"
    )
    env = {**os.environ, **SECRETS, "TMPDIR": str(tmp_path), "GITHUB_ACTIONS": "true"}
    done = subprocess.run(
        [sys.executable, "-c", crash], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 4, done.stderr
    logs = list(tmp_path.glob("agentv-ci-crash-*.log"))
    assert len(logs) == 1
    log = logs[0].read_text()
    assert "RuntimeError: failed with ***" in log
    assert "failed with ***" in done.stderr
    assert hits(log) == [] and hits(done.stderr) == [] and hits(without_add_mask(done.stdout)) == []


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc/<ppid>/environ")
def test_the_action_writes_no_secret_to_its_reports_outputs_or_the_pr_comment(
    tmp_path: Path, llm_server: FakeLlmServer, github_server: FakeGitHub
) -> None:
    llm_server.responder = echo_authorization
    repo = Project(tmp_path)
    repo.commit(
        {
            ".agentv/targets.yaml": targets_yaml(llm_server.base_url),
            "evals/agent.py": AGENT,
            "evals/grader.py": GRADER,
            "evals/leak.eval.yaml": EVAL.format(python=sys.executable),
        }
    )
    env = {
        **repo.env(github_server, repo.event(), target="api agent"),
        **{k: v for k, v in SECRETS.items() if k != "GITHUB_TOKEN"},
        "TMPDIR": str(tmp_path),
    }
    token = env["INPUT_GITHUB_TOKEN"]
    done = run_action(env, repo.root)
    assert done.returncode == 1, done.stdout + done.stderr
    comments = github_server.comments_on(7)
    assert len(comments) == 1 and "leak" in comments[0].body
    masked = {line for line in done.stdout.splitlines() if line.startswith("::add-mask::")}
    assert f"::add-mask::{token}" in masked and f"::add-mask::{SECRETS['OPENAI_API_KEY']}" in masked
    outputs = [repo.repo / ".agentv-ci", repo.root / "files"]
    texts = [without_add_mask(done.stdout), done.stderr, comments[0].body]
    texts += list(written_files(*outputs).values())
    assert "***" in "".join(texts)
    for text in texts:
        assert hits(text) == []
        assert token not in text
