"""Plugin faults stay contained (issue 19, item 10): a target plugin that raises anything is an
execution error for that test, a reporter plugin that raises is named and the other reports are
still written, and a plugin cannot take a built-in name.

`faulty-agentv-plugins 0.9` is installed the way pip leaves a distribution (tests/plugin_site.py) and
every check runs `agentv-ci` in a fresh subprocess.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.cli_helpers import mock_project
from tests.fakes.llm_server import FakeLlmServer
from tests.plugin_site import install_distribution, run_with_site

FAULTY = '''
import msgspec

from agentv_ci.api import TargetResponse


class NoConfig(msgspec.Struct):
    pass


class Boom:
    """A target that raises a plain RuntimeError when the prompt says so."""

    api_version = "1.0"
    Config = NoConfig

    def __init__(self, name, config, *, base_dir):
        pass

    async def invoke(self, request):
        if "explode" in request.prompt:
            raise RuntimeError("kaboom\\nsecond line")
        if "key" in request.prompt:
            return {}["missing"]
        return TargetResponse(text="Paris")

    async def aclose(self):
        return None


class Nothing:
    """A target whose invoke returns None."""

    api_version = "1.0"
    Config = NoConfig

    def __init__(self, name, config, *, base_dir):
        pass

    async def invoke(self, request):
        return None

    async def aclose(self):
        return None


class BoomReport:
    api_version = "1.0"

    def write(self, summary, options):
        raise ValueError("cannot render")


class FineReport:
    api_version = "1.0"

    def write(self, summary, options):
        options.path.write_text(f"{len(summary.results)} results")
'''

CLAIMS = '''
import msgspec

from agentv_ci.api import TargetResponse


class NoConfig(msgspec.Struct):
    pass


class FakeContains:
    """Claims the built-in `contains`: would fail every test."""

    api_version = "1.0"
    Config = NoConfig

    def __init__(self, spec, config, *, base_dir):
        self.spec = spec

    async def grade(self, ctx):
        from agentv_ci.api import pass_fail_result

        return pass_fail_result(self.spec, False, "hijacked")


class FakeOpenAI:
    """Claims the built-in `openai`: its config requires a field no real target has."""

    api_version = "1.0"

    class Config(msgspec.Struct):
        hijack: int

    def __init__(self, name, config, *, base_dir):
        pass

    async def invoke(self, request):
        return TargetResponse(text="hijacked")

    async def aclose(self):
        return None


class FakeJunit:
    """Claims the built-in `junit`: would write no XML."""

    api_version = "1.0"

    def write(self, summary, options):
        options.path.write_text("hijacked")
'''

ENTRY_POINTS = """\
[agentv_ci.targets]
boom = faulty_plugins:Boom
nothing = faulty_plugins:Nothing

[agentv_ci.reporters]
boom-report = faulty_plugins:BoomReport
fine-report = faulty_plugins:FineReport
"""
CLAIMS_ENTRY_POINTS = """\
[agentv_ci.targets]
openai = claiming_plugins:FakeOpenAI

[agentv_ci.graders]
contains = claiming_plugins:FakeContains

[agentv_ci.reporters]
junit = claiming_plugins:FakeJunit
"""
ORIGIN = "from faulty-agentv-plugins 0.9"
CLAIMS_ORIGIN = "from claiming-agentv-plugins 2.0"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_distribution(
        tmp_path_factory.mktemp("site"),
        "faulty-agentv-plugins",
        "0.9",
        module="faulty_plugins",
        source=FAULTY,
        entry_points=ENTRY_POINTS,
    )


@pytest.fixture(scope="module")
def claims_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_distribution(
        tmp_path_factory.mktemp("claims"),
        "claiming-agentv-plugins",
        "2.0",
        module="claiming_plugins",
        source=CLAIMS,
        entry_points=CLAIMS_ENTRY_POINTS,
    )


def _rows(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "index.jsonl").read_text().splitlines()
    return {r["test_id"]: r for r in map(json.loads, lines)}


def _project(tmp_path: Path, eval_yaml: str) -> Path:
    evals = mock_project(tmp_path / "evals", response="Paris", eval_file="e.eval.yaml", eval_yaml=eval_yaml)
    with (evals / ".agentv" / "targets.yaml").open("a") as targets:
        targets.write("  - name: boom\n    provider: boom\n  - name: nothing\n    provider: nothing\n")
    return evals


FAULTS_EVAL = """\
name: faults
tests:
  - id: explodes
    input: please explode
    execution: {target: boom}
    assertions: [{type: equals, value: Paris}]
  - id: keyerror
    input: a key please
    execution: {target: boom}
    assertions: [{type: equals, value: Paris}]
  - id: fine
    input: the capital of France
    execution: {target: boom}
    assertions: [{type: equals, value: Paris}]
  - id: none
    input: anything
    execution: {target: nothing}
    assertions: [{type: equals, value: Paris}]
  - id: turns
    mode: conversation
    execution: {target: boom}
    turns:
      - input: the capital of France
      - input: now explode
    assertions: [{type: equals, value: Paris}]
"""


def test_any_exception_from_a_target_plugin_is_an_execution_error_naming_the_plugin(
    site: Path, tmp_path: Path
) -> None:
    evals = _project(tmp_path, FAULTS_EVAL)
    out = tmp_path / "out"
    junit = tmp_path / "junit.xml"
    proc = run_with_site(["run", str(evals), "-o", str(out), "--junit", str(junit)], site, tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr  # inconclusive, not an internal error
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    rows = _rows(out)
    head = f"target plugin 'boom' {ORIGIN} (entry point faulty_plugins:Boom) failed: "
    assert rows["explodes"]["execution_status"] == "execution_error"
    assert rows["explodes"]["error"] == head + "RuntimeError: kaboom"
    assert rows["keyerror"]["error"] == head + "KeyError: 'missing'"
    assert rows["none"]["error"] == (
        f"target plugin 'nothing' {ORIGIN} (entry point faulty_plugins:Nothing) failed: "
        "`invoke` returned NoneType, not a TargetResponse"
    )
    assert rows["turns"]["execution_status"] == "execution_error"
    assert rows["turns"]["error"] == "turn 2: " + head + "RuntimeError: kaboom"
    assert rows["fine"]["execution_status"] == "ok" and rows["fine"]["score"] == 1.0
    # The run finished: summary printed, reports and gate written.
    assert "RESULT: INCONCLUSIVE: 1/5 tests passed (4 errored)" in proc.stdout
    assert (out / "summary.json").is_file()
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases["explodes [boom]"].find("error") is not None
    tolerated = run_with_site(
        ["run", str(evals), "-o", str(tmp_path / "out2"), "--no-fail-on-error"], site, tmp_path
    )
    assert tolerated.returncode == 0, tolerated.stdout + tolerated.stderr


PASSING_EVAL = "tests:\n  - id: t\n    input: hi\n    assertions: [{type: contains, value: Paris}]\n"
FAILING_EVAL = "tests:\n  - id: t\n    input: hi\n    assertions: [{type: contains, value: Rome}]\n"


@pytest.mark.parametrize(("eval_yaml", "exit_code"), [(PASSING_EVAL, 0), (FAILING_EVAL, 1)])
def test_a_reporter_that_raises_is_named_and_the_other_reports_are_still_written(
    site: Path, tmp_path: Path, eval_yaml: str, exit_code: int
) -> None:
    evals = _project(tmp_path, eval_yaml)
    out = tmp_path / "out"
    reports = tmp_path / "reports"
    args = ["run", str(evals), "-o", str(out), "--junit", str(reports / "junit.xml")]
    args += ["--report", f"boom-report={reports / 'boom.txt'}"]
    args += ["--report", f"fine-report={reports / 'fine.txt'}"]
    proc = run_with_site(args, site, tmp_path)
    assert proc.returncode == exit_code, proc.stdout + proc.stderr  # the verdict's code, unchanged
    assert (
        f"error: reporter plugin 'boom-report' {ORIGIN} (entry point faulty_plugins:BoomReport) "
        f"failed writing {reports / 'boom.txt'}: ValueError: cannot render\n"
        "  hint: the other reports were written and the verdict is unchanged"
    ) in proc.stderr
    assert "internal error" not in proc.stderr
    assert (reports / "fine.txt").read_text() == "1 results"  # written after the failing one
    ET.parse(reports / "junit.xml")
    assert (out / "summary.json").is_file()

    again = run_with_site(
        [
            "report",
            str(out),
            "--report",
            f"boom-report={reports / 'b2.txt'}",
            "--report",
            f"fine-report={reports / 'f2.txt'}",
        ],
        site,
        tmp_path,
    )
    assert "ValueError: cannot render" in again.stderr and "internal error" not in again.stderr
    assert (reports / "f2.txt").read_text() == "1 results"
    assert again.returncode == exit_code, again.stdout + again.stderr


RESERVED_WARNINGS = {
    kind: f"warning: {kind} plugin {name!r} {CLAIMS_ORIGIN} (entry point claiming_plugins:{cls}) is broken: "
    f"{name!r} is the name of a built-in {kind}, and built-in names are reserved; the built-in is used"
    for kind, name, cls in [
        ("grader", "contains", "FakeContains"),
        ("target", "openai", "FakeOpenAI"),
        ("reporter", "junit", "FakeJunit"),
    ]
}


def test_a_plugin_claiming_a_built_in_name_is_broken_and_the_built_in_keeps_working(
    claims_site: Path, tmp_path: Path, llm_server: FakeLlmServer
) -> None:
    site = claims_site
    listing = run_with_site(["plugins", "--json"], site, tmp_path)
    assert listing.returncode == 0, listing.stderr
    rows = {(p["kind"], p["name"], p["distribution"]): p for p in json.loads(listing.stdout)["plugins"]}
    for kind, name in [("grader", "contains"), ("target", "openai"), ("reporter", "junit")]:
        assert rows[(kind, name, "agentv-ci")]["error"] is None and rows[(kind, name, "agentv-ci")]["builtin"]
        claimant = rows[(kind, name, "claiming-agentv-plugins")]
        assert not claimant["builtin"]
        assert claimant["error"] == (
            f"{name!r} is the name of a built-in {kind}, and built-in names are reserved: "
            "this entry point is ignored and the built-in is used (rename the plugin)"
        )
        assert listing.stderr.count(RESERVED_WARNINGS[kind]) == 1  # reported once
    check = run_with_site(["plugins", "--check"], site, tmp_path)
    assert check.returncode == 2 and "3 broken plugin(s)" in check.stderr
    assert check.stdout.count("BROKEN") == 3

    evals = mock_project(
        tmp_path / "evals", response="Paris", eval_file="e.eval.yaml", eval_yaml=PASSING_EVAL
    )
    (evals / ".agentv" / "targets.yaml").write_text(
        "targets:\n  - name: default\n    provider: openai\n"
        f"    base_url: {llm_server.base_url}\n    model: gpt-test\n    api_key: sk-test-0123456789\n"
        "    max_retries: 0\n"
    )
    llm_server.responder = lambda call: "The capital is Paris."
    out = tmp_path / "out"
    junit = tmp_path / "junit.xml"
    proc = run_with_site(["run", str(evals), "-o", str(out), "--junit", str(junit)], site, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [row] = _rows(out).values()
    assert row["score"] == 1.0 and row["output"] == "The capital is Paris."  # built-in openai + contains
    assert row["scores"][0]["type"] == "contains" and "hijacked" not in json.dumps(row)
    assert ET.parse(junit).getroot().tag == "testsuites"  # the built-in JUnit reporter wrote it
    for kind in ("grader", "target", "reporter"):
        assert proc.stderr.count(RESERVED_WARNINGS[kind]) == 1, proc.stderr
