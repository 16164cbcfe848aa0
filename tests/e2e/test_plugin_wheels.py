"""The plugin ecosystem as a user installs it: agentv-ci and the in-repo plugin packages built as
wheels and installed (not editable) into a fresh virtual environment (the `fresh_venv` fixture),
then listed, used end to end on the examples, and tested with their own test suites; a scaffolded
plugin is built, installed and used the same way."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentv_ci.plugins.versions import PLUGIN_API_VERSION  # what `plugins new` writes
from tests.conftest import REPO_ROOT
from tests.fresh_venv import FreshVenv

# (distribution, entry point, the plugin API it is written for): the html reporter reads the typed
# report options of API 1.1.
IN_REPO = {
    ("grader", "text-stats"): ("agentv-ci-text-stats-grader", "text_stats_grader:TextStatsGrader", "1.0"),
    ("grader", "json-schema"): ("agentv-ci-jsonschema", "agentv_ci_jsonschema:JsonSchemaGrader", "1.0"),
    ("reporter", "html"): ("agentv-ci-html-report", "agentv_ci_html_report:HtmlReporter", "1.1"),
}

# Each builds and installs wheels into a fresh virtualenv: `make test-fast` leaves them out.
pytestmark = pytest.mark.slow


def test_the_installed_packages_come_from_the_wheels_not_the_checkout(
    fresh_venv: FreshVenv, tmp_path: Path
) -> None:
    code = "import agentv_ci, agentv_ci_jsonschema, text_stats_grader; print(agentv_ci.__file__)"
    where = fresh_venv.run("python", "-c", code, cwd=tmp_path)
    assert where.returncode == 0, where.stderr
    assert where.stdout.startswith(str(fresh_venv.root)) and "site-packages" in where.stdout
    assert not list((fresh_venv.root / "lib").glob("python*/site-packages/__editable__*"))


def test_plugins_json_lists_the_in_repo_plugins_with_their_versions(
    fresh_venv: FreshVenv, tmp_path: Path
) -> None:
    proc = fresh_venv.run("agentv-ci", "plugins", "--json", "--check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    rows = {(p["kind"], p["name"]): p for p in report["plugins"]}
    for key, (distribution, entry_point, api_version) in IN_REPO.items():
        assert rows[key] | {"config": None} == {
            "kind": key[0],
            "name": key[1],
            "entry_point": entry_point,
            "distribution": distribution,
            "version": "0.1.0",
            "builtin": False,
            "api_version": api_version,
            "config": None,
            "error": None,
        }
    assert rows[("grader", "json-schema")]["config"] == "json-schema"
    assert rows[("grader", "text-stats")]["config"] == "msgspec"
    assert (
        rows[("grader", "contains")]["distribution"] == "agentv-ci"
        and rows[("grader", "contains")]["builtin"]
    )


def test_the_examples_run_end_to_end_with_the_installed_plugins(
    fresh_venv: FreshVenv, tmp_path: Path
) -> None:
    examples = tmp_path / "examples"
    shutil.copytree(REPO_ROOT / "examples", examples, ignore=shutil.ignore_patterns("workflows"))
    assert fresh_venv.run("agentv-ci", "validate", "examples", cwd=tmp_path).returncode == 0
    out = tmp_path / "out"
    proc = fresh_venv.run(
        "agentv-ci", "run", "examples", "-o", str(out), "--report", f"html={out / 'report.html'}", "-q",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr  # failing examples fail the gate
    rows = {
        (r["suite"], r["test_id"]): r for r in map(json.loads, (out / "index.jsonl").read_text().splitlines())
    }
    assert rows[("plugins", "profile-matches-schema")]["score"] == 1.0
    assert rows[("plugins", "profile-misses-fields")]["score"] == 0.6
    assert rows[("plugins", "short-answer")]["scores"][0]["type"] == "text-stats"
    page = (out / "report.html").read_text()
    assert "<title>agentv-ci report: 12/16 passed</title>" in page
    assert "$.died: &#x27;died&#x27; is a required property" in page


@pytest.mark.parametrize("plugin", ["text-stats-grader", "jsonschema-grader", "html-report"])
def test_each_plugin_passes_its_own_tests_against_its_wheel(
    fresh_venv: FreshVenv, tmp_path: Path, plugin: str
) -> None:
    # A copy without src/: the tests can only import the installed wheel.
    copy = tmp_path / plugin
    source = REPO_ROOT / "plugins" / plugin
    shutil.copytree(source / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(source / "pyproject.toml", copy / "pyproject.toml")
    proc = fresh_venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=copy)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and " failed" not in proc.stdout


def _build_and_install(fresh_venv: FreshVenv, package: Path, wheels: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(package),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    fresh_venv.install(package.name, find_links=[wheels])


def test_a_scaffolded_plugin_of_each_kind_passes_its_own_tests_and_plugs_in(
    fresh_venv_to_change: FreshVenv, tmp_path: Path
) -> None:
    fresh_venv = fresh_venv_to_change
    wheels = tmp_path / "wheels"
    for kind, name, tests_count in (
        ("grader", "word-floor", 4),
        ("target", "parrot", 4),
        ("reporter", "tsv", 3),
    ):
        created = fresh_venv.run("agentv-ci", "plugins", "new", kind, name, cwd=tmp_path)
        assert created.returncode == 0, created.stderr
        package = tmp_path / f"agentv-ci-{name}"
        assert created.stdout.splitlines()[0] == f"created {package.name}/ (5 files)"
        _build_and_install(fresh_venv, package, wheels)
        tests = fresh_venv.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=package)
        assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-3000:]
        assert f"{tests_count} passed" in tests.stdout
    listed = json.loads(fresh_venv.run("agentv-ci", "plugins", "--json", cwd=tmp_path).stdout)["plugins"]
    mine = {(p["kind"], p["name"]): (p["distribution"], p["api_version"], p["error"]) for p in listed}
    assert mine[("grader", "word-floor")] == ("agentv-ci-word-floor", PLUGIN_API_VERSION, None)
    assert mine[("target", "parrot")] == ("agentv-ci-parrot", PLUGIN_API_VERSION, None)
    assert mine[("reporter", "tsv")] == ("agentv-ci-tsv", PLUGIN_API_VERSION, None)
    # ... and they work in a run: the target answers, the grader grades, the reporter writes.
    project = tmp_path / "project"
    (project / ".agentv").mkdir(parents=True)
    (project / ".agentv" / "targets.yaml").write_text("targets:\n  - name: default\n    provider: parrot\n")
    (project / "words.eval.yaml").write_text(
        "name: words\ntests:\n"
        "  - id: enough\n    input: one two three\n    assertions: [{type: word-floor, min_words: 3}]\n"
        "  - id: too-few\n    input: one two\n    assertions: [{type: word-floor, min_words: 3}]\n"
    )
    assert fresh_venv.run("agentv-ci", "validate", ".", cwd=project).returncode == 0
    proc = fresh_venv.run(
        "agentv-ci", "run", ".", "-o", "out", "--report", "tsv=out/results.tsv", cwd=project
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert sorted((project / "out" / "results.tsv").read_text().splitlines()) == [
        "failed\twords\ttoo-few\tdefault\t0.00",
        "passed\twords\tenough\tdefault\t1.00",
    ]
