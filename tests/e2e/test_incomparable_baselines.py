"""End to end: only like is compared with like. A base run and a head run whose results were produced
differently (another judge model, another target temperature, another version of a grader plugin)
are `incomparable`: listed with the reason, never a regression, never silently `unchanged`, and
when every matched test is incomparable the PR comment's headline says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import Call, FakeLlmServer
from tests.plugin_site import install_distribution, run_with_site

JUDGED = """\
name: judged
execution:
  target: agent
tests:
  - id: capital
    input: What is the capital of France?
    criteria: Names Paris
    assertions:
      - type: llm-grader
  - id: river
    input: Which river flows through Paris?
    criteria: Names the Seine
    assertions:
      - type: llm-grader
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["OPENAI_API_KEY"] = "sk-test-incomparable"
    return env


def _judged_project(root: Path, base_url: str, judge_model: str) -> None:
    (root / "evals" / ".agentv").mkdir(parents=True, exist_ok=True)
    (root / "evals" / ".agentv" / "targets.yaml").write_text(
        "targets:\n"
        "  - name: agent\n    provider: mock\n    response: Paris on the Seine\n    grader_target: judge\n"
        f"  - name: judge\n    provider: openai\n    base_url: {base_url}\n    model: {judge_model}\n"
        "    api_key: ${{ OPENAI_API_KEY }}\n",
        encoding="utf-8",
    )
    (root / "evals" / "judged.eval.yaml").write_text(JUDGED, encoding="utf-8")


def _strict_new_judge(call: Call) -> str:
    """The old judge passes every answer, the new one fails them all: a score move that says
    nothing about the agent."""
    score = 1.0 if call.body.get("model") == "gpt-4o" else 0.0
    return json.dumps({"score": score, "assertions": [{"text": "names it", "passed": score == 1.0}]})


def _compare(root: Path) -> dict[str, dict[str, object]]:
    done = run_cli("compare", "base", "head", "--format", "json", cwd=root, env=_env(), timeout=120)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return {t["test_id"]: t for t in json.loads(done.stdout)["tests"]}


def test_a_changed_judge_model_makes_the_baseline_incomparable(tmp_path: Path) -> None:
    with FakeLlmServer(_strict_new_judge) as judge:
        _judged_project(tmp_path, judge.base_url, "gpt-4o")
        base = run_cli("run", "evals", "-o", "base", "--no-cache", cwd=tmp_path, env=_env(), timeout=120)
        assert base.returncode == 0, base.stdout + base.stderr
        _judged_project(tmp_path, judge.base_url, "gpt-4.1")
        head = run_cli(
            "run", "evals", "-o", "head", "--no-cache", "--baseline", "base", "--max-regression", "0.1",
            "--min-pass-rate", "0", "--markdown", "comment.md",
            cwd=tmp_path, env=_env(), timeout=120,
        )  # fmt: skip
        tests = _compare(tmp_path)

    # Both scores fell 1.0 -> 0.0, but another judge gave them: not a regression.
    assert head.returncode == 0, head.stdout + head.stderr
    assert "broken" not in head.stdout and "regressed" not in head.stdout
    assert "2 test(s) incomparable with the baseline (judge model gpt-4o -> gpt-4.1)" in head.stdout
    for test in tests.values():
        assert test["status"] == "incomparable"
        assert test["why_incomparable"] == ["judge model gpt-4o -> gpt-4.1"]
    comment = (tmp_path / "comment.md").read_text(encoding="utf-8")
    first, second = comment.splitlines()[0], comment.splitlines()[2]
    assert first.startswith("✅ **agentv-ci:")
    assert second == (
        "**Baseline incomparable:** all 2 matched tests were produced differently "
        "(judge model gpt-4o -&gt; gpt-4.1); no test was compared."
    )  # Markdown-escaped: GitHub shows "->"
    assert (
        "| incomparable | judged/capital \\[agent\\] | 1.000 | 0.000 | -1.000 | incomparable: judge model"
        in comment
    )
    rows = [json.loads(line) for line in (tmp_path / "head" / "index.jsonl").read_text().splitlines()]
    assert {r["provenance"]["judges"][0]["model"] for r in rows} == {"gpt-4.1"}


TEMPERATURE_EVAL = """\
name: capitals
execution:
  target: agent
tests:
  - id: france
    input: What is the capital of France?
    assertions:
      - {type: contains, value: Paris}
"""


def _temperature_project(root: Path, base_url: str, temperature: str) -> None:
    (root / "evals" / ".agentv").mkdir(parents=True, exist_ok=True)
    (root / "evals" / ".agentv" / "targets.yaml").write_text(
        f"targets:\n  - name: agent\n    provider: openai\n    base_url: {base_url}\n    model: gpt-4o\n"
        f"    temperature: {temperature}\n    api_key: ${{{{ OPENAI_API_KEY }}}}\n",
        encoding="utf-8",
    )
    (root / "evals" / "capitals.eval.yaml").write_text(TEMPERATURE_EVAL, encoding="utf-8")


def test_a_target_temperature_change_is_changed_with_its_reason(tmp_path: Path) -> None:
    def answer(call: Call) -> str:
        return "Paris" if call.body.get("temperature") == 0 else "Lyon, I think"

    with FakeLlmServer(answer) as server:
        _temperature_project(tmp_path, server.base_url, "0")
        base = run_cli("run", "evals", "-o", "base", "--no-cache", cwd=tmp_path, env=_env(), timeout=120)
        assert base.returncode == 0, base.stdout + base.stderr
        _temperature_project(tmp_path, server.base_url, "0.7")
        head = run_cli(
            "run", "evals", "-o", "head", "--no-cache", "--baseline", "base", "--max-regression", "0.1",
            "--min-pass-rate", "0", cwd=tmp_path, env=_env(), timeout=120,
        )  # fmt: skip
        tests = _compare(tmp_path)

    assert head.returncode == 0, head.stdout + head.stderr
    # the temperature is also in the definition fingerprint: `changed`, with the reason in its detail
    assert tests["france"]["status"] == "changed"
    assert tests["france"]["why_incomparable"] == ["target temperature 0 -> 0.7"]
    assert "changed definition since the baseline, not compared" in head.stdout


PLUGIN = """
from agentv_ci.api import pass_fail_result


class Shouts:
    api_version = "1.0"
    config_schema = {"type": "object"}

    def __init__(self, spec, config, *, base_dir):
        self.spec = spec

    async def grade(self, ctx):
        return pass_fail_result(self.spec, ctx.response.text.isupper() == STRICT, "shouting")
"""

PLUGIN_EVAL = """\
name: tone
execution:
  target: default
tests:
  - id: calm
    input: Say hello
    assertions:
      - {type: shouts}
"""


def test_a_grader_plugin_upgrade_is_incomparable(tmp_path: Path) -> None:
    (tmp_path / "evals" / ".agentv").mkdir(parents=True)
    (tmp_path / "evals" / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: mock\n    response: hello\n", encoding="utf-8"
    )
    (tmp_path / "evals" / "tone.eval.yaml").write_text(PLUGIN_EVAL, encoding="utf-8")
    entry = "[agentv_ci.graders]\nshouts = tone_grader:Shouts\n"
    old = install_distribution(
        tmp_path / "site-1", "tone-grader", "1.0", module="tone_grader",
        source="STRICT = False\n" + PLUGIN, entry_points=entry,
    )  # fmt: skip
    new = install_distribution(
        tmp_path / "site-2", "tone-grader", "2.0", module="tone_grader",
        source="STRICT = True\n" + PLUGIN, entry_points=entry,
    )  # fmt: skip

    base = run_with_site(["run", "evals", "-o", "base", "--no-cache"], old, tmp_path)
    assert base.returncode == 0, base.stdout + base.stderr
    head = run_with_site(
        ["run", "evals", "-o", "head", "--no-cache", "--baseline", "base", "--max-regression", "0.1",
         "--min-pass-rate", "0"],
        new, tmp_path,
    )  # fmt: skip
    done = run_with_site(["compare", "base", "head", "--format", "json"], new, tmp_path)

    assert head.returncode == 0, head.stdout + head.stderr
    [test] = json.loads(done.stdout)["tests"]
    assert test["status"] == "incomparable"
    assert test["why_incomparable"] == ["grader shouts tone-grader 1.0 -> tone-grader 2.0"]
