"""The judge is cached like the target (issue 28 item 3), end to end through `agentv-ci run` against
one fake OpenAI-compatible server on 127.0.0.1 serving both the model under test and its judge, and
counting each one's requests:

- the second run with the cache sends no model and no judge request, gives the same verdicts, and
  `summary.json`, the console and the Markdown count the judge's hits and what they saved;
- a changed answer, a changed judge prompt or changed rubrics are new judge keys (asked again);
- repeats are independent samples: each attempt is judged, and a cached attempt reads its own reply;
- a judge reply the grader could not read, then retried, is replayed as it was (the retry is a key
  of its own);
- entries in a cache directory git tracks are never read, judge replies included.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import Call, FakeLlmServer, Reply

# $1 per M tokens for the bot, $100 per M for its judge: the judge is the expensive model.
TARGETS = """\
targets:
  - name: bot
    provider: openai
    model: bot-model
    base_url: ${{ FAKE_URL }}
    api_key: sk-test
    grader_target: judge
    pricing: {input_per_mtok: 1, output_per_mtok: 1}
  - name: canned
    provider: mock
    response: CANNED
    grader_target: judge
  - name: judge
    provider: openai
    model: judge-model
    base_url: ${{ FAKE_URL }}
    api_key: sk-test
    pricing: {input_per_mtok: 100, output_per_mtok: 100}
"""
JUDGE_PROMPT = "Is this answer right? Answer: {{output}}"
EVAL = """\
execution:
  target: bot
tests:
  - id: capital
    input: What is the capital of France?
    assertions:
      - type: llm-grader
        prompt: "PROMPT"
  - id: sum
    input: What is 2 + 2?
    assertions:
      - type: llm-grader
        rubrics: [The answer is 4]
"""
PASSED = json.dumps({"score": 1, "assertions": [{"text": "right", "passed": True}]})
FAILED = json.dumps({"score": 0, "assertions": [{"text": "wrong", "passed": False}]})


def is_judge(call: Call) -> bool:
    return bool(call.body and call.body.get("model") == "judge-model")


class Models:
    """The bot answers; the judge replies with `replies` in turn (then PASSED), or with checks for a
    rubric prompt."""

    def __init__(self) -> None:
        self.replies: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, call: Call) -> Reply:
        if not is_judge(call):
            return Reply(text=f"The answer to {call.last_user_text()!r} is Paris, and 4.", usage=(20, 10))
        with self._lock:
            reply = self.replies.pop(0) if self.replies else PASSED
        if "rubric-1" in call.last_user_text() and reply == PASSED:
            reply = json.dumps({"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "4"}]})
        return Reply(text=reply, usage=(300, 40))


@pytest.fixture
def models() -> Models:
    return Models()


@pytest.fixture
def server(models: Models) -> Iterator[FakeLlmServer]:
    with FakeLlmServer(models) as fake:
        yield fake


@pytest.fixture
def root(tmp_path: Path, server: FakeLlmServer) -> Path:
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    write_eval(tmp_path)
    return tmp_path


def write_eval(
    root: Path, *, prompt: str = JUDGE_PROMPT, rubric: str = "The answer is 4", extra: str = ""
) -> None:
    text = EVAL.replace("PROMPT", prompt).replace("The answer is 4", rubric)
    (root / "qa.eval.yaml").write_text(text + extra, encoding="utf-8")


def counts(server: FakeLlmServer, since: int = 0) -> tuple[int, int]:
    """(model requests, judge requests) since the `since`-th call."""
    calls = server.calls[since:]
    judged = sum(1 for c in calls if is_judge(c))
    return len(calls) - judged, judged


def run(root: Path, server: FakeLlmServer, out: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FAKE_URL": server.base_url}
    env.pop("OPENAI_API_KEY", None)
    cache = ["--cache", "--cache-dir", str(root / "cache")]
    return run_cli("run", "qa.eval.yaml", *cache, *args, "-o", out, cwd=root, env=env, timeout=120)


def summary(root: Path, out: str) -> dict[str, Any]:
    return json.loads((root / out / "summary.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def rows(root: Path, out: str) -> dict[str, dict[str, Any]]:
    lines = (root / out / "index.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["test_id"]: row for row in map(json.loads, lines)}


def test_the_second_run_sends_no_model_and_no_judge_request_and_counts_the_judges_savings(
    root: Path, server: FakeLlmServer
) -> None:
    first = run(root, server, "first", "--markdown", "first.md")
    assert first.returncode == 0, first.stdout + first.stderr
    assert counts(server) == (2, 2)
    cold = summary(root, "first")["cache"]
    assert cold["judge"] == {
        "hits": 0,
        "misses": 2,
        "saved_input_tokens": 0,
        "saved_output_tokens": 0,
        "saved_usd": 0.0,
        "unpriced": 0,
    }

    second = run(root, server, "second", "--markdown", "second.md")

    assert second.returncode == 0, second.stdout + second.stderr
    assert counts(server, 4) == (0, 0)  # before: (0, 2), every judge asked again
    use = summary(root, "second")["cache"]
    assert (use["hits"], use["misses"]) == (2, 0)
    # each judge reply: 300 tokens in, 40 out at $100 per M tokens
    assert use["judge"] == {
        "hits": 2,
        "misses": 0,
        "saved_input_tokens": 600,
        "saved_output_tokens": 80,
        "saved_usd": pytest.approx(0.068),
        "unpriced": 0,
    }
    assert summary(root, "second")["spent_usd"] == 0.0
    line = (
        "Response cache: 2 of 2 answers and 2 of 2 judge replies came from the cache (no request "
        "sent); they saved 740 tokens (640 in, 100 out) and $0.0681."
    )
    assert line in second.stdout, second.stdout
    assert line in (root / "second.md").read_text(encoding="utf-8")
    assert "0 of 2 answers and 0 of 2 judge replies came from the cache" in first.stdout
    before, after = rows(root, "first"), rows(root, "second")
    for test in ("capital", "sum"):
        assert after[test]["score"] == before[test]["score"] == 1.0
        assert after[test]["scores"][0]["token_usage"] == {"input": 300, "output": 40}


def test_a_changed_answer_or_judge_prompt_or_rubric_is_asked_again(
    root: Path, server: FakeLlmServer, models: Models
) -> None:
    assert run(root, server, "first").returncode == 0
    assert counts(server) == (2, 2)

    # The same bot answers from the cache; only the judge prompt of `capital` changed.
    write_eval(root, prompt="Judge strictly. Answer: {{output}}")
    assert run(root, server, "prompt").returncode == 0
    assert counts(server, 4) == (0, 1)
    assert "Judge strictly" in server.calls[-1].last_user_text()

    # Only the rubric of `sum` changed.
    write_eval(root, prompt="Judge strictly. Answer: {{output}}", rubric="The answer is four")
    assert run(root, server, "rubric").returncode == 0
    assert counts(server, 5) == (0, 1)
    assert "The answer is four" in server.calls[-1].last_user_text()

    # A different answer to the same test (the mock target, twice: its answer is the only change).
    canned = ["--target", "canned", "--test-id", "capital"]
    assert run(root, server, "canned-1", *canned).returncode == 0
    assert counts(server, 6) == (0, 1)
    targets = root / ".agentv" / "targets.yaml"
    targets.write_text(TARGETS.replace("response: CANNED", "response: OTHER"), encoding="utf-8")
    models.replies = [FAILED]
    changed = run(root, server, "canned-2", *canned)
    assert changed.returncode == 1, changed.stdout + changed.stderr  # judged afresh: score 0
    assert counts(server, 7) == (0, 1)
    assert "OTHER" in server.calls[-1].last_user_text()
    # and back: the first answer's reply is still there
    targets.write_text(TARGETS, encoding="utf-8")
    assert run(root, server, "canned-3", *canned).returncode == 0
    assert counts(server, 8) == (0, 0)


def test_repeats_are_each_judged_and_each_attempt_reads_its_own_reply(
    root: Path, server: FakeLlmServer, models: Models
) -> None:
    # Three attempts with the same answer (the mock): the judge passes the 1st and 3rd only.
    models.replies = [PASSED, FAILED, PASSED]
    write_eval(root, extra="")
    text = (root / "qa.eval.yaml").read_text(encoding="utf-8")
    repeats = "execution:\n  repeat: {count: 3, strategy: mean}\n"
    (root / "qa.eval.yaml").write_text(text.replace("execution:\n", repeats), encoding="utf-8")
    repeat = ["--target", "canned", "--test-id", "capital", "--workers", "1"]
    first = run(root, server, "first", *repeat)
    assert counts(server) == (0, 3), first.stdout + first.stderr  # none reused another's reply

    second = run(root, server, "second", *repeat)

    assert second.returncode == first.returncode, second.stdout + second.stderr
    assert counts(server, 3) == (0, 0)
    trials = [t["score"] for t in rows(root, "second")["capital"]["trials"]]
    assert trials == [t["score"] for t in rows(root, "first")["capital"]["trials"]] == [1.0, 0.0, 1.0]
    assert summary(root, "second")["cache"]["judge"]["hits"] == 3


def test_an_unreadable_judge_reply_and_its_retry_are_replayed_as_they_were(
    root: Path, server: FakeLlmServer, models: Models
) -> None:
    models.replies = ["I think it is fine.", FAILED]
    one = ["--target", "canned", "--test-id", "capital"]
    first = run(root, server, "first", *one)
    # before: the retry read the unreadable reply back from the cache, three times, then a repair
    assert counts(server) == (0, 2), [c.last_user_text()[:40] for c in server.calls]
    assert first.returncode == 1, first.stdout + first.stderr

    second = run(root, server, "second", *one)

    assert counts(server, 2) == (0, 0)
    assert second.returncode == 1, second.stdout + second.stderr
    assert rows(root, "second")["capital"]["score"] == 0.0
    assert summary(root, "second")["cache"]["judge"]["hits"] == 2


def test_judge_replies_in_a_cache_directory_git_tracks_are_never_read(
    root: Path, server: FakeLlmServer, models: Models
) -> None:
    one = ["--target", "canned", "--test-id", "capital"]
    models.replies = [FAILED]
    assert run(root, server, "first", *one).returncode == 1
    # A pull request commits the cache, its judge reply edited to pass the test.
    [entry] = [p for p in (root / "cache").rglob("*.json") if "wrong" in p.read_text()]
    entry.write_text(entry.read_text().replace("0", "1").replace("false", "true").replace("wrong", "right"))
    for argv in (["init", "-q"], ["add", "-f", "cache"]):
        subprocess.run(["git", *argv], cwd=root, check=True, capture_output=True)
    models.replies = [FAILED]

    again = run(root, server, "again", *one)

    assert again.returncode == 1, again.stdout + again.stderr
    assert counts(server, 1) == (0, 1)
    assert "holds files tracked by git; it is not used" in again.stderr
