"""Every number setting of an eval file or targets.yaml is finite and in its documented range, or a
located error (exit 2) in `validate` and in `run`, never an internal error (exit 4) or a run that
goes on with it (issue 26, items 8 and 9): `pricing: .nan` made `run` exit 4 and a negative price
a negative spend; a docker workspace's `timeout: .inf` or `memory: .nan` exit 4 in both commands;
`max_rpm: 1e-9` passed `validate` and the run never finished. Each case runs the real CLI in a
subprocess against a fake model API on 127.0.0.1, which must receive nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.fakes.llm_server import FakeLlmServer

# The hostile values, as YAML writes them.
VALUES = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf", "negative": "-1", "absurd": "1e300"}

TEST = "tests:\n  - id: t1\n    input: hi\n    assertions:\n      - {type: contains, value: ok}\n"
API = "    provider: openai\n    base_url: {url}\n    api_key: sk-x\n    model: m\n"
MOCK = "    provider: mock\n    response: ok\n"

# setting -> (targets.yaml lines after `name: default` and the provider's own keys, line:col, code)
TARGET_SETTINGS: dict[str, tuple[str, str, str]] = {
    "pricing.input_per_mtok": (
        API + "    pricing:\n      input_per_mtok: {v}\n      output_per_mtok: 1\n",
        "8:7",
        "E206",
    ),
    "pricing.output_per_mtok": (
        API + "    pricing:\n      input_per_mtok: 1\n      output_per_mtok: {v}\n",
        "9:7",
        "E206",
    ),
    "pricing.cached_input_per_mtok": (
        API + "    pricing:\n      input_per_mtok: 1\n      output_per_mtok: 1\n"
        "      cached_input_per_mtok: {v}\n",
        "10:7",
        "E206",
    ),
    "max_rpm": (API + "    max_rpm: {v}\n", "7:5", "E206"),
    "max_tpm": (API + "    max_tpm: {v}\n", "7:5", "E206"),
    "max_concurrency": (API + "    max_concurrency: {v}\n", "7:5", "E206"),
    "temperature": (API + "    temperature: {v}\n", "7:5", "E206"),
    "mock delay_ms": (MOCK + "    delay_ms: {v}\n", "5:5", "E206"),
    "mock cost_usd": (MOCK + "    cost_usd: {v}\n", "5:5", "E206"),
}

# setting -> (eval file, line:col of the value, code)
EVAL_SETTINGS: dict[str, tuple[str, str, str]] = {
    "budget_usd": ("execution:\n  budget_usd: {v}\n" + TEST, "2:15", "E110"),
    "repeat.cost_limit_usd": (
        "execution:\n  repeat:\n    count: 2\n    cost_limit_usd: {v}\n" + TEST,
        "4:21",
        "E110",
    ),
    "threshold": ("execution:\n  threshold: {v}\n" + TEST, "2:14", "E108"),
    "timeout_seconds": ("execution:\n  timeout_seconds: {v}\n" + TEST, "2:20", "E109"),
    "grader weight": (TEST + "      - {type: contains, value: o, weight: {v}}\n", "6:44", "E107"),
    "grader min_score": (TEST + "      - {type: contains, value: o, min_score: {v}}\n", "6:47", "E108"),
    "grader required": (TEST + "      - {type: contains, value: o, required: {v}}\n", "6:46", "E108"),
    "latency threshold": (TEST + "      - {type: latency, threshold: {v}}\n", "6:36", "E202"),
    "cost budget": (TEST + "      - {type: cost, budget: {v}}\n", "6:30", "E202"),
    "execution-metrics max_cost_usd": (
        TEST + "      - {type: execution-metrics, max_cost_usd: {v}}\n",
        "6:49",
        "E202",
    ),
    "execution-metrics max_duration_ms": (
        TEST + "      - {type: execution-metrics, max_duration_ms: {v}}\n",
        "6:52",
        "E202",
    ),
    "execution-metrics exploration_tolerance": (
        TEST
        + "      - {type: execution-metrics, target_exploration_ratio: 0.5, exploration_tolerance: {v}}\n",
        "6:89",
        "E202",
    ),
    "llm-grader temperature": (
        TEST + "      - {type: llm-grader, prompt: 'grade {{output}}', temperature: {v}}\n",
        "6:69",
        "E202",
    ),
    "docker timeout": (
        "workspace:\n  docker:\n    image: python:3\n    timeout: {v}\n" + TEST,
        "4:14",
        "E110",
    ),
    "docker memory": ("workspace:\n  docker:\n    image: python:3\n    memory: {v}\n" + TEST, "4:13", "E110"),
    "docker cpus": ("workspace:\n  docker:\n    image: python:3\n    cpus: {v}\n" + TEST, "4:11", "E110"),
    "hook timeout_ms": (
        "workspace:\n  hooks:\n    before_all:\n      command: [echo, hi]\n      timeout_ms: {v}\n" + TEST,
        "5:19",
        "E110",
    ),
}


def _project(root: Path, targets: str, eval_text: str) -> Path:
    evals = root / "evals"
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n" + targets)
    (evals / "a.eval.yaml").write_text(eval_text)
    return evals


def _run_refused_at(root: Path, evals: Path, file: str, where: str, code: str) -> None:
    """`run` exits 2 with `file:line:col: error` (no traceback): an eval file's with its code, as
    `validate` prints it, a targets.yaml problem as it stops (no code)."""
    refused = run_cli("run", str(evals), "-o", str(root / "out"), cwd=root, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    output = refused.stdout + refused.stderr
    coded = re.compile(rf"{re.escape(file)}:{where}: error\[{code}\]: ")
    assert coded.search(output) or re.search(rf"{re.escape(file)}:{where}: error: ", output), output
    assert "Traceback" not in output


def _refused_at(root: Path, evals: Path, file: str, where: str, code: str) -> None:
    """`validate` and `run` both exit 2 with `file:line:col: error[code]` (no traceback)."""
    pattern = re.compile(rf"{re.escape(file)}:{where}: error\[{code}\]: ")
    checked = run_cli("validate", str(evals), cwd=root, timeout=60)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    assert pattern.search(checked.stdout), checked.stdout
    _run_refused_at(root, evals, file, where, code)


@pytest.mark.parametrize("value", list(VALUES))
def test_validate_refuses_each_target_setting_out_of_range_at_its_line(
    tmp_path: Path, llm_server: FakeLlmServer, value: str
) -> None:
    """One targets.yaml with a target per setting, each used by its own eval file: `validate` checks
    every target a suite uses and names each one's error at its line (one process, not nine)."""
    evals = tmp_path / "evals"
    (evals / ".agentv").mkdir(parents=True)
    lines = ["targets:"]
    expected: dict[str, re.Pattern[str]] = {}
    for index, (setting, (body, where, code)) in enumerate(TARGET_SETTINGS.items()):
        name = f"t{index}"
        first = len(lines) + 1  # the `- name:` line; `where` counts from line 2 of a one-target file
        lines.append(f"  - name: {name}")
        lines += body.replace("{url}", llm_server.base_url).replace("{v}", VALUES[value]).splitlines()
        line, column = where.split(":")
        expected[setting] = re.compile(rf"targets\.yaml:{first + int(line) - 2}:{column}: error\[{code}\]: ")
        (evals / f"{name}.eval.yaml").write_text(f"execution:\n  target: {name}\n" + TEST)
    (evals / ".agentv" / "targets.yaml").write_text("\n".join(lines) + "\n")
    checked = run_cli("validate", str(evals), cwd=tmp_path, timeout=60)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    for setting, pattern in expected.items():
        assert pattern.search(checked.stdout), (setting, checked.stdout)
    assert llm_server.calls == []


@pytest.mark.parametrize("value", list(VALUES))
@pytest.mark.parametrize("setting", list(TARGET_SETTINGS))
def test_a_target_setting_out_of_range_stops_the_run_at_its_line(
    tmp_path: Path, llm_server: FakeLlmServer, setting: str, value: str
) -> None:
    """`run` stops at the first bad target it meets, so each setting gets a run of its own."""
    lines, where, code = TARGET_SETTINGS[setting]
    targets = lines.replace("{url}", llm_server.base_url).replace("{v}", VALUES[value])
    evals = _project(tmp_path, targets, TEST)
    _run_refused_at(tmp_path, evals, "targets.yaml", where, code)
    assert llm_server.calls == []


@pytest.mark.parametrize("value", list(VALUES))
def test_an_eval_setting_out_of_range_is_refused_at_its_line(tmp_path: Path, value: str) -> None:
    """One eval file per setting, all in one project: `validate` and `run` each check every file and
    name each one's error at its line (one process each for the 17 settings, not 34)."""
    evals = tmp_path / "evals"
    (evals / ".agentv").mkdir(parents=True)
    (evals / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n" + MOCK)
    expected: dict[str, re.Pattern[str]] = {}
    for setting, (text, where, code) in EVAL_SETTINGS.items():
        file = re.sub(r"[^a-z_]", "_", setting) + ".eval.yaml"
        (evals / file).write_text(text.replace("{v}", VALUES[value]))
        expected[setting] = re.compile(rf"{re.escape(file)}:{where}: error\[{code}\]: ")
    checked = run_cli("validate", str(evals), cwd=tmp_path, timeout=60)
    assert checked.returncode == 2, checked.stdout + checked.stderr
    refused = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    output = refused.stdout + refused.stderr
    assert "Traceback" not in output
    for setting, pattern in expected.items():
        assert pattern.search(checked.stdout), (setting, checked.stdout)
        assert pattern.search(output), (setting, output)
    assert not (tmp_path / "out" / "index.jsonl").exists()  # nothing ran


@pytest.mark.parametrize(
    ("setting", "value"),
    [("max_rpm", "0.5"), ("max_tpm", "999"), ("max_concurrency", "0"), ("max_concurrency", "10001")],
)
def test_rates_below_their_minimum_are_refused(
    tmp_path: Path, llm_server: FakeLlmServer, setting: str, value: str
) -> None:
    """`max_rpm: 1e-9` meant one request every 1,900 years: rates have documented minimums."""
    evals = _project(tmp_path, API.replace("{url}", llm_server.base_url) + f"    {setting}: {value}\n", TEST)
    _refused_at(tmp_path, evals, "targets.yaml", "7:5", "E206")
    assert llm_server.calls == []


def test_settings_at_their_bounds_are_accepted(tmp_path: Path, llm_server: FakeLlmServer) -> None:
    """The documented ends of each range run: a price of 0 (a free model), max_rpm 1, max_tpm 1000."""
    llm_server.responder = lambda call: "ok"
    targets = API.replace("{url}", llm_server.base_url) + (
        "    max_rpm: 1\n    max_tpm: 1000\n    max_concurrency: 1\n    temperature: 0\n"
        "    pricing: {input_per_mtok: 0, output_per_mtok: 10000}\n"
    )
    eval_text = "execution:\n  budget_usd: 1000000\n" + TEST
    evals = _project(tmp_path, targets, eval_text)
    checked = run_cli("validate", str(evals), cwd=tmp_path, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = run_cli("run", str(evals), "-o", str(tmp_path / "out"), cwd=tmp_path, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert len(llm_server.calls) == 1
