"""Plugin loading through real entry points: built-ins, third-party distributions, broken plugins.

The distributions are installed the way pip leaves them (tests/plugin_site.py) and every check runs
`agentv-ci` in a fresh subprocess. Messages are asserted exactly: they are what a user reads.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentv_ci import plugins
from agentv_ci.errors import ConfigError
from tests.cli_helpers import mock_project
from tests.plugin_site import install_fake_plugins, run_with_site

ORIGIN = "from fake-agentv-plugins 0.3"
BROKEN = {
    ("grader", "broken-import"): "ModuleNotFoundError: No module named 'fake_missing_module'",
    ("grader", "sync-grade"): "`grade` must be `async def grade(self, ctx)`",
    ("grader", "no-context"): "`grade` must be `async def grade(self, ctx)`, but it is `grade(self)`",
    (
        "grader",
        "wrong-init",
    ): "the constructor must accept (spec, config, *, base_dir), but it is WrongInit(spec)",
    ("grader", "future-api"): "it is written for plugin API 2.0, but agentv-ci 0.1.0 provides plugin API 1.1 "
    "(it loads plugins written for API 1.x up to 1.1)",
    ("grader", "unversioned"): 'it declares no plugin API version: add `api_version = "1.1"` '
    "(the agentv_ci.api version it is written for) to the class",
    ("grader", "bad-schema"): "`config_schema` is not a valid JSON Schema: 'integr' is not valid under any "
    "of the given schemas at `$.properties.n.type`",
    ("target", "grader-as-target"): "it is a grader (it has `grade`), not a target: "
    "register it under agentv_ci.graders",
    ("reporter", "async-write"): "`write` must be `def write(self, summary, options)` (not async)",
}
DUPLICATE = (
    "grader plugin name 'shout' is claimed by two distributions: fake-agentv-plugins 0.3 "
    "(entry point fake_plugins:Shout) and other-agentv-plugins 1.2 (entry point other_plugins:Shout)"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_fake_plugins(tmp_path_factory.mktemp("site"))


def test_every_builtin_plugin_loads_and_meets_its_contract(tmp_path: Path) -> None:
    proc = run_with_site(["plugins", "--json", "--check"], tmp_path, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["plugin_api"] == "1.1"
    builtins = {(p["kind"], p["name"]): p for p in report["plugins"] if p["builtin"]}
    for key in [
        ("grader", "contains"),
        ("grader", "llm-grader"),
        ("target", "openai"),
        ("reporter", "sarif"),
    ]:
        assert builtins[key]["error"] is None and builtins[key]["api_version"] == "1.1"
        assert builtins[key]["distribution"] == "agentv-ci" and builtins[key]["config"] != "json-schema"
    assert all(p["error"] is None for p in builtins.values())
    assert builtins[("reporter", "junit")]["config"] is None  # reporters take no config


def test_plugins_json_lists_every_plugin_with_its_origin_and_load_error(site: Path, tmp_path: Path) -> None:
    proc = run_with_site(["plugins", "--json"], site, tmp_path)
    assert proc.returncode == 0, proc.stderr  # listing is not checking
    rows = [p for p in json.loads(proc.stdout)["plugins"] if not p["builtin"]]
    third_party = [p for p in rows if p["distribution"] in ("fake-agentv-plugins", "other-agentv-plugins")]
    errors = {(p["kind"], p["name"]): p["error"] for p in third_party if p["name"] != "shout"}
    assert errors == {
        **BROKEN,
        ("grader", "limits"): None,
        ("grader", "pattern"): None,
        ("target", "echo-plugin"): None,
        ("target", "strict-model"): None,
    }
    good = {p["name"]: p for p in third_party if p["error"] is None}
    assert good["limits"] == {
        "kind": "grader",
        "name": "limits",
        "entry_point": "fake_plugins:Limits",
        "distribution": "fake-agentv-plugins",
        "version": "0.3",
        "builtin": False,
        "api_version": "1.0",
        "config": "msgspec",
        "error": None,
    }
    assert good["pattern"]["config"] == "json-schema" and good["strict-model"]["config"] == "json-schema"
    shouts = [p for p in third_party if p["name"] == "shout"]
    assert [(p["distribution"], p["error"]) for p in shouts] == [
        ("fake-agentv-plugins", DUPLICATE),
        ("other-agentv-plugins", DUPLICATE),
    ]


def test_plugins_check_exits_2_and_the_text_listing_says_why(site: Path, tmp_path: Path) -> None:
    proc = run_with_site(["plugins", "--check"], site, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "error: 11 broken plugin(s)\n"
    lines = proc.stdout.splitlines()
    limits = next(line for line in lines if line.lstrip().startswith("limits "))
    assert limits.split() == ["limits", "fake-agentv-plugins", "0.3", "api", "1.0", "fake_plugins:Limits"]
    at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("broken-import "))
    assert lines[at].split()[1:] == ["fake-agentv-plugins", "0.3", "BROKEN", "fake_missing_module:Grader"]
    assert lines[at + 1] == "      " + BROKEN[("grader", "broken-import")]
    listed = [line for line in lines if line.startswith("  ") and not line.startswith("   ")]
    assert lines[-1] == f"{len(listed)} plugin(s), 11 broken"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".agentv" / "targets.yaml").write_text(
        "targets:\n"
        "  - name: default\n    provider: mock\n    response: one two three\n"
        "  - name: echo\n    provider: echo-plugin\n    prefx: '>'\n    repeat: two\n"
        "  - name: strict\n    provider: strict-model\n    model: 5\n    temprature: 0.2\n"
        "  - name: typo\n    provider: mok\n"
        "  - name: wrong\n    provider: grader-as-target\n"
        "  - name: bare\n    provider: strict-model\n"
    )
    (project / "main.eval.yaml").write_text(
        "name: plugins\n"
        "execution:\n  targets: [default, echo, strict, typo, wrong, bare]\n"
        "tests:\n"
        "  - id: t1\n    input: hi\n    assertions:\n"
        "      - type: pattern\n        patern: x\n        min_count: 0\n"
        "      - type: limits\n        max_word: 3\n"
        "  - id: t2\n    input: hi\n    assertions:\n"
        "      - type: limits\n        max_words: many\n"
        "      - type: broken-import\n"
        "  - id: t3\n    input: hi\n    assertions:\n"
        "      - type: broken-import\n"
        "      - type: future-api\n        max_words: 1\n"
        "      - type: shout\n        max_words: 1\n"
    )
    return project


def test_validate_locates_plugin_config_problems_of_graders_and_targets(site: Path, tmp_path: Path) -> None:
    project = _project(tmp_path)
    proc = run_with_site(["validate", "."], site, project)
    assert proc.returncode == 2
    hint = "  hint: `agentv-ci plugins --check` lists every broken plugin"
    assert proc.stdout.splitlines() == [
        ".agentv/targets.yaml:7:5: warning[W108]: unknown key `prefx` for target provider `echo-plugin`",
        "  hint: did you mean `prefix`?",
        ".agentv/targets.yaml:8:5: error[E206]: invalid target 'echo' (echo-plugin): "
        "Expected `int`, got `str` - at `$.repeat`",
        ".agentv/targets.yaml:11:5: error[E206]: invalid target 'strict' (strict-model): "
        "5 is not of type 'string' - at `$.model`",
        ".agentv/targets.yaml:12:5: error[E206]: unknown key `temprature` for target provider `strict-model`",
        "  hint: did you mean `temperature`?",
        ".agentv/targets.yaml:14:5: error[E205]: target 'typo': unknown provider 'mok'",
        "  hint: did you mean `mock`?",
        f".agentv/targets.yaml:16:5: error[E203]: target plugin 'grader-as-target' {ORIGIN} "
        f"(entry point fake_plugins:Limits) failed to load: {BROKEN[('target', 'grader-as-target')]}",
        hint,
        ".agentv/targets.yaml:17:5: error[E206]: invalid target 'bare' (strict-model): "
        "'model' is a required property",
        "main.eval.yaml:8:9: error[E202]: invalid pattern grader 'pattern': 'pattern' is a required property",
        "  hint: `patern` on line 9 looks like a misspelling of `pattern`",
        "main.eval.yaml:9:9: error[E202]: unknown key `patern` for grader type `pattern`",
        "  hint: did you mean `pattern`?",
        "main.eval.yaml:10:20: error[E202]: invalid pattern grader 'pattern': "
        "0 is less than the minimum of 1 - at `$.min_count`",
        "main.eval.yaml:11:9: error[E202]: invalid limits grader 'limits': "
        "Object missing required field `max_words`",
        "  hint: `max_word` on line 12 looks like a misspelling of `max_words`",
        "main.eval.yaml:12:9: warning[W105]: unknown key `max_word` for grader type `limits`",
        "  hint: did you mean `max_words`?",
        "main.eval.yaml:17:20: error[E202]: invalid limits grader 'limits': "
        "Expected `int`, got `str` - at `$.max_words`",
        f"main.eval.yaml:18:15: error[E203]: grader plugin 'broken-import' {ORIGIN} "
        f"(entry point fake_missing_module:Grader) failed to load: {BROKEN[('grader', 'broken-import')]}",
        f"{hint}; also used at line 22",
        f"main.eval.yaml:23:15: error[E203]: grader plugin 'future-api' {ORIGIN} "
        f"(entry point fake_plugins:FutureApi) failed to load: {BROKEN[('grader', 'future-api')]}",
        hint,
        f"main.eval.yaml:25:15: error[E203]: {DUPLICATE}",
        "  hint: uninstall all but one of them: a name in agentv_ci.graders must come from one distribution",
        "1 file(s), 3 test(s): 14 error(s), 2 warning(s)",
    ]
    strict = run_with_site(["validate", ".", "--strict", "--format", "json"], site, project)
    codes = [d["code"] for d in json.loads(strict.stdout)["diagnostics"] if d["severity"] == "error"]
    assert codes.count("W108") == 1 and codes.count("W105") == 1  # unknown keys are errors under --strict


def test_a_broken_plugin_is_reported_once_and_only_stops_runs_that_use_it(site: Path, tmp_path: Path) -> None:
    evals = tmp_path / "uses-broken"
    evals.mkdir()
    (evals / "bad.eval.yaml").write_text(
        "name: bad\ntests:\n"
        + "".join(
            f"  - id: t{i}\n    input: hi\n    assertions:\n      - type: broken-import\n" for i in range(3)
        )
    )
    proc = run_with_site(["run", str(evals), "-o", str(tmp_path / "bad-out")], site, tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.count("No module named 'fake_missing_module'") == 1
    assert "also used at line 10, line 14" in proc.stderr

    good = mock_project(
        tmp_path / "good",
        response="one two three",
        eval_file="good.eval.yaml",
        eval_yaml="name: good\ntests:\n"
        "  - id: short\n    input: hi\n    assertions:\n      - {type: limits, max_words: 5}\n"
        "  - id: long\n    input: hi\n    assertions:\n      - {type: limits, max_words: 2}\n"
        "  - id: pattern\n    input: hi\n    assertions:\n      - {type: pattern, pattern: two}\n"
        "  - id: echoed\n    input: hi\n    execution: {target: echo}\n"
        "    assertions:\n      - {type: equals, value: '> hihi'}\n",
    )
    with (good / ".agentv" / "targets.yaml").open("a") as targets:
        targets.write("  - name: echo\n    provider: echo-plugin\n    prefix: '> '\n    repeat: 2\n")
    out = tmp_path / "good-out"
    proc = run_with_site(["run", str(good), "-o", str(out), "--no-fail"], site, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {r["test_id"]: r for r in map(json.loads, (out / "index.jsonl").read_text().splitlines())}
    assert {k: r["score"] for k, r in rows.items()} == {
        "short": 1.0,
        "long": 0.0,
        "pattern": 1.0,
        "echoed": 1.0,
    }
    assert rows["short"]["scores"][0]["type"] == "limits"


def test_an_unknown_report_format_stops_the_run_before_it_starts(site: Path, tmp_path: Path) -> None:
    evals = mock_project(
        tmp_path / "evals",
        response="ok",
        eval_file="e.eval.yaml",
        eval_yaml="tests:\n  - id: t\n    input: hi\n    assertions: [{type: contains, value: ok}]\n",
    )
    out = tmp_path / "out"
    proc = run_with_site(["run", str(evals), "-o", str(out), "--report", "htlm=r.html"], site, tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith(
        "error: no reporter named 'htlm' is installed\n"
        "  hint: did you mean `html`? installed reporters: async-write,"
    )
    assert not (out / "index.jsonl").exists()
    broken = run_with_site(
        ["run", str(evals), "-o", str(out), "--report", "async-write=r.txt"], site, tmp_path
    )
    assert broken.returncode == 2 and not (out / "index.jsonl").exists()
    assert f"reporter plugin 'async-write' {ORIGIN}" in broken.stderr


def test_register_for_tests_checks_the_contract() -> None:
    class NoConfig:
        api_version = "1.0"

        async def grade(self, ctx: object) -> None:
            return None

    with pytest.raises(ConfigError) as caught:
        plugins.register_for_tests(plugins.GRADERS_NAMESPACE, "no-config", NoConfig)
    assert caught.value.message == (
        "grader plugin 'no-config' breaks the plugin contract: it declares no config: "
        "add `Config` (a msgspec.Struct) or `config_schema` (a JSON Schema)"
    )
