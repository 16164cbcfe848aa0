"""`agentv-ci plugins new KIND NAME [DIR]`: a working plugin package to start from.

The package is complete and passes its own test right after creation: a pyproject with the entry
point, the class (using `agentv_ci.api` only), a README and a test. Templates are plain
`string.Template`s: `$name` (the entry-point name), `$dist` (the distribution), `$module` (the import
package), `$cls` (the class), `$api` (the plugin API version it is written for).
"""

from __future__ import annotations

import re
from pathlib import Path
from string import Template

from agentv_ci.errors import UsageError
from agentv_ci.plugins.contracts import NAMESPACES, PluginKind
from agentv_ci.plugins.versions import PLUGIN_API_VERSION

__all__ = ["NAME_PATTERN", "scaffold_plugin"]

NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")

_PYPROJECT = Template("""[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "An agentv-ci $kind plugin: $name."
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["agentv-ci>=0.1", "msgspec>=0.18"]

[project.optional-dependencies]
test = ["pytest>=8"]

# The whole registration: the name users write in their files -> the class.
[project.entry-points."$namespace"]
$name = "$module:$cls"

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
$module = ["py.typed"]

[tool.pytest.ini_options]
testpaths = ["tests"]
filterwarnings = ["error"]
""")

_README = Template("""# $dist

An [agentv-ci](https://github.com/agentevals/agentv-ci) $kind plugin, registered as `$name` in the
`$namespace` entry-point namespace.

```sh
pip install -e '.[test]'      # or: pip install .
pytest                        # the plugin's own tests
agentv-ci plugins --check     # lists `$name` with this distribution and its API version
```

$usage

It is written for plugin API $api (`api_version` on the class): agentv-ci loads it while its own
plugin API is $api or a later 1.x. See agentv-ci's docs/plugins.md for the contract.
""")

_USAGE = {
    "grader": """Use it in an eval file:

```yaml
assertions:
  - type: $name
    min_words: 3
```""",
    "target": """Declare it in `.agentv/targets.yaml`:

```yaml
targets:
  - name: my-$name
    provider: $name
    prefix: "echo: "
```""",
    "reporter": "Write the report with `agentv-ci run evals/ --report $name=report.txt`.",
}

_SOURCES = {
    "grader": Template('''"""`$name`: an agentv-ci grader. Replace the word count with your own check."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.api import (
    AssertionResult,
    GraderResult,
    GraderSpec,
    GradingContext,
    answer_text,
    score_result,
)

__all__ = ["$cls", "${cls}Config"]


class ${cls}Config(msgspec.Struct):
    """The grader's own keys in an eval file (next to `type`, `name`, `weight`, ...)."""

    min_words: int = 1


class $cls:
    """Passes when the final answer has at least `min_words` words."""

    api_version: ClassVar[str] = "$api"  # the plugin API this class is written for
    Config: ClassVar[type[msgspec.Struct]] = ${cls}Config

    def __init__(self, spec: GraderSpec, config: ${cls}Config, *, base_dir: Path) -> None:
        self.spec = spec
        self.config = config

    async def grade(self, ctx: GradingContext) -> GraderResult:
        words = len(answer_text(ctx.response).split())
        passed = words >= self.config.min_words
        assertion = AssertionResult(f"{words} words >= {self.config.min_words}", passed)
        return score_result(self.spec, 1.0 if passed else 0.0, [assertion], details={"words": words})
'''),
    "target": Template('''"""`$name`: an agentv-ci target. Replace the echo with a call to your model."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import msgspec

from agentv_ci.api import Message, TargetError, TargetRequest, TargetResponse

__all__ = ["$cls", "${cls}Config"]


class ${cls}Config(msgspec.Struct):
    """The provider's own keys in targets.yaml (next to `name`, `provider`, `grader_target`)."""

    prefix: str = ""


class $cls:
    """Answers every prompt with the prompt itself, after `prefix`."""

    api_version: ClassVar[str] = "$api"  # the plugin API this class is written for
    Config: ClassVar[type[msgspec.Struct]] = ${cls}Config

    def __init__(self, name: str, config: ${cls}Config, *, base_dir: Path) -> None:
        self.name = name
        self.config = config

    async def invoke(self, request: TargetRequest) -> TargetResponse:
        if not request.prompt:
            raise TargetError(f"target {self.name!r} got an empty prompt")
        text = self.config.prefix + request.prompt
        return TargetResponse(text=text, messages=[Message(role="assistant", content=text)])

    async def aclose(self) -> None:
        """Nothing to release (an HTTP target closes its client here)."""
'''),
    "reporter": Template('''"""`$name`: an agentv-ci reporter. Replace the text lines with your own format."""

from __future__ import annotations

from typing import ClassVar

from agentv_ci.api import ReportOptions, RunSummary, outcome_of

__all__ = ["$cls"]


class $cls:
    """One line per result: outcome, suite, test id, target and score."""

    api_version: ClassVar[str] = "$api"  # the plugin API this class is written for

    def write(self, summary: RunSummary, options: ReportOptions) -> None:
        lines = [
            f"{outcome_of(r)}\\t{r.suite}\\t{r.test_id}\\t{r.target}\\t{r.score:.2f}"
            for r in summary.results
        ]
        options.path.write_text("\\n".join(lines) + "\\n", encoding="utf-8")
'''),
}

_TESTS = {
    "grader": Template('''"""The plugin's own tests: the contract, the registration, and what it grades."""

from __future__ import annotations

import tomllib
from pathlib import Path

from agentv_ci.api import GRADERS_NAMESPACE, check_plugin, grade_answer
from $module import $cls

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_meets_the_plugin_contract() -> None:
    check_plugin("grader", $cls)


def test_is_registered_under_its_name() -> None:
    entry_points = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    assert entry_points[GRADERS_NAMESPACE]["$name"] == "$module:$cls"


def test_passes_a_long_enough_answer() -> None:
    result = grade_answer($cls, "three words here", {"min_words": 3})
    assert (result.score, result.verdict) == (1.0, "pass")


def test_fails_a_short_answer() -> None:
    result = grade_answer($cls, "two words", {"min_words": 3})
    assert (result.score, result.verdict) == (0.0, "fail")
    assert result.assertions[0].text == "2 words >= 3"
'''),
    "target": Template('''"""The plugin's own tests: the contract, the registration, and what it answers."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from agentv_ci.api import TARGETS_NAMESPACE, TargetError, call_target, check_plugin
from $module import $cls

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_meets_the_plugin_contract() -> None:
    check_plugin("target", $cls)


def test_is_registered_under_its_name() -> None:
    entry_points = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    assert entry_points[TARGETS_NAMESPACE]["$name"] == "$module:$cls"


def test_answers_with_the_prompt() -> None:
    response = call_target($cls, "hello", {"prefix": "echo: "})
    assert response.text == "echo: hello"


def test_an_empty_prompt_is_a_target_error() -> None:
    with pytest.raises(TargetError, match="empty prompt"):
        call_target($cls, "")
'''),
    "reporter": Template('''"""The plugin's own tests: the contract, the registration, and what it writes."""

from __future__ import annotations

import tomllib
from pathlib import Path

from agentv_ci.api import REPORTERS_NAMESPACE, ReportOptions, RunSummary, TestResult, check_plugin
from $module import $cls

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def test_meets_the_plugin_contract() -> None:
    check_plugin("reporter", $cls)


def test_is_registered_under_its_name() -> None:
    entry_points = tomllib.loads(PYPROJECT.read_text())["project"]["entry-points"]
    assert entry_points[REPORTERS_NAMESPACE]["$name"] == "$module:$cls"


def test_writes_one_line_per_result(tmp_path: Path) -> None:
    summary = RunSummary(
        results=[
            TestResult("capital", "geo", "default", 1.0, "ok", verdict="pass"),
            TestResult("sum", "math", "default", 0.25, "quality_failure"),
        ]
    )
    $cls().write(summary, ReportOptions(path=tmp_path / "report.txt"))
    assert (tmp_path / "report.txt").read_text().splitlines() == [
        "passed\\tgeo\\tcapital\\tdefault\\t1.00",
        "failed\\tmath\\tsum\\tdefault\\t0.25",
    ]
'''),
}


def scaffold_plugin(kind: PluginKind, name: str, directory: Path | None = None) -> list[Path]:
    """Write a new plugin package for `kind` named `name` into `directory` (default
    `./agentv-ci-NAME`); return the files written. Refuses a bad name or a non-empty directory."""
    if kind not in NAMESPACES:
        raise UsageError(f"unknown plugin kind {kind!r}", hint=f"one of: {', '.join(NAMESPACES)}")
    if not NAME_PATTERN.fullmatch(name):
        raise UsageError(
            f"plugin name {name!r} is not kebab-case",
            hint="lower-case letters and digits joined by single dashes, e.g. `word-count`",
        )
    dist = f"agentv-ci-{name}"
    directory = directory if directory is not None else Path(dist)
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(f"{directory} already exists and is not an empty directory", hint="pick another DIR")
    module = "agentv_ci_" + name.replace("-", "_")
    suffix = kind.capitalize()
    cls = "".join(part.capitalize() for part in name.split("-")) + ("" if name.endswith(kind) else suffix)
    values = {
        "name": name,
        "dist": dist,
        "module": module,
        "cls": cls,
        "kind": kind,
        "namespace": NAMESPACES[kind],
        "api": PLUGIN_API_VERSION,
    }
    values["usage"] = Template(_USAGE[kind]).substitute(values)
    files = {
        directory / "pyproject.toml": _PYPROJECT.substitute(values),
        directory / "README.md": _README.substitute(values),
        directory / "src" / module / "__init__.py": _SOURCES[kind].substitute(values),
        directory / "src" / module / "py.typed": "",
        directory / "tests" / f"test_{module}.py": _TESTS[kind].substitute(values),
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)
