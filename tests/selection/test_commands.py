"""`agentv-ci discover` and `agentv-ci run --changed` in a subprocess, on real repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_cli
from tests.git_repos import GitRepo

TARGETS = "targets:\n  - name: default\n    provider: mock\n    response: hello there\n"


def _suite(case_ref: str | None = None) -> str:
    tests = f"tests: {case_ref}\n" if case_ref else "tests:\n  - id: inline\n    input: hi\n"
    return tests + "assertions:\n  - type: contains\n    value: hello\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """`main`: three evals, two of them reading a shared JSONL; `feature` changes that JSONL."""
    repo = GitRepo.init(tmp_path / "project")
    monkeypatch.chdir(repo.root)
    repo.write(".agentv/targets.yaml", TARGETS)
    repo.write("evals/cases/refunds.jsonl", '{"id": "r1", "input": "refund?"}\n')
    repo.write("evals/refunds.eval.yaml", _suite("./cases/refunds.jsonl"))
    repo.write("evals/billing.eval.yaml", _suite("./cases/refunds.jsonl"))
    repo.write("evals/greeting.eval.yaml", _suite())
    repo.write("evals/old.eval.yaml", _suite())
    repo.commit("base")
    repo.branch("feature")
    more = '{"id": "r1", "input": "refund?"}\n{"id": "r2", "input": "now?"}\n'
    repo.write("evals/cases/refunds.jsonl", more)
    repo.delete("evals/old.eval.yaml")
    repo.commit("more refund cases")
    return repo


def test_discover_prints_each_selected_eval_with_its_reasons(repo: GitRepo) -> None:
    done = run_cli("discover", "--base", "main", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    merge_base = repo.git("rev-parse", "main")[:12]
    assert done.stdout.splitlines() == [
        "2 of 3 eval(s) affected by the changes between main and HEAD "
        f"(merge-base {merge_base}, 2 changed files)",
        "evals/billing.eval.yaml",
        "  - evals/cases/refunds.jsonl changed",
        "evals/refunds.eval.yaml",
        "  - evals/cases/refunds.jsonl changed",
        "removed: evals/old.eval.yaml",
    ]


def test_discover_json_document(repo: GitRepo) -> None:
    done = run_cli("discover", "evals", "--base", "main", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document == {
        "base": "main",
        "head": "HEAD",
        "base_sha": repo.git("rev-parse", "main"),
        "head_sha": repo.git("rev-parse", "HEAD"),
        "merge_base": repo.git("rev-parse", "main"),
        "include_uncommitted": False,
        "changed_files": 2,
        "total": 3,
        "all_reason": None,
        "selected": [
            {"path": "evals/billing.eval.yaml", "reasons": ["evals/cases/refunds.jsonl changed"]},
            {"path": "evals/refunds.eval.yaml", "reasons": ["evals/cases/refunds.jsonl changed"]},
        ],
        "removed": ["evals/old.eval.yaml"],
        "unselecting": [],  # every changed file selected an eval or was a removed one
    }


def test_discover_paths_are_repo_relative_from_a_subdirectory(repo: GitRepo) -> None:
    done = run_cli("discover", ".", "--base", "main", "--json", cwd=repo.root / "evals")
    assert done.returncode == 0, done.stderr
    assert [s["path"] for s in json.loads(done.stdout)["selected"]] == [
        "evals/billing.eval.yaml",
        "evals/refunds.eval.yaml",
    ]


def test_discover_base_defaults_to_github_base_ref(repo: GitRepo) -> None:
    done = run_cli("discover", "--json", cwd=repo.root, env={**os.environ, "GITHUB_BASE_REF": "main"})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["base"] == "main"
    missing = run_cli("discover", cwd=repo.root)
    assert missing.returncode == 2
    assert "error: selecting changed evals needs a base to compare with: --base REF" in missing.stderr


def test_discover_outside_a_repository_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    done = run_cli("discover", "--base", "main", cwd=tmp_path / "plain")
    assert done.returncode == 2
    assert "is not inside a git repository" in done.stderr
    assert "Traceback" not in done.stderr


def test_discover_in_a_shallow_clone_without_history_asks_for_fetch_depth_0(
    repo: GitRepo, tmp_path: Path
) -> None:
    clone = repo.clone(tmp_path / "clone", "--depth", "1", "--no-single-branch")
    clone.git("remote", "remove", "origin")
    clone.git("branch", "main", repo.git("rev-parse", "main"))
    done = run_cli("discover", "--base", "main", cwd=clone.root)
    assert done.returncode == 2
    assert "is not in this shallow clone" in done.stderr
    assert "fetch-depth: 0" in done.stderr


def test_discover_deepens_a_shallow_ci_checkout(repo: GitRepo, tmp_path: Path) -> None:
    clone = repo.clone(tmp_path / "clone", "--depth", "1", "--branch", "feature")
    done = run_cli("discover", "--base", "main", "--json", cwd=clone.root)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["selected"]) == 2


def test_discover_a_head_that_is_not_checked_out_reads_it_from_a_temporary_worktree(repo: GitRepo) -> None:
    repo.checkout("main")
    done = run_cli("discover", "--base", "main", "--head", "feature", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [s["path"] for s in document["selected"]] == ["evals/billing.eval.yaml", "evals/refunds.eval.yaml"]
    assert document["removed"] == ["evals/old.eval.yaml"]
    assert repo.git("worktree", "list").count("\n") == 0


def _rows(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "index.jsonl").read_text().splitlines()]


def test_run_changed_runs_only_the_selected_evals(repo: GitRepo) -> None:
    done = run_cli("run", "evals", "--changed", "--base", "main", "-o", "out", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _rows(repo.root / "out")
    assert sorted((r["suite"], r["test_id"]) for r in rows) == [
        ("billing", "r1"),
        ("billing", "r2"),
        ("refunds", "r1"),
        ("refunds", "r2"),
    ]
    summary = json.loads((repo.root / "out" / "summary.json").read_text())
    assert summary["selection"] == {
        "evals/billing.eval.yaml": "evals/cases/refunds.jsonl changed",
        "evals/refunds.eval.yaml": "evals/cases/refunds.jsonl changed",
    }
    assert "2 of 3 eval(s) affected by the changes between main and HEAD" in done.stderr
    assert "evals/refunds.eval.yaml: evals/cases/refunds.jsonl changed" in done.stderr


def test_run_base_implies_changed(repo: GitRepo) -> None:
    markdown_file = "out/summary.md"
    done = run_cli("run", "evals", "--base", "main", "-o", "out", "--markdown", markdown_file, cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["suite"] for r in _rows(repo.root / "out")} == {"billing", "refunds"}
    markdown = (repo.root / "out" / "summary.md").read_text()
    assert "- `evals/refunds.eval.yaml`: evals/cases/refunds.jsonl changed" in markdown


def test_run_changed_with_nothing_selected_writes_an_empty_run_and_exits_0(repo: GitRepo) -> None:
    done = run_cli("run", "evals", "--changed", "--base", "HEAD", "-o", "out", cwd=repo.root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no eval is affected by the changes between HEAD and HEAD" in done.stdout
    assert (repo.root / "out" / "index.jsonl").read_text() == ""
    summary = json.loads((repo.root / "out" / "summary.json").read_text())
    assert summary["totals"].get("tests", 0) == 0
    assert summary["suites"] == []
    assert "selection" not in summary or summary["selection"] == {}


def test_shards_that_selected_nothing_merge_into_a_skipped_run_unless_one_is_missing(repo: GitRepo) -> None:
    for index in (1, 2, 3):
        shard = ("run", "evals", "--changed", "--base", "HEAD", "--shard", f"{index}/3", "-o", f"s{index}")
        done = run_cli(*shard, cwd=repo.root)
        assert done.returncode == 0, done.stdout + done.stderr
        summary = json.loads((repo.root / f"s{index}" / "summary.json").read_text())
        assert summary["skipped"] and summary["planned"] == 0
    merged = run_cli("merge", "s1", "s2", "s3", "-o", "merged", cwd=repo.root)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "SKIPPED: every input selected no eval" in merged.stdout
    assert json.loads((repo.root / "merged" / "summary.json").read_text())["skipped"]
    # Shard 3/3 left no record (killed before it wrote one): not known to have selected nothing.
    partial = run_cli("merge", "s1", "s2", "-o", "partial", cwd=repo.root)
    assert partial.returncode == 3, partial.stdout + partial.stderr
    assert "INCONCLUSIVE: incomplete: no results from shard 3/3" in partial.stdout
    assert "skipped" not in json.loads((repo.root / "partial" / "summary.json").read_text())


def test_run_changed_needs_a_base(repo: GitRepo) -> None:
    done = run_cli("run", "evals", "--changed", "-o", "out", cwd=repo.root)
    assert done.returncode == 2
    assert "--base REF" in done.stderr
    assert not (repo.root / "out").exists()
    with_env = run_cli(
        "run", "evals", "--changed", "-o", "out", cwd=repo.root, env={**os.environ, "GITHUB_BASE_REF": "main"}
    )
    assert with_env.returncode == 0, with_env.stderr
    assert {r["suite"] for r in _rows(repo.root / "out")} == {"billing", "refunds"}


def test_run_head_without_changed_is_a_usage_error(repo: GitRepo) -> None:
    done = run_cli("run", "evals", "--head", "HEAD", cwd=repo.root)
    assert done.returncode == 2
    assert "--head and --include-uncommitted need --changed" in done.stderr


def test_run_changed_refuses_a_head_that_is_not_checked_out(repo: GitRepo) -> None:
    done = run_cli("run", "evals", "--base", "main", "--head", "main", cwd=repo.root)
    assert done.returncode == 2
    assert "--head main is not the checked-out commit" in done.stderr


def test_run_changed_counts_uncommitted_work_when_asked(repo: GitRepo) -> None:
    repo.write("evals/greeting.eval.yaml", _suite() + "description: edited\n")
    done = run_cli(
        "run", "evals", "--base", "HEAD", "--include-uncommitted", "-o", "out", "--quiet", cwd=repo.root
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert {r["suite"] for r in _rows(repo.root / "out")} == {"greeting"}


def test_help_does_not_import_the_selection_package() -> None:
    code = "import sys; from agentv_ci.cli import app; print('agentv_ci.selection' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_discover_text_when_global_config_selects_everything(repo: GitRepo) -> None:
    repo.write(".agentv/config.yaml", "anything: true\n")
    repo.commit("config")
    done = run_cli("discover", "--base", "HEAD~1", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1:] == [
        "global config .agentv/config.yaml added: all evals selected",
        "evals/billing.eval.yaml",
        "evals/greeting.eval.yaml",
        "evals/refunds.eval.yaml",
    ]
    assert done.stdout.startswith("3 of 3 eval(s) affected by the changes between HEAD~1 and HEAD")
