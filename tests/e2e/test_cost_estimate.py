"""Cost before spending, end to end: `run --dry-run` prints the estimate per target and grader
target; a real run against a fake OpenAI-compatible server (127.0.0.1, reporting usage as its own
tokenizer counts it) lands inside the printed ranges; the real run as `--baseline` narrows them;
`--budget-usd` below the low end refuses to start (exit 2, nothing sent); `--max-cost-usd` below
the actual cost fails the run (exit 1); the Action prints the estimate before it runs and its PR
comment shows the estimate next to the actual cost."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agentv_ci.model.estimate_text import usd
from tests.cli_helpers import run_cli
from tests.e2e.scaffold import Project, run_action
from tests.fakes.github_server import FakeGitHub
from tests.fakes.llm_server import Call, FakeLlmServer, Reply

TARGETS = """\
targets:
  - name: bot
    provider: openai
    model: gpt-4o-mini
    base_url: ${{ FAKE_URL }}
    api_key: sk-test
    max_tokens: 300
    grader_target: judge
  - name: judge
    provider: openai
    model: gpt-4o
    base_url: ${{ FAKE_URL }}
    api_key: sk-test
"""
EVAL = """\
execution:
  target: bot
tests:
  - id: capital
    input: What is the capital of France? Answer in one sentence.
    expected_output: Paris is the capital of France.
    assertions:
      - type: contains
        value: Paris
      - type: llm-grader
        prompt: "Is this answer right? Answer: {{output}} Reference: {{expected_output}}"
  - id: sum
    input: What is 2 + 2? Show the arithmetic.
    expected_output: 2 + 2 = 4
    criteria: The answer is 4 and shows the sum.
  - id: greeting
    input: Say hello to Ada in French.
    assertions:
      - type: contains
        value: Bonjour
"""
ANSWERS = {
    "capital": "Paris is the capital of France, and has been for centuries.",
    "2 + 2": "2 + 2 = 4. Adding two and two gives four.",
    "hello": "Bonjour, Ada ! Je suis ravi de vous rencontrer.",
    "add of France": "Paris, I believe.",  # the Action project's math eval (tests/e2e/scaffold.py)
}
VERDICT = json.dumps({"score": 1, "assertions": [{"text": "the answer is right", "passed": True}]})
PRICES = {"gpt-4o-mini": (0.15, 0.60), "gpt-4o": (2.50, 10.00)}  # targets/pricing.py, USD per M tokens


def server_tokens(text: str) -> int:
    """The fake provider's own tokenizer (words and punctuation marks), not the estimator's."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def is_judge(call: Call) -> bool:
    """A grader model's request: the llm-grader's custom prompt, or the default template's."""
    text = call.last_user_text()
    return text.startswith("Is this answer right?") or "[[ ## answer ## ]]" in text


def answer(call: Call) -> Reply:
    messages = call.body["messages"]
    prompt_tokens = 3 + sum(4 + server_tokens(m.get("content") or "") for m in messages)
    if is_judge(call):
        text = VERDICT
    else:
        question = call.last_user_text()
        text = next((a for key, a in ANSWERS.items() if key in question), "I do not know.")
    return Reply(text=text, usage=(prompt_tokens, server_tokens(text)))


@dataclass(frozen=True)
class Printed:
    requests: tuple[int, int]
    input_tokens: tuple[int, int]
    output_tokens: tuple[int, int]
    cost: tuple[float, float]

    def holds(self, requests: int, input_tokens: int, output_tokens: int, cost: float) -> bool:
        return (
            self.requests[0] <= requests <= self.requests[1]
            and self.input_tokens[0] <= input_tokens <= self.input_tokens[1]
            and self.output_tokens[0] <= output_tokens <= self.output_tokens[1]
            and self.cost[0] <= cost <= self.cost[1]
        )


LINE = re.compile(
    r"^  (?P<role>target|grader target) (?P<name>\S+) \((?P<model>[^)]*)\): "
    r"(?P<r0>[\d,]+)(?:-(?P<r1>[\d,]+))? request\(s\)(?: \(\+[^\n]*? free\))?, "
    r"input tokens (?P<i0>[\d,]+)-(?P<i1>[\d,]+) \(~[\d,]+\), "
    r"output tokens (?P<o0>[\d,]+)-(?P<o1>[\d,]+) \(~[\d,]+\), "
    r"cost \$(?P<c0>[\d.]+)-\$(?P<c1>[\d.]+) ",
    re.M,
)
TOTAL = re.compile(r"^  total: \$(?P<c0>[\d.]+)-\$(?P<c1>[\d.]+) \(expected ~\$[\d.]+\)$", re.M)


def printed_estimate(stdout: str) -> tuple[dict[str, Printed], tuple[float, float]]:
    def number(text: str | None) -> int:
        return int((text or "0").replace(",", ""))

    lines = {}
    for m in LINE.finditer(stdout):
        requests = (number(m["r0"]), number(m["r1"] or m["r0"]))
        lines[f"{m['role']} {m['name']}"] = Printed(
            requests,
            (number(m["i0"]), number(m["i1"])),
            (number(m["o0"]), number(m["o1"])),
            (float(m["c0"]), float(m["c1"])),
        )
    total = TOTAL.search(stdout)
    assert total is not None, stdout
    return lines, (float(total["c0"]), float(total["c1"]))


@dataclass
class Actual:
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def cost(self, model: str) -> float:
        rate_in, rate_out = PRICES[model]
        return (self.input_tokens * rate_in + self.output_tokens * rate_out) / 1_000_000


def actual_usage(run_dir: Path, server: FakeLlmServer) -> dict[str, Actual]:
    """What the real run recorded (index.jsonl rows and their judges' usage), and the requests the
    server received per model."""
    target, judge = Actual(), Actual()
    for line in (run_dir / "index.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for attempt in row.get("trials") or [row]:
            usage = attempt.get("token_usage") or {}
            target.input_tokens += usage.get("input", 0)
            target.output_tokens += usage.get("output", 0)
            for grader in attempt.get("scores", []):
                if grader["type"] == "llm-grader":
                    judge.input_tokens += grader["token_usage"]["input"]
                    judge.output_tokens += grader["token_usage"]["output"]
    judge.requests = sum(1 for c in server.calls if is_judge(c))
    target.requests = len(server.calls) - judge.requests
    return {"target bot": target, "grader target judge": judge}


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer(answer) as fake:
        yield fake


@pytest.fixture
def project(tmp_path: Path, server: FakeLlmServer) -> tuple[Path, dict[str, str]]:
    import os

    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(TARGETS, encoding="utf-8")
    (tmp_path / "qa.eval.yaml").write_text(EVAL, encoding="utf-8")
    env = {**os.environ, "FAKE_URL": server.base_url}
    env.pop("OPENAI_API_KEY", None)
    return tmp_path, env


def test_the_dry_run_estimate_holds_the_real_run_and_the_baseline_narrows_it(
    project: tuple[Path, dict[str, str]], server: FakeLlmServer
) -> None:
    root, env = project

    dry = run_cli("run", ".", "--dry-run", "--repeat", "2", "-o", "dry", cwd=root, env=env, timeout=120)

    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert server.calls == []  # a dry run sends nothing
    lines, total = printed_estimate(dry.stdout)
    assert set(lines) == {"target bot", "grader target judge"}, dry.stdout
    # 3 tests x up to 2 attempts (pass_at_k may stop at the first pass); 2 of them have a judge
    assert lines["target bot"].requests == (3, 6)
    assert lines["grader target judge"].requests == (2, 4)
    recorded = json.loads((root / "dry" / "summary.json").read_text())["estimate"]
    # the printed ends are rounded outwards from summary.json's
    assert total[0] <= recorded["cost_usd"]["low"] < total[0] + 1e-4
    assert total[1] - 1e-4 < recorded["cost_usd"]["high"] <= total[1]

    real = run_cli("run", ".", "--repeat", "2", "-o", "real", cwd=root, env=env, timeout=120)

    assert real.returncode == 0, real.stdout + real.stderr
    assert "estimated cost: $" in real.stderr  # told before anything was spent
    actual = actual_usage(root / "real", server)
    assert actual["target bot"].requests == 3 and actual["grader target judge"].requests == 2
    for name, model in (("target bot", "gpt-4o-mini"), ("grader target judge", "gpt-4o")):
        used = actual[name]
        assert lines[name].holds(used.requests, used.input_tokens, used.output_tokens, used.cost(model)), (
            name,
            used,
            lines[name],
        )
    summary = json.loads((root / "real" / "summary.json").read_text())
    spent = summary["spent_usd"]
    assert spent == pytest.approx(
        actual["target bot"].cost("gpt-4o-mini") + actual["grader target judge"].cost("gpt-4o"), abs=1e-6
    )  # targets and grader models, to the micro-dollar
    assert total[0] <= spent <= total[1]
    assert summary["estimate"]["cost_usd"] == recorded["cost_usd"]  # the same estimate, made again
    assert f"Cost: {usd(spent)} spent (estimated before the run: {usd(total[0])}-" in real.stdout

    sent = len(server.calls)
    again = run_cli(
        "run",
        ".",
        "--dry-run",
        "--repeat",
        "2",
        "--baseline",
        "real",
        "-o",
        "dry2",
        cwd=root,
        env=env,
        timeout=120,
    )

    assert again.returncode == 0, again.stdout + again.stderr
    assert len(server.calls) == sent
    assert "output tokens from the baseline's recorded usage" in again.stdout
    narrower, narrower_total = printed_estimate(again.stdout)
    for name, model in (("target bot", "gpt-4o-mini"), ("grader target judge", "gpt-4o")):
        before, after = lines[name].output_tokens, narrower[name].output_tokens
        assert after[1] - after[0] < (before[1] - before[0]) / 4, (name, before, after)
        used = actual[name]
        assert narrower[name].holds(used.requests, used.input_tokens, used.output_tokens, used.cost(model))
    assert narrower_total[1] - narrower_total[0] < (total[1] - total[0]) / 2
    assert narrower_total[0] <= spent <= narrower_total[1]
    # with the usage recorded, the expected value is close (docs/running.md gives the figures)
    expected = json.loads((root / "dry2" / "summary.json").read_text())["estimate"]["cost_usd"]["expected"]
    assert expected == pytest.approx(spent, rel=0.25)


def test_a_budget_below_the_estimate_refuses_to_start_and_sends_nothing(
    project: tuple[Path, dict[str, str]], server: FakeLlmServer
) -> None:
    root, env = project
    dry = run_cli("run", ".", "--dry-run", "-o", "dry", cwd=root, env=env, timeout=120)
    _, (low, _) = printed_estimate(dry.stdout)
    budget = low / 2
    (root / "out").mkdir()
    (root / "out" / "index.jsonl").write_text('{"earlier": "results"}\n', encoding="utf-8")

    refused = run_cli(
        "run", ".", "--budget-usd", f"{budget:.8f}", "-o", "out", cwd=root, env=env, timeout=120
    )

    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert server.calls == []
    # one sentence (before: "...: even its low end, $X, is (estimate ...); nothing was run")
    money = r"\$[0-9.]+"
    assert re.search(
        rf"nothing was run: even the low end of the estimated cost, {re.escape(usd(low, 'up'))}, is over "
        rf"the budget of {money} \(estimate {money}-{money}, expected ~{money}; target bot \(gpt-4o-mini\) "
        rf"{money}-{money}; grader target judge \(gpt-4o\) {money}-{money}\)",
        " ".join(refused.stderr.split()),
    ), refused.stderr
    assert "Traceback" not in refused.stderr
    # refused before anything was written: the results already in the directory are left as they were
    assert (root / "out" / "index.jsonl").read_text(encoding="utf-8") == '{"earlier": "results"}\n'
    assert not (root / "out" / "plan.jsonl").exists()


def test_max_cost_usd_fails_a_run_that_cost_more(
    project: tuple[Path, dict[str, str]], server: FakeLlmServer
) -> None:
    root, env = project

    over = run_cli("run", ".", "--max-cost-usd", "0.0000001", "-o", "out", cwd=root, env=env, timeout=120)

    assert over.returncode == 1, over.stdout + over.stderr
    spent = json.loads((root / "out" / "summary.json").read_text())["spent_usd"]
    assert spent > 0 and len(server.calls) == 5
    assert f"cost {usd(spent)} > max cost $0.000000" in over.stdout
    # the same gate from the results, with a limit the run stayed under, passes
    under = run_cli("report", "out", "--max-cost-usd", "1", cwd=root, env=env, timeout=120)
    assert under.returncode == 0, under.stdout + under.stderr
    bad = run_cli("report", "out", "--max-cost-usd", "-1", cwd=root, env=env, timeout=120)
    assert bad.returncode == 2 and "--max-cost-usd must be an amount greater than 0" in bad.stderr


def test_the_action_prints_the_estimate_and_comments_it_next_to_the_actual_cost(
    tmp_path: Path, server: FakeLlmServer, github_server: FakeGitHub
) -> None:
    project = Project(tmp_path)
    project.commit({".agentv/targets.yaml": TARGETS, "evals/geo.eval.yaml": EVAL}, "a model target")
    env = project.env(github_server, project.event(), max_cost_usd="0.0000001", target="bot")
    env["FAKE_URL"] = server.base_url
    env.pop("OPENAI_API_KEY", None)

    done = run_action(env, project.root)

    assert done.returncode == 1, done.stdout + done.stderr
    estimate_at = done.stdout.index("cost estimate (before anything is spent):")
    assert "  target bot (gpt-4o-mini): 4 request(s)" in done.stdout  # geo's 3 tests and math's one
    assert estimate_at < done.stdout.index("RESULT:")
    summary = json.loads((project.repo / ".agentv-ci" / "results" / "summary.json").read_text())
    spent, estimate = summary["spent_usd"], summary["estimate"]["cost_usd"]
    assert estimate["low"] <= spent <= estimate["high"]
    [comment] = github_server.comments_on(7)
    low = usd(estimate["low"], "down")
    assert f"Cost: {usd(spent)} spent (estimated before the run: {low}-" in comment.body
    # the only gate that failed: the cost
    assert (
        f"agentv-ci: FAILED: 4/4 tests passed, mean score 1.000 - cost {usd(spent)} &gt; max cost $0.000000"
        in (comment.body)
    ), comment.body


def test_answers_in_the_response_cache_are_estimated_free_and_a_budget_counts_them_so(
    project: tuple[Path, dict[str, str]], server: FakeLlmServer
) -> None:
    """A second run reads the target's answers back from the cache: the estimate says so (no
    request, no cost for them, their recorded size in the judge's input), and a budget the first
    run's estimate was over no longer refuses the run."""
    root, env = project
    # here the target costs more than its judge: its answers are most of the low end
    swapped = TARGETS.replace("model: gpt-4o-mini", "model: MINI").replace(
        "model: gpt-4o\n", "model: gpt-4o-mini\n"
    )
    (root / ".agentv" / "targets.yaml").write_text(swapped.replace("MINI", "gpt-4o"), encoding="utf-8")
    cache = ["--cache", "--cache-dir", str(root / "cache")]
    cold = run_cli("run", ".", "--dry-run", *cache, "-o", "dry", cwd=root, env=env, timeout=120)
    _, (cold_low, _) = printed_estimate(cold.stdout)
    first = run_cli("run", ".", *cache, "-o", "first", cwd=root, env=env, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    assert len(server.calls) == 5  # 3 answers, 2 judge replies
    # This test is about the target's answers: the judges' replies (cached too) are dropped, so the
    # second run asks the judges again, as the estimate, which does not look up judge replies, says.
    judged = [p for p in (root / "cache").rglob("*.json") if "the answer is right" in p.read_text()]
    assert len(judged) == 2
    for entry in judged:
        entry.unlink()

    warm = run_cli("run", ".", "--dry-run", *cache, "-o", "dry2", cwd=root, env=env, timeout=120)

    assert "  target bot (gpt-4o): 0 request(s) (+3 answer(s) from the response cache, free)" in (
        warm.stdout
    ), warm.stdout
    assert "output tokens from the response cache's entries" in warm.stdout
    lines, (warm_low, warm_high) = printed_estimate(warm.stdout)
    assert lines["target bot"].cost == (0.0, 0.0)
    assert warm_low < cold_low
    budget = (warm_low + cold_low) / 2  # the cold estimate is over it, the warm one is not

    second = run_cli(
        "run", ".", *cache, "--budget-usd", f"{budget:.8f}", "-o", "second", cwd=root, env=env, timeout=120
    )

    assert second.returncode == 0, second.stdout + second.stderr
    assert [is_judge(c) for c in server.calls[5:]] == [True, True]  # only the judges were asked
    judge = actual_usage(root / "second", server)["grader target judge"]
    assert lines["grader target judge"].holds(
        2, judge.input_tokens, judge.output_tokens, judge.cost("gpt-4o-mini")
    )
    spent = json.loads((root / "second" / "summary.json").read_text())["spent_usd"]
    assert warm_low <= spent <= warm_high


@pytest.mark.slow
def test_the_actual_cost_adds_up_over_resume_and_merge_and_a_killed_run_is_not_a_floor_that_passes(
    project: tuple[Path, dict[str, str]], server: FakeLlmServer
) -> None:
    root, env = project
    whole = run_cli("run", ".", "-o", "whole", cwd=root, env=env, timeout=120)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    total = json.loads((root / "whole" / "summary.json").read_text())["spent_usd"]

    # --resume: what the first part paid is carried over
    run_cli("run", ".", "-o", "resumed", "--test-id", "capital", cwd=root, env=env, timeout=120)
    rest = run_cli(
        "run", ".", "-o", "resumed", "--resume", "--max-cost-usd", "1", cwd=root, env=env, timeout=120
    )
    assert rest.returncode == 0, rest.stdout + rest.stderr
    resumed = json.loads((root / "resumed" / "summary.json").read_text())
    assert resumed["spent_usd"] == pytest.approx(total, abs=2e-6) and resumed.get("unpriced", 0) == 0

    # a run killed before its summary.json: what it paid is unknown, so the gate cannot pass
    run_cli("run", ".", "-o", "killed", "--test-id", "capital", cwd=root, env=env, timeout=120)
    (root / "killed" / "summary.json").unlink()
    after = run_cli(
        "run", ".", "-o", "killed", "--resume", "--max-cost-usd", "1", cwd=root, env=env, timeout=120
    )
    assert after.returncode == 3, after.stdout + after.stderr
    assert "max cost $1.00 not checked: 1 answer(s) came with no price" in after.stdout

    # shards merged: their spends and estimates add up
    for shard in ("1/2", "2/2"):
        done = run_cli("run", ".", "--shard", shard, "-o", f"shard{shard[0]}", cwd=root, env=env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    shards = [json.loads((root / f"shard{i}" / "summary.json").read_text()) for i in (1, 2)]
    merged = run_cli("merge", "shard1", "shard2", "-o", "merged", cwd=root, env=env, timeout=120)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    summary = json.loads((root / "merged" / "summary.json").read_text())
    assert summary["spent_usd"] == pytest.approx(total, abs=2e-6)
    low = sum(s["estimate"]["cost_usd"]["low"] for s in shards if "estimate" in s)
    assert summary["estimate"]["cost_usd"]["low"] == pytest.approx(low)
    over = run_cli("report", "merged", "--max-cost-usd", f"{total / 2:.8f}", cwd=root, env=env, timeout=120)
    assert over.returncode == 1 and "> max cost" in over.stdout, over.stdout


def test_the_action_estimate_reads_a_baseline_path_s_recorded_usage(
    tmp_path: Path, server: FakeLlmServer, github_server: FakeGitHub
) -> None:
    import shutil

    project = Project(tmp_path)
    project.commit({".agentv/targets.yaml": TARGETS, "evals/geo.eval.yaml": EVAL}, "a model target")
    env = project.env(github_server, project.event(), target="bot")
    env["FAKE_URL"] = server.base_url
    first = run_action(env, project.root)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "output tokens from max_tokens and defaults" in first.stdout
    shutil.copytree(project.repo / ".agentv-ci" / "results", tmp_path / "previous")

    again = run_action({**env, "INPUT_BASELINE": str(tmp_path / "previous")}, project.root)

    assert again.returncode == 0, again.stdout + again.stderr
    assert "output tokens from the baseline's recorded usage, else max_tokens and defaults" in again.stdout
