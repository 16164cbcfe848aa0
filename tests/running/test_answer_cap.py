"""The answer cap (issue 19, item 9): an answer longer than `--max-answer-bytes` (default 1 MiB) is cut
there with a visible marker before graders, the cache and `--record` see it; the row's `notes` and
a console warning say so, and the run completes. Through the CLI with real cli-target subprocesses."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import Message
from agentv_ci.targets.answer_cap import DEFAULT_MAX_ANSWER_BYTES, AnswerCap, cut_text, marker
from tests.cli_helpers import run_cli

PY = sys.executable
MIB = 1024 * 1024


def _project(tmp_path: Path, size: int, *, json_file: bool = False) -> Path:
    """A cli target writing an answer of `size` bytes ('y' * size) to {OUTPUT_FILE}."""
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".git").mkdir()
    write = (
        f"json.dump({{'text': 'y' * {size}}}, open(sys.argv[1], 'w'))"
        if json_file
        else f"open(sys.argv[1], 'w').write('y' * {size})"
    )
    (project / "agent.py").write_text(f"import json, sys\n{write}\n")
    (project / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: agent\n    provider: cli\n    command: {PY} agent.py {{OUTPUT_FILE}}\n"
    )
    eval_file = project / "big.eval.yaml"
    eval_file.write_text(
        "execution: {target: agent}\ntests:\n  - id: huge\n    input: say a lot\n    assertions:\n"
        "      - {type: contains, value: yyyy}\n"
        "      - {type: contains, value: '[agentv-ci: answer cut at'}\n"  # graders see the marker
    )
    return eval_file


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "AGENTV_CI_"))}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), **extra)
    return env


def _row(out: Path) -> dict[str, object]:
    rows = [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines() if line.strip()]
    assert len(rows) == 1
    row: dict[str, object] = rows[0]
    return row


def _recorded_answer(record: Path) -> str:
    rows = [json.loads(line) for line in record.read_text().splitlines() if line.strip()]
    assert len(rows) == 1
    content: str = rows[0]["output"][-1]["content"]
    return content


def test_a_50_mb_answer_is_cut_at_the_default_cap_with_marker_note_and_warning(tmp_path: Path) -> None:
    size = 50 * 1000 * 1000
    eval_file = _project(tmp_path, size)
    out, record = tmp_path / "out", tmp_path / "answers.jsonl"
    done = run_cli(
        "run", str(eval_file), "-o", str(out), "--record", str(record), "--no-cache",
        env=_env(tmp_path), timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr  # both graders passed: the run completed
    row = _row(out)
    assert row["verdict"] == "pass" and row["execution_status"] == "ok"
    assert row["notes"] == [
        f"answer truncated: the target answered {size} bytes, cut at {DEFAULT_MAX_ANSWER_BYTES} bytes "
        "(--max-answer-bytes / AGENTV_CI_MAX_ANSWER_BYTES); graders saw the cut answer"
    ]
    answer = _recorded_answer(record)
    assert answer == "y" * DEFAULT_MAX_ANSWER_BYTES + marker(DEFAULT_MAX_ANSWER_BYTES, size)
    assert record.stat().st_size < 2 * MIB  # was the whole answer
    assert f"huge [agent]: answer of {size} bytes cut at {DEFAULT_MAX_ANSWER_BYTES} bytes" in done.stderr


def test_the_cap_is_configurable_by_flag_and_environment_and_bounded(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, 100_000, json_file=True)
    out = tmp_path / "out"
    done = run_cli("run", str(eval_file), "-o", str(out), "--no-cache", "--max-answer-bytes", "4096",
                   env=_env(tmp_path), timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "cut at 4096 bytes" in str(_row(out)["notes"])
    done = run_cli("run", str(eval_file), "-o", str(out), "--no-cache",
                   env=_env(tmp_path, AGENTV_CI_MAX_ANSWER_BYTES="2048"), timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the target answered 100000 bytes, cut at 2048 bytes" in str(_row(out)["notes"])
    # an answer under the cap is untouched: no marker, so the second grader fails; no note
    done = run_cli("run", str(eval_file), "-o", str(out), "--no-cache", "--max-answer-bytes", "200000",
                   env=_env(tmp_path), timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    # (the console quotes the failing check's expected marker: only the cap's own note is absent)
    assert "notes" not in _row(out) and "bytes cut at" not in done.stderr
    for bad in ("10", "99999999999999999999999", "lots"):
        done = run_cli("run", str(eval_file), "--max-answer-bytes", bad, env=_env(tmp_path), timeout=60)
        assert done.returncode == 2, (bad, done.stdout + done.stderr)
        assert "Traceback" not in done.stderr and "max-answer-bytes" in done.stderr


def test_cut_text_keeps_whole_characters_and_counts_bytes() -> None:
    text = "é" * 3000  # 2 bytes each
    cut, size = cut_text(text, 1025)
    assert size == 6000 and cut == "é" * 512 + marker(1025, 6000)
    assert cut_text("short", 1024) == ("short", None)
    assert cut_text("y" * 1024, 1024) == ("y" * 1024, None)  # exactly at the cap: kept


def test_every_message_and_text_block_is_capped_and_warnings_are_bounded() -> None:
    warnings: list[str] = []
    cap = AnswerCap(1024, warnings)
    big = "z" * 5000
    response = TargetResponse(
        text=big,
        messages=[
            Message(role="assistant", content=big),
            Message(role="assistant", content=[{"type": "text", "value": big}]),
        ],
        raw={"huge": big},
    )
    for i in range(8):
        cut = cap.apply(response, f"t{i}")
    assert cut.text.startswith("z" * 1024 + "\n[agentv-ci: answer cut at 1024 bytes")
    assert cut.messages[0].content == cut.text
    assert cut.messages[1].content == [{"type": "text", "value": cut.text}]
    assert cut.raw is None and cut.answer_bytes == 5000 and len(cut.notes) == 1
    assert len(warnings) == 5 and cap.summary_warning() == (
        "3 more answer(s) cut at 1024 bytes (see each row's notes)"
    )
    small = TargetResponse(text="ok", messages=[Message(role="assistant", content="ok")])
    assert cap.apply(small, "s") is small


def test_a_short_final_text_does_not_spare_a_long_message_block_or_a_partial_answer() -> None:
    """Every string is looked at whenever one could be past the cap (issue 31 returns a short answer
    at once): a long message after a short final text, a long text block, a message past the cap in
    bytes but not in characters, a partial answer."""
    cap = AnswerCap(1024, [])
    big = "z" * 5000
    for messages in (
        [Message(role="assistant", content=big)],
        [Message(role="assistant", content=[{"type": "text", "value": big}])],
        [Message(role="assistant", content="ok"), Message(role="assistant", content="é" * 600)],
    ):
        cut = cap.apply(TargetResponse(text="ok", messages=messages), "t")
        assert cut.answer_bytes is not None and len(cut.notes) == 1
        assert "[agentv-ci: answer cut at 1024 bytes" in str(cut.messages[-1].content)
    partial = TargetResponse(text="ok", messages=[Message(role="assistant", content="ok")], answer_bytes=4096)
    noted = cap.apply(partial, "p")
    assert noted.answer_bytes == 4096 and len(noted.notes) == 1  # the target read only part of it


def _openai_project(tmp_path: Path, base_url: str) -> Path:
    project = tmp_path / "http-project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - {name: model, provider: openai, model: m, api_key: sk-test-0123456789, "
        f"base_url: '{base_url}', max_retries: 0}}\n"
    )
    eval_file = project / "big.eval.yaml"
    eval_file.write_text(
        "execution: {target: model}\ntests:\n  - id: huge\n    input: say a lot\n    assertions:\n"
        "      - {type: contains, value: '[agentv-ci: answer cut at'}\n"
    )
    return eval_file


def test_an_http_answer_is_cut_and_a_body_past_32_mib_is_an_execution_error(tmp_path: Path) -> None:
    from tests.fakes.llm_server import FakeLlmServer, Reply

    answers = iter(["y" * (5 * MIB), Reply(body=b"{" + b" " * (33 * MIB) + b"}")])
    with FakeLlmServer(lambda call: next(answers)) as server:
        eval_file = _openai_project(tmp_path, server.base_url)
        out = tmp_path / "out"
        done = run_cli("run", str(eval_file), "-o", str(out), "--no-cache", env=_env(tmp_path), timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f"the target answered {5 * MIB} bytes, cut at {MIB} bytes" in str(_row(out)["notes"])
        done = run_cli("run", str(eval_file), "-o", str(out), "--no-cache", env=_env(tmp_path), timeout=120)
    assert done.returncode == 3, done.stdout + done.stderr
    row = _row(out)
    assert row["execution_status"] == "execution_error"
    assert "the response body is larger than 32 MiB" in str(row["error"])
