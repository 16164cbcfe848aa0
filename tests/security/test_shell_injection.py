"""No value from data is ever shell code: real `agentv-ci validate`/`run` subprocesses, a real `cli`
agent and real hook commands, with dataset inputs, test ids, input file names, a model's earlier
answer and case metadata built to run `touch` on a canary file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.security.shell_projects import PY, as_yaml, created, hook_calls, project, received, run_env


def _payloads(canary: Path) -> list[str]:
    return [
        f"$(touch {canary})",
        f"`touch {canary}`",
        f"; touch {canary}",
        f"line one\n touch {canary}\n$(touch {canary})\n",
        f"'\"; touch {canary}; echo \"'",
        f"\\'$(touch {canary})\\' && touch {canary} || touch {canary} | touch {canary} & * ~ $HOME",
    ]


def _one_test(value: str) -> str:
    return as_yaml(
        {"tests": [{"id": "t1", "input": value, "assertions": [{"type": "contains", "value": "ok"}]}]}
    )


@pytest.mark.parametrize(
    ("command", "where", "hint"),
    [
        (
            '{AGENT} {OUTPUT_FILE} {PROMPT_FILE} "{PROMPT}"',
            "inside double quotes",
            "remove the quotes around {PROMPT}",
        ),
        (
            "{AGENT} {OUTPUT_FILE} {PROMPT_FILE} '{PROMPT}'",
            "inside single quotes",
            "remove the quotes around {PROMPT}",
        ),
        ('sh -c "echo {PROMPT} > {OUTPUT_FILE}"', "nested `sh -c`", "sh -c '... \"$1\"' sh {PROMPT}"),
        ("bash -c 'echo {PROMPT} > {OUTPUT_FILE}'", "nested `bash -c`", "or use {PROMPT_FILE}"),
    ],
)
def test_data_inside_quotes_or_a_nested_shell_is_a_located_error_and_nothing_runs(
    tmp_path: Path, command: str, where: str, hint: str
) -> None:
    canary = tmp_path / "pwned"
    ran = tmp_path / "ran"
    evals = project(tmp_path, f"touch {ran}; {command}", _one_test(f"$(touch {canary})"))
    env = run_env(tmp_path)
    checked = run_cli("validate", str(evals), cwd=tmp_path, env=env)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    located = re.search(r"targets\.yaml:(\d+):(\d+): error\[E501\]: (.*)", checked.stdout)
    assert located is not None, checked.stdout
    assert (int(located.group(1)), int(located.group(2))) >= (1, 1)
    assert "{PROMPT}" in located.group(3) and where in located.group(3)
    assert hint in checked.stdout
    refused = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "{PROMPT}" in refused.stderr and where in refused.stderr
    assert not canary.exists() and not ran.exists()  # refused before anything ran
    assert received(evals) == []


def test_unquoted_data_reaches_the_program_byte_for_byte_and_never_runs(tmp_path: Path) -> None:
    """Prompts, test ids and input file names built to break out of quoting reach the agent as the
    exact bytes written, as one argument each, through a shell string template."""
    canary = tmp_path / "pwned"
    payloads = _payloads(canary)
    names = ["$(touch pwned).txt", "a;touch pwned", "q'uo\"te`touch pwned`.md", "new\nline $HOME.txt"]
    files = tmp_path / "evals" / "files"
    files.mkdir(parents=True)
    for name in names:
        (files / name).write_text("x")
    ids = [f"id{n}$(touch {canary})`touch {canary}`;touch {canary}'\"" for n in range(len(payloads))]
    tests = [
        {
            "id": test_id,
            "input": payload,
            "input_files": [f"./files/{name}" for name in names],
            "assertions": [{"type": "contains", "value": "ok"}],
        }
        for test_id, payload in zip(ids, payloads, strict=True)
    ]
    evals = project(
        tmp_path, "{AGENT} {OUTPUT_FILE} {PROMPT_FILE} {PROMPT} {EVAL_ID} {FILES}", as_yaml({"tests": tests})
    )
    env = run_env(tmp_path)
    checked = run_cli("validate", str(evals), cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), "--workers", "2", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    calls = received(evals)
    assert len(calls) == len(payloads)
    by_id = {call["argv"][1]: call for call in calls}
    assert set(by_id) == {test_id.encode() for test_id in ids}
    for test_id, payload in zip(ids, payloads, strict=True):
        call = by_id[test_id.encode()]
        prompt, eval_id, *paths = call["argv"]
        assert prompt == call["prompt_file"]  # the exact prompt, as one argument
        assert payload.encode() in prompt
        assert eval_id == call["env_eval_id"] == test_id.encode()
        assert paths == [str((files / name).resolve()).encode() for name in names]
    assert not canary.exists()
    assert not created(tmp_path, "pwned")


def test_the_runner_made_paths_work_inside_quotes_and_nested_shells(tmp_path: Path) -> None:
    """`{OUTPUT_FILE}`/`{PROMPT_FILE}` may be quoted or inside `sh -c`; data goes to a nested shell
    as an argument (`sh -c '... "$1"' sh {PROMPT}`), and arrives exactly."""
    canary = tmp_path / "pwned"
    payload = f"$(touch {canary}) `touch {canary}` '\"; touch {canary}"
    command = 'sh -c \'{AGENT} "{OUTPUT_FILE}" "$0" "$1"\' "{PROMPT_FILE}" {PROMPT}'
    evals = project(tmp_path, command, _one_test(payload))
    env = run_env(tmp_path)
    assert run_cli("validate", str(evals), cwd=tmp_path, env=env).returncode == 0
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    [call] = received(evals)
    assert call["argv"] == [payload.encode()] == [call["prompt_file"]]
    assert not canary.exists()


def _conversation(tmp_path: Path, canary: Path, quote: str) -> tuple[Path, Path]:
    answer = f"$(touch {canary}) `touch {canary}`; touch {canary}"
    agent = tmp_path / "talker.py"
    log = tmp_path / "prompts.jsonl"
    agent.write_text(
        "import json, os, sys\n"
        "out, prompt = sys.argv[1], sys.argv[2]\n"
        f"open({str(log)!r}, 'a').write(json.dumps(os.fsencode(prompt).hex()) + '\\n')\n"
        f"open(out, 'w').write({answer!r} if 'second' not in prompt else 'done')\n"
    )
    turns = [{"input": "first"}, {"input": "second", "assertions": [{"type": "contains", "value": "done"}]}]
    conversation = {"tests": [{"id": "chat", "mode": "conversation", "turns": turns}]}
    command = f"{PY} {agent} {{OUTPUT_FILE}} {quote}{{PROMPT}}{quote}"
    return project(tmp_path, command, as_yaml(conversation)), log


def test_conversation_turn_two_does_not_run_what_the_model_answered_in_turn_one(tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    evals, log = _conversation(tmp_path, canary, "")
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=run_env(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    prompts = [bytes.fromhex(json.loads(line)) for line in log.read_text().splitlines()]
    assert len(prompts) == 2
    assert b"$(touch " + str(canary).encode() + b") `touch " in prompts[1]  # turn 1's answer, as text
    assert not canary.exists()


def test_conversation_with_a_quoted_prompt_is_refused_before_turn_one(tmp_path: Path) -> None:
    """`"{PROMPT}"` would let turn 2 run what the model wrote in turn 1: refused before any turn."""
    canary = tmp_path / "pwned"
    evals, log = _conversation(tmp_path, canary, '"')
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=run_env(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "{PROMPT} is inside double quotes" in result.stderr
    assert not log.exists() and not canary.exists()


def _hook_project(tmp_path: Path, hooks: dict[str, object], canary: Path) -> Path:
    (tmp_path / "evals" / "template" / "my-lib").mkdir(parents=True)
    (tmp_path / "evals" / "template" / "my-lib" / "lib.txt").write_text("lib")
    document = {
        "workspace": {"template": "./template", "hooks": hooks},
        "tests": [
            {
                "id": f"case$(touch {canary})'\"`touch {canary}`",
                "input": f"$(touch {canary}) `touch {canary}` '; touch {canary}; '\" \n touch {canary}",
                "metadata": {"note": f"$(touch {canary})'\"", "n": 1},
                "assertions": [{"type": "contains", "value": "ok"}],
            }
        ],
    }
    return project(tmp_path, "{AGENT} {OUTPUT_FILE} {PROMPT_FILE}", as_yaml(document))


def test_hook_placeholders_reach_string_and_argv_hooks_exactly_and_never_run(tmp_path: Path) -> None:
    canary = tmp_path / "pwned"
    recorder = f"{PY} {tmp_path / 'evals' / 'recorder.py'}"
    hooks = {
        # a string hook (sh -c), an argv hook, and an argv `sh -c` hook whose code uses them unquoted
        "before_each": {"command": f"{recorder} {{{{case_input}}}} {{{{test_id}}}} {{{{case_metadata}}}}"},
        "after_each": {
            "command": [
                PY,
                str(tmp_path / "evals" / "recorder.py"),
                "{{case_input}}",
                "{{test_id}}",
                "{{case_metadata}}",
            ]
        },
        "after_all": {
            "command": ["sh", "-c", f"{recorder} {{{{case_input}}}} {{{{test_id}}}} {{{{case_metadata}}}}"]
        },
    }
    evals = _hook_project(tmp_path, hooks, canary)
    env = run_env(tmp_path)
    checked = run_cli("validate", str(evals), cwd=tmp_path, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    document = json.loads((evals / "a.eval.yaml").read_text())
    test = document["tests"][0]
    calls = hook_calls(evals)
    assert len(calls) == 3, calls
    for case_input, test_id, metadata in calls[:2]:
        assert test_id == test["id"].encode()
        assert test["input"].encode() in case_input
        assert json.loads(metadata) == test["metadata"]
    assert calls[2][0] == b""  # after_all of a shared workspace: no case (AgentV)
    assert not canary.exists()
    assert not created(tmp_path, "pwned")


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("echo '{{case_input}}'", "{{case_input}} is inside single quotes"),
        ('echo "{{test_id}}"', "{{test_id}} is inside double quotes"),
        ('sh -c "echo {{case_metadata}}"', "{{case_metadata}} is inside the code string of a nested `sh -c`"),
        (["sh", "-c", 'echo "{{case_input}}"'], "{{case_input}} is inside double quotes"),
        (["bash", "-lc", "eval {{test_id}}"], "{{test_id}} is an argument of `eval`"),
        ("command eval {{case_input}}", "{{case_input}} is an argument of `eval`"),
        ("if true; then eval {{case_input}}; fi", "{{case_input}} is an argument of `eval`"),
        ("! eval {{test_id}}", "{{test_id}} is an argument of `eval`"),
        (["bash", "-c", "declare -i n={{case_input}}"], "{{case_input}} is an argument of `declare`"),
        (
            ["python3", "-c", "print({{case_input}})"],
            "{{case_input}} is inside the code string of a nested `python3 -c`",
        ),
    ],
)
def test_hook_data_where_a_shell_could_run_it_is_a_located_error_and_nothing_runs(
    tmp_path: Path, command: object, what: str
) -> None:
    canary = tmp_path / "pwned"
    ran = tmp_path / "ran"
    evals = _hook_project(
        tmp_path, {"before_all": {"command": f"touch {ran}"}, "before_each": {"command": command}}, canary
    )
    env = run_env(tmp_path)
    checked = run_cli("validate", str(evals), cwd=tmp_path, env=env)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert re.search(r"a\.eval\.yaml:1:\d+: error\[E501\]: " + re.escape(what), checked.stdout), (
        checked.stdout
    )
    refused = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "E501" in refused.stderr
    assert not ran.exists() and not canary.exists() and received(evals) == []


def test_agentv_cd_into_the_workspace_hook_works(tmp_path: Path) -> None:
    """AgentV's own `bash -c 'cd "{{workspace_path}}/my-lib" && ...'`: the workspace path is plain,
    so it may stand inside quotes and a nested shell."""
    canary = tmp_path / "pwned"
    hooks = {"before_each": {"command": "bash -c 'cd \"{{workspace_path}}/my-lib\" && ls > listing.txt'"}}
    evals = _hook_project(tmp_path, hooks, canary)
    agent = tmp_path / "reader.py"
    agent.write_text("import sys\nopen(sys.argv[1], 'w').write('ok ' + open('my-lib/listing.txt').read())\n")
    targets = {
        "targets": [{"name": "default", "provider": "cli", "command": f"{PY} {agent} {{OUTPUT_FILE}}"}]
    }
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps(targets))
    document = json.loads((evals / "a.eval.yaml").read_text())
    document["tests"][0]["assertions"] = [{"type": "contains", "value": "ok lib.txt"}]
    (evals / "a.eval.yaml").write_text(json.dumps(document))
    env = run_env(tmp_path)
    assert run_cli("validate", str(evals), cwd=tmp_path, env=env).returncode == 0
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not canary.exists()


def test_a_temporary_directory_with_shell_characters_is_refused_not_used(tmp_path: Path) -> None:
    """The runner's paths are plain or not used: a TMPDIR holding `$`, quotes or spaces makes the
    test an execution error (exit 3) naming the problem, and nothing runs."""
    ran = tmp_path / "ran"
    evals = project(tmp_path, f"touch {ran}; {{AGENT}} {{OUTPUT_FILE}} {{PROMPT_FILE}}", _one_test("hi"))
    weird = tmp_path / "t'm\"p $(touch x)"
    weird.mkdir()
    env = {**run_env(tmp_path), "TMPDIR": str(weird)}
    result = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, env=env)
    assert result.returncode == 3, result.stdout + result.stderr
    row = json.loads((tmp_path / "out" / "index.jsonl").read_text().splitlines()[0])
    assert "characters a shell treats specially" in row["error"]
    assert not ran.exists()
