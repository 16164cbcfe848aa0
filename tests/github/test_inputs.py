"""The Action's inputs: parsed from INPUT_*, checked like flags, and the same set as action.yml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from agentv_ci.errors import UsageError
from agentv_ci.github.inputs import INPUTS, read_inputs

ACTION_YML = Path(__file__).resolve().parents[2] / "action.yml"


def test_defaults_without_any_input() -> None:
    inputs = read_inputs({})
    assert inputs.paths == ["."]
    assert inputs.changed_only is True
    assert inputs.comment is True
    assert inputs.dry_run is False
    assert inputs.threshold is None
    assert inputs.output_dir == ".agentv-ci/results"
    # The `${{ github.token }}` default is the runner's business: outside a runner there is no token.
    assert inputs.github_token is None


def test_values_are_parsed_without_a_shell() -> None:
    inputs = read_inputs(
        {
            "INPUT_PATHS": "evals/a.eval.yaml\n'evals/with space/b.eval.yaml' $(rm -rf /)",
            "INPUT_THRESHOLD": "0.75",
            "INPUT_DRY_RUN": "True",
            "INPUT_REPEAT": "3",
            "INPUT_TARGET": "gpt claude",
            "INPUT_BUDGET_USD": "2.5",
            "INPUT_SHARD": "2/4",
            "INPUT_PR_NUMBER": "17",
        }
    )
    assert inputs.paths == ["evals/a.eval.yaml", "evals/with space/b.eval.yaml", "$(rm", "-rf", "/)"]
    assert inputs.threshold == 0.75
    assert inputs.dry_run is True
    assert inputs.repeat == 3
    assert inputs.target == ["gpt", "claude"]
    assert inputs.budget_usd == 2.5
    assert inputs.shard == "2/4"
    assert inputs.pr_number == 17


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("THRESHOLD", "high", "input `threshold` must be a number between 0 and 1, got 'high'"),
        ("MIN_PASS_RATE", "80", "input `min_pass_rate` must be a number between 0 and 1, got '80'"),
        ("THRESHOLD", "nan", "input `threshold` must be a number between 0 and 1, got 'nan'"),
        ("DRY_RUN", "maybe", "input `dry_run` must be true or false, got 'maybe'"),
        ("REPEAT", "0", "input `repeat` must be a whole number of at least 1, got '0'"),
        ("WORKERS", "4.5", "input `workers` must be a whole number of at least 1, got '4.5'"),
        ("BUDGET_USD", "-1", "input `budget_usd` must be a number greater than 0, got '-1'"),
        ("SHARD", "2 of 4", "input `shard` must look like 1/4 (shard i of n), got '2 of 4'"),
        ("PR_NUMBER", "#12", "input `pr_number` must be a pull request number, got '#12'"),
        ("PATHS", "'unterminated", "input `paths`: cannot split"),
    ],
)
def test_typos_in_values_are_clear_errors(name: str, value: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        read_inputs({f"INPUT_{name}": value})
    assert caught.value.message.startswith(message)
    assert caught.value.exit_code == 2


def test_unknown_input_names_get_a_suggestion() -> None:
    with pytest.raises(UsageError) as caught:
        read_inputs({"INPUT_TRESHOLD": "0.8"})
    assert caught.value.message == "the action has no input `treshold`"
    assert caught.value.hint == "did you mean `threshold`?"
    # A hyphenated name reaches the container as INPUT_OUTPUT-DIR.
    with pytest.raises(UsageError) as caught:
        read_inputs({"INPUT_OUTPUT-DIR": "out"})
    assert caught.value.hint == "did you mean `output_dir`?"


def test_args_is_not_an_input() -> None:
    with pytest.raises(UsageError) as caught:
        read_inputs({"INPUT_ARGS": "--dry-run"})
    assert caught.value.hint is not None and "named inputs" in caught.value.hint


def test_action_yml_declares_exactly_these_inputs_with_these_defaults() -> None:
    action = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))
    declared = action["inputs"]
    assert list(declared) == list(INPUTS)
    for name, spec in INPUTS.items():
        assert str(declared[name]["default"]) == spec.default, name
        assert declared[name]["description"] == spec.description, name
        assert "-" not in name, "a hyphenated input becomes INPUT_X-Y, which no shell can read"
    assert "args" not in declared and "entrypoint" not in declared
    assert declared["github_token"]["default"] == "${{ github.token }}"


def test_action_yml_runs_the_entry_point_without_a_shell() -> None:
    action = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))
    runs = action["runs"]
    assert runs["using"] == "docker"
    assert runs["image"] == "Dockerfile"
    assert runs["entrypoint"] == "/usr/local/bin/agentv-ci-action"
    assert "args" not in runs
    assert "${{" not in yaml.safe_dump(runs)


def test_every_input_is_documented() -> None:
    docs = (ACTION_YML.parent / "docs" / "github.md").read_text(encoding="utf-8")
    for name in INPUTS:
        assert f"| `{name}` |" in docs, name


def test_action_yml_declares_every_output_the_action_writes() -> None:
    from agentv_ci.errors import ExitCode
    from agentv_ci.gating import GateDecision
    from agentv_ci.github.outputs import run_outputs
    from agentv_ci.model.result import RunSummary

    written = run_outputs(
        RunSummary(results=[]),
        GateDecision(passed=True, exit_code=ExitCode.OK),
        results_path="r",
        junit_path="j",
        sarif_path="s",
        comment_url="",
    )
    declared = yaml.safe_load(ACTION_YML.read_text(encoding="utf-8"))["outputs"]
    assert set(declared) == set(written)


def test_extra_packages_are_index_requirements() -> None:
    given = "my-graders==1.4.0 acme_reporter[html,pdf]>=2,<3\nplain.name~=1.0"
    parsed = read_inputs({"INPUT_EXTRA_PACKAGES": given}).extra_packages
    assert parsed == ["my-graders==1.4.0", "acme_reporter[html,pdf]>=2,<3", "plain.name~=1.0"]
    assert read_inputs({}).extra_packages == []


@pytest.mark.parametrize(
    "item",
    [
        "./plugins/mine",
        "/github/workspace/plugin",
        "https://evil.example/pkg.whl",
        "git+https://github.com/o/r",
        "pkg @ file:///tmp/x",
        "-r",
        "--index-url=https://evil.example/simple",
        "--pre",
        "pkg==1.0;python_version>'3'",
    ],
)
def test_extra_packages_refuse_paths_urls_and_pip_options(item: str) -> None:
    with pytest.raises(UsageError, match=r"input `extra_packages`: .* is not a package requirement"):
        read_inputs({"INPUT_EXTRA_PACKAGES": f"good==1.0 '{item}'"})
