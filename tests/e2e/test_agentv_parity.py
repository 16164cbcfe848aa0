"""AgentV parity, end to end through the CLI (issue 13): workspaces with repositories (local bare
repos, `file://` URLs), resets, hooks and their cwd, preprocessors, the code-grader target proxy
(a Python grader and a Node script against the fake model server), stopped conversations, and
targets.yaml paths resolved from the eval file's directory."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import Call, FakeLlmServer
from tests.git_repos import git

PY = sys.executable
SECRET = "sk-proxy-secret-0123456789"


def _bare_repo(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare repository with two commits (README v1 then v2; `*.log` ignored): (path, sha1, sha2)."""
    work = tmp_path / "src-work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "README").write_text("v1\n")
    (work / ".gitignore").write_text("*.log\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "one")
    first = git(work, "rev-parse", "HEAD")
    (work / "README").write_text("v2\n")
    git(work, "commit", "-qam", "two")
    second = git(work, "rev-parse", "HEAD")
    bare = tmp_path / "src.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    return bare, first, second


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), **extra)
    return env


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    return {row["test_id"]: row for row in rows}


# An agent (cli target, runs in the workspace): reports what it sees, then leaves traces behind.
AGENT = textwrap.dedent(
    """\
    import json, os, sys
    def seen(path):
        return "yes" if os.path.exists(path) else "no"
    readme = open("myrepo/README").read().strip()
    report = f"readme={readme} prepared={seen('prepared.txt')} scratch={seen('myrepo/scratch.txt')} " \\
             f"log={seen('myrepo/build.log')} note={seen('left-by-agent.txt')}"
    open("myrepo/README", "w").write("edited by the agent\\n")
    open("myrepo/scratch.txt", "w").write("untracked\\n")
    open("myrepo/build.log", "w").write("ignored\\n")
    open("left-by-agent.txt", "w").write("x\\n")
    json.dump({"text": report}, open(sys.argv[1], "w"))
    """
)


def _workspace_project(tmp_path: Path, reset: str, *, repo_url: str) -> Path:
    project = tmp_path / "project"
    (project / "evals" / "template").mkdir(parents=True)
    (project / "scripts").mkdir()
    git(project, "init", "-q")
    (project / "evals" / "template" / "notes.txt").write_text("template\n")
    (project / "scripts" / "agent.py").write_text(AGENT)
    # before_all: a script found from the eval file's directory (`../scripts`), the shared workspace
    # given both as `{{workspace_path}}` and on stdin.
    (project / "scripts" / "prepare.py").write_text(
        "import json, sys\n"
        "ctx = json.load(sys.stdin)\n"
        "assert ctx['test_id'] == '__before_all__' and ctx['workspace_path'] == sys.argv[1], ctx\n"
        "open(sys.argv[1] + '/prepared.txt', 'w').write(ctx['test_id'])\n"
    )
    (project / ".agentv").mkdir()
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: cli\n"
        f"    command: {PY} {project}/scripts/agent.py {{OUTPUT_FILE}}\n"
    )
    (project / "evals" / "ws.eval.yaml").write_text(
        textwrap.dedent(
            f"""\
            execution:
              target: agent
              workers: 1
            workspace:
              template: ./template
              repos:
                - path: ./myrepo
                  repo: {repo_url}
                  commit: COMMIT
              hooks:
                before_all:
                  command: [{PY}, ../scripts/prepare.py, "{{{{workspace_path}}}}"]
                after_each:
                  reset: {reset}
            tests:
              - id: t1
                input: look
                assertions: [{{type: contains, value: readme=v1}}]
              - id: t2
                input: look again
                assertions: [{{type: contains, value: readme=v1}}]
            """
        )
    )
    return project


@pytest.mark.parametrize(("reset", "log_after_reset"), [("fast", "yes"), ("strict", "no")])
def test_pooled_workspace_repo_at_pinned_commit_prepared_once_and_reset_between_tests(
    tmp_path: Path, reset: str, log_after_reset: str
) -> None:
    bare, first, _ = _bare_repo(tmp_path)
    project = _workspace_project(tmp_path, reset, repo_url=bare.as_uri())
    eval_file = project / "evals" / "ws.eval.yaml"
    eval_file.write_text(eval_file.read_text().replace("COMMIT", first))
    out = tmp_path / "out"
    done = run_cli(
        "run",
        str(eval_file),
        "-o",
        str(out),
        "--allow-outside-repo",
        str(tmp_path),
        env=_env(tmp_path),
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(out)
    # the repo is cloned at the pinned first commit (HEAD of the remote is v2), before_all prepared
    # the shared workspace, and nothing the agent left is there yet
    assert rows["t1"]["output"] == "readme=v1 prepared=yes scratch=no log=no note=no"
    # after t1, `after_each.reset` put the repo back (edit reverted, untracked file gone) and the root
    # back to its baseline (the agent's note gone, before_all's file kept); `fast` keeps ignored files
    assert rows["t2"]["output"] == f"readme=v1 prepared=yes scratch=no log={log_after_reset} note=no"
    # the mirror is cached for the next run
    assert any((tmp_path / "cache" / "agentv-ci" / "git").iterdir())


def test_without_reset_the_shared_workspace_keeps_what_test_one_left(tmp_path: Path) -> None:
    bare, first, _ = _bare_repo(tmp_path)
    project = _workspace_project(tmp_path, "none", repo_url=bare.as_uri())
    eval_file = project / "evals" / "ws.eval.yaml"
    eval_file.write_text(eval_file.read_text().replace("COMMIT", first))
    out = tmp_path / "out"
    done = run_cli(
        "run", str(eval_file), "-o", str(out), "--allow-outside-repo", str(tmp_path), "--no-fail",
        env=_env(tmp_path), timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        _rows(out)["t2"]["output"] == "readme=edited by the agent prepared=yes scratch=yes log=yes note=yes"
    )


def test_a_repository_outside_the_repository_root_is_refused_located(tmp_path: Path) -> None:
    bare, first, _ = _bare_repo(tmp_path)
    project = _workspace_project(tmp_path, "fast", repo_url=bare.as_uri())
    eval_file = project / "evals" / "ws.eval.yaml"
    eval_file.write_text(eval_file.read_text().replace("COMMIT", first))
    done = run_cli("validate", str(eval_file), env=_env(tmp_path), timeout=60)
    assert done.returncode == 2
    assert "ws.eval.yaml:8:13: error[E305]" in done.stdout and "outside the repository" in done.stdout


def test_docker_workspaces_are_validated_located(tmp_path: Path) -> None:
    """No longer refused (E114): the fields are checked, each at its own place."""
    (tmp_path / "d.eval.yaml").write_text(
        "workspace:\n  docker:\n    image: python:3.12\n    cpus: 0\n"
        "tests:\n  - id: a\n    input: hi\n    criteria: c\n"
    )
    done = run_cli("validate", str(tmp_path / "d.eval.yaml"), env=_env(tmp_path), timeout=60)
    assert done.returncode == 2
    assert "E114" not in done.stdout
    assert "d.eval.yaml:4:11: error[E110]: workspace.docker.cpus must be a number from 0.1" in done.stdout


def _judge_targets(project: Path, server: FakeLlmServer, agent: str) -> None:
    (project / ".agentv").mkdir(parents=True, exist_ok=True)
    (project / ".agentv" / "targets.yaml").write_text(
        textwrap.dedent(
            f"""\
            targets:
              - name: agent
                provider: cli
                command: {agent}
                grader_target: judge
              - name: judge
                provider: openai
                model: gpt-test
                base_url: {server.base_url}
                api_key: ${{{{ OPENAI_API_KEY }}}}
            """
        )
    )


PY_GRADER = textwrap.dedent(
    """\
    import json, os, sys
    from agentv_ci.api import TargetProxyClient, TargetProxyError
    payload = json.load(sys.stdin)
    client = TargetProxyClient.from_environment()
    first = client.invoke("Is this right? " + payload["output"], system_prompt="Answer yes or no.")
    second = client.invoke("And this? " + payload["output"])
    try:
        client.invoke("one too many")
        over = "allowed"
    except TargetProxyError as exc:
        over = exc.status_code
    env = json.dumps(dict(os.environ))
    print(json.dumps({
        "score": 1.0 if "yes" in (first.raw_text or "") else 0.0,
        "assertions": [{"text": "judge said " + (first.raw_text or ""), "passed": True}],
        "details": {"over": over, "secret_seen": "SECRET" in env, "key_var": "OPENAI_API_KEY" in os.environ,
                    "info": client.get_info(), "second": second.raw_text, "tokens": first.token_usage},
    }))
    """
).replace("SECRET", SECRET)

NODE_GRADER = textwrap.dedent(
    """\
    // AgentV's SDK client (@agentv/sdk createTargetClient) is not published on npm: this speaks
    // the same protocol with fetch, as the SDK does (POST /invoke, /invokeBatch, GET /info).
    const url = process.env.AGENTV_TARGET_PROXY_URL;
    const token = process.env.AGENTV_TARGET_PROXY_TOKEN;
    const headers = {'Content-Type': 'application/json', Authorization: `Bearer ${token}`};
    let input = '';
    process.stdin.on('data', (c) => (input += c));
    process.stdin.on('end', async () => {
      const payload = JSON.parse(input);
      const one = await fetch(`${url}/invoke`, {method: 'POST', headers,
        body: JSON.stringify({question: `Is this right? ${payload.output}`, systemPrompt: 'yes or no'})});
      const answer = await one.json();
      const batch = await fetch(`${url}/invokeBatch`, {method: 'POST', headers,
        body: JSON.stringify({requests: [{question: 'a'}, {question: 'b'}]})});
      const noAuth = await fetch(`${url}/info`, {headers: {Authorization: 'Bearer wrong'}});
      const info = await (await fetch(`${url}/info`, {headers})).json();
      const env = JSON.stringify(process.env);
      console.log(JSON.stringify({
        score: answer.rawText.includes('yes') ? 1 : 0,
        assertions: [{text: `judge said ${answer.rawText}`, passed: true}],
        details: {batch_status: batch.status, no_auth: noAuth.status, info,
                  secret_seen: env.includes('SECRET'), key_var: 'OPENAI_API_KEY' in process.env},
      }));
    });
    """
).replace("SECRET", SECRET)


def test_code_grader_target_proxy_from_python_and_node(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "graders").mkdir(parents=True)
    (project / "graders" / "judge.py").write_text(PY_GRADER)
    (project / "graders" / "judge.mjs").write_text(NODE_GRADER)
    agent = project / "agent.py"
    agent.write_text("import json, sys\njson.dump({'text': 'Paris'}, open(sys.argv[1], 'w'))\n")

    def responder(call: Call) -> str:
        return "yes, correct" if "Paris" in call.last_user_text() else "no"

    node = shutil.which("node")
    proxy = "target: {max_calls: 2}"
    graders = f"      - {{name: py, type: code-grader, command: [{PY}, graders/judge.py], {proxy}}}\n"
    if node:
        graders += f"      - {{name: js, type: code-grader, command: [{node}, graders/judge.mjs], {proxy}}}\n"
    (project / "proxy.eval.yaml").write_text(
        "execution:\n  target: agent\ntests:\n  - id: capital\n    input: capital of France?\n"
        f"    assertions:\n{graders}"
    )
    with FakeLlmServer(responder) as server:
        _judge_targets(project, server, f"{PY} {agent} {{OUTPUT_FILE}}")
        out = tmp_path / "out"
        env = _env(tmp_path, OPENAI_API_KEY=SECRET)
        done = run_cli("run", str(project / "proxy.eval.yaml"), "-o", str(out), env=env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        calls = list(server.calls)
    row = _rows(out)["capital"]
    scores = {s["name"]: s for s in row["scores"]}
    py = scores["py"]
    assert py["score"] == 1.0 and py["assertions"][0]["text"] == "judge said yes, correct"
    assert py["details"]["over"] == 429  # max_calls: 2, the third call is refused
    assert py["details"]["secret_seen"] is False and py["details"]["key_var"] is False
    assert py["details"]["info"]["targetName"] == "judge" and py["details"]["info"]["maxCalls"] == 2
    assert py["details"]["tokens"] == {"input": 10, "output": 5}
    assert py["details"]["target_proxy"] == {"call_count": 2, "max_calls": 2}
    assert py["token_usage"] == {"input": 20, "output": 10}  # the proxy's calls, added to the grader
    # the key reached the model server (from the runner), never the script
    assert all(c.headers.get("authorization") == f"Bearer {SECRET}" for c in calls)
    if node:
        js = scores["js"]
        assert js["score"] == 1.0
        assert js["details"]["batch_status"] == 429  # 1 call made + a batch of 2 > max_calls 2
        assert js["details"]["no_auth"] == 401
        assert js["details"]["info"]["callCount"] == 1
        assert js["details"]["secret_seen"] is False and js["details"]["key_var"] is False
        assert len(calls) == 3
    else:
        assert len(calls) == 2


def test_target_proxy_under_dry_run_answers_with_the_mock(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "graders").mkdir(parents=True)
    (project / "graders" / "judge.py").write_text(
        "import json\nfrom agentv_ci.api import TargetProxyClient\n"
        "answer = TargetProxyClient.from_environment().invoke('q')\n"
        "print(json.dumps({'score': 1, 'assertions': [{'text': answer.raw_text, 'passed': True}]}))\n"
    )
    with FakeLlmServer() as server:
        _judge_targets(project, server, f"{PY} -c pass")
        (project / "p.eval.yaml").write_text(
            "execution:\n  target: agent\ntests:\n  - id: t\n    input: hi\n    assertions:\n"
            f"      - {{type: code-grader, command: [{PY}, graders/judge.py], target: true}}\n"
        )
        out = tmp_path / "out"
        done = run_cli(
            "run", str(project / "p.eval.yaml"), "--dry-run", "-o", str(out), env=_env(tmp_path), timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert list(server.calls) == []
    [score] = _rows(out)["t"]["scores"]
    assert "dry-run mock" in score["assertions"][0]["text"]


def test_a_preprocessor_transforms_the_file_answer_an_llm_grader_reads(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "evals").mkdir(parents=True)
    (project / "scripts").mkdir()
    git(project, "init", "-q")
    (project / "scripts" / "xlsx_to_csv.py").write_text(
        "import json, sys\nreq = json.load(sys.stdin)\n"
        "assert req['media_type'] == 'xlsx' and req['path'].endswith('report.xlsx'), req\n"
        "print('region,revenue\\nnorth,42')\n"
    )
    agent = project / "agent.py"
    agent.write_text(
        "import json, sys\n"
        "open('report.xlsx', 'wb').write(b'PK\\x03\\x04 not text \\x00')\n"
        "json.dump({'output': [{'role': 'assistant', 'content': [{'type': 'text', 'text': 'Report:'},"
        " {'type': 'file', 'path': 'report.xlsx', 'media_type': 'xlsx'}]}]}, open(sys.argv[1], 'w'))\n"
    )

    def responder(call: Call) -> str:
        seen = "north,42" in call.last_user_text()
        return json.dumps(
            {"score": 1 if seen else 0, "assertions": [{"text": f"csv seen: {seen}", "passed": seen}]}
        )

    with FakeLlmServer(responder) as server:
        _judge_targets(project, server, f"{PY} {agent} {{OUTPUT_FILE}}")
        (project / "evals" / "pre.eval.yaml").write_text(
            "execution:\n  target: agent\n"
            "preprocessors:\n  - type: xlsx\n    command: [" + PY + ", ../scripts/xlsx_to_csv.py]\n"
            "workspace:\n  isolation: per_test\n  hooks:\n    before_each:\n      command: ['true']\n"
            "tests:\n  - id: sheet\n    input: make the report\n"
            "    criteria: the report has the north revenue\n"
        )
        out = tmp_path / "out"
        env = _env(tmp_path, OPENAI_API_KEY="k")
        done = run_cli("run", str(project / "evals" / "pre.eval.yaml"), "-o", str(out), env=env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        prompt = server.calls[-1].last_user_text()
    assert "[[ file: report.xlsx ]]\nregion,revenue\nnorth,42" in prompt
    assert "Report:" in prompt
    [score] = _rows(out)["sheet"]["scores"]
    assert score["score"] == 1.0


def test_a_stopped_conversation_is_scored_with_its_skipped_turns(tmp_path: Path) -> None:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: mock\n    response: alpha\n"
    )
    (tmp_path / "chat.eval.yaml").write_text(
        textwrap.dedent(
            """\
            tests:
              - id: chat
                input: hello
                mode: conversation
                on_turn_failure: stop
                turns:
                  - input: one
                    assertions: [{type: contains, value: alpha}]
                  - input: two
                    assertions: [{type: contains, value: beta}]
                  - input: three
                    assertions: [{type: contains, value: alpha}]
            """
        )
    )
    out = tmp_path / "out"
    done = run_cli(
        "run", str(tmp_path / "chat.eval.yaml"), "-o", str(out), "--no-fail", env=_env(tmp_path), timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    row = _rows(out)["chat"]
    assert [(s["name"], s["verdict"], s["score"]) for s in row["scores"]] == [
        ("turn-1", "pass", 1.0),
        ("turn-2", "fail", 0.0),
        ("turn-3", "skip", 0.0),
    ]
    assert row["score"] == pytest.approx(1 / 3)  # AgentV: 0.333, never the 0.5 of leaving turn 3 out


def test_cli_target_cwd_dotdot_resolves_from_the_eval_file_and_grader_target_from_a_parent_file(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / "evals" / ".agentv").mkdir(parents=True)
    (project / "tools").mkdir()
    (project / "tools" / "agent.py").write_text(
        "import json, os, sys\njson.dump({'text': os.getcwd()}, open(sys.argv[1], 'w'))\n"
    )
    # the nearest targets file lacks `judge`; the project's declares it (AgentV finds it there)
    (project / "evals" / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: agent\n    provider: cli\n    cwd: ..\n"
        f"    command: {PY} tools/agent.py {{OUTPUT_FILE}}\n"
        "    grader_target: judge\n"
    )
    (project / ".agentv").mkdir()
    (project / ".agentv" / "targets.yaml").write_text(
        'targets:\n  - name: judge\n    provider: mock\n    response: \'{"score": 1, "assertions": []}\'\n'
    )
    (project / "evals" / "where.eval.yaml").write_text(
        "execution:\n  target: agent\ntests:\n  - id: where\n    input: where are you?\n"
        "    criteria: says where\n"
        "    assertions:\n      - type: llm-grader\n      - type: contains\n        value: project\n"
    )
    assert run_cli("validate", str(project / "evals"), env=_env(tmp_path), timeout=60).returncode == 0
    out = tmp_path / "out"
    done = run_cli(
        "run", str(project / "evals" / "where.eval.yaml"), "-o", str(out), env=_env(tmp_path), timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    row = _rows(out)["where"]
    assert Path(row["output"]) == project  # `cwd: ..` from evals/, not from the dir holding .agentv/
    assert row["score"] == 1.0
