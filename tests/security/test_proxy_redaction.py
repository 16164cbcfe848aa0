"""The code-grader target proxy redacts what it hands the script (issue 19, item 8): a provider that
echoes the request's headers (the runner's `Authorization: Bearer <key>`) in its answer, or in an
error body, never gets the key to the grader. Through the CLI: a real OpenAI-compatible server on
127.0.0.1, a real grader subprocess that writes every byte it received to a file."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import Call, FakeLlmServer, Reply

PY = sys.executable
KEY = "sk-echoed-key-0123456789abcdef"

# The grader: raw HTTP to the proxy (every byte it answers kept), then its verdict.
GRADER = textwrap.dedent(
    """\
    import json, os, sys, urllib.request, urllib.error
    url, token = os.environ["AGENTV_TARGET_PROXY_URL"], os.environ["AGENTV_TARGET_PROXY_TOKEN"]
    seen = [sys.stdin.read(), json.dumps(dict(os.environ))]
    def call(method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url + path, data=data, method=method,
                                     headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                seen.append(r.read().decode())
        except urllib.error.HTTPError as exc:
            seen.append(exc.read().decode())
    call("GET", "/info")
    call("POST", "/invoke", {"question": "echo"})
    call("POST", "/invoke", {"question": "fail"})
    call("POST", "/invokeBatch", {"requests": [{"question": "echo"}, {"question": "fail"}]})
    open(sys.argv[1], "w").write("\\n".join(seen))
    echoed = "authorization" in seen[3].lower()
    print(json.dumps({"score": 1 if echoed else 0,
                      "assertions": [{"text": "the reply echoed the headers", "passed": echoed}]}))
    """
)


def _echo(call: Call) -> Reply | str:
    headers = json.dumps(call.headers)
    if "fail" in call.last_user_text():
        return Reply(status=400, body={"error": {"message": f"bad request, you sent {headers}"}})
    return f"you sent these headers: {headers}"


def test_a_provider_echoing_the_key_never_hands_it_to_the_grader(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / "grader.py").write_text(GRADER)
    received = tmp_path / "received.txt"
    with FakeLlmServer(_echo) as server:
        (project / ".agentv" / "targets.yaml").write_text(
            "targets:\n"
            f"  - {{name: agent, provider: mock, response: hello, grader_target: judge}}\n"
            f"  - {{name: judge, provider: openai, model: m, base_url: '{server.base_url}',"
            " api_key: '${{ OPENAI_API_KEY }}'}\n"
        )
        (project / "t.eval.yaml").write_text(
            "execution: {target: agent}\ntests:\n  - id: t\n    input: hi\n    assertions:\n"
            f"      - {{name: echo, type: code-grader, command: [{PY}, grader.py, '{received}'],"
            " target: {max_calls: 10}}\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
        env.update(OPENAI_API_KEY=KEY, XDG_CACHE_HOME=str(tmp_path / "cache"))
        out = tmp_path / "out"
        done = run_cli("run", str(project / "t.eval.yaml"), "-o", str(out), env=env, timeout=120)
        calls = list(server.calls)
    assert done.returncode == 0, done.stdout + done.stderr
    # the key did reach the provider, and the provider did echo it back
    assert len(calls) == 4 and all(c.headers.get("authorization") == f"Bearer {KEY}" for c in calls)
    text = received.read_text()
    assert "you sent these headers" in text and "bad request, you sent" in text
    assert KEY not in text and "***" in text
    assert text.count("***") >= 4  # two answers (output and rawText) and two error bodies
    written = [p for p in out.rglob("*") if p.is_file()]
    assert written
    for path in written:
        assert KEY not in path.read_text(errors="replace"), path
    assert KEY not in done.stdout + done.stderr
