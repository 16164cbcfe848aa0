"""The files one Action step writes: the results directory, JUnit, SARIF, the Markdown summary and
the HTML report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentv_ci.github.inputs import ActionInputs


@dataclass
class ActionPaths:
    workspace: Path
    output_dir: Path
    junit: Path
    sarif: Path
    markdown: Path

    @property
    def results(self) -> Path:
        return self.output_dir / "index.jsonl"

    @property
    def html(self) -> Path:
        """The HTML report (`html_report: true`), next to the results."""
        return self.output_dir / "report.html"


def action_paths(inputs: ActionInputs, workspace: Path) -> ActionPaths:
    """The paths the inputs name (relative ones inside `workspace`), with the defaults."""

    def inside(text: str) -> Path:
        path = Path(text)
        return path if path.is_absolute() else workspace / path

    output_dir = inside(inputs.output_dir or ".agentv-ci/results")
    return ActionPaths(
        workspace=workspace,
        output_dir=output_dir,
        junit=inside(inputs.junit_path) if inputs.junit_path else output_dir / "junit.xml",
        sarif=inside(inputs.sarif_path) if inputs.sarif_path else output_dir / "results.sarif",
        markdown=output_dir / "summary.md",
    )


def relative_to(path: Path, root: Path) -> str:
    """`path` relative to `root` (POSIX form) when it is inside it, else as it is."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
