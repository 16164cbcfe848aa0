from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentv_ci.errors import ConfigError
from agentv_ci.targets.config import load_targets
from agentv_ci.targets.dry_run import DryRunTarget
from agentv_ci.targets.factory import create_target
from agentv_ci.targets.mock import MockTarget
from agentv_ci.targets.openai import OpenAITarget


def _project(tmp_path: Path, targets_yaml: str) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / ".agentv").mkdir()
    (tmp_path / ".agentv" / "targets.yaml").write_text(targets_yaml)
    evals = tmp_path / "evals" / "deep"
    evals.mkdir(parents=True)
    eval_file = evals / "a.eval.yaml"
    eval_file.write_text("tests: []\n")
    return eval_file


def test_found_by_walking_up_and_env_interpolated(tmp_path: Path) -> None:
    eval_file = _project(
        tmp_path,
        "targets:\n  - name: llm\n    provider: openai\n    model: ${{ MODEL }}\n    api_key: ${{ KEY }}\n"
        "    max_retries: ${{ RETRIES }}\n",
    )
    config = load_targets(eval_file, env={"MODEL": "gpt-4o-mini", "KEY": "sk-1", "RETRIES": "5"})
    assert config.path == tmp_path / ".agentv" / "targets.yaml"
    definition = config.resolve("llm")
    assert definition.fields["model"] == "gpt-4o-mini"
    assert definition.fields["max_retries"] == 5  # whole-string placeholder coerced to a number
    assert config.base_dir == eval_file.parent  # relative target paths resolve from the eval file (AgentV)


def test_dotenv_fills_variables_but_process_env_wins(tmp_path: Path) -> None:
    eval_file = _project(
        tmp_path, "targets:\n  - name: m\n    provider: mock\n    response: ${{ A }}-${{ B }}\n"
    )
    (tmp_path / ".env").write_text("A=from-root\nB=from-root\n")
    (eval_file.parent / ".env").write_text("export B='from-eval-dir'\n")
    config = load_targets(eval_file, env={"A": "from-process"})
    assert config.resolve("m").fields["response"] == "from-process-from-eval-dir"


def test_use_target_alias_chain(tmp_path: Path) -> None:
    eval_file = _project(
        tmp_path,
        "targets:\n  - name: default\n    use_target: ${{ AGENT }}\n  - name: mid\n    use_target: real\n"
        "  - name: real\n    provider: mock\n",
    )
    config = load_targets(eval_file, env={"AGENT": "mid"})
    assert config.resolve("default").name == "real"
    target = create_target("default", config)
    assert isinstance(target, MockTarget)
    assert target.name == "default"  # results are labelled with the name the user asked for


def test_alias_loop_is_an_error(tmp_path: Path) -> None:
    eval_file = _project(
        tmp_path, "targets:\n  - name: a\n    use_target: b\n  - name: b\n    use_target: a\n"
    )
    with pytest.raises(ConfigError, match="longer than 10 levels"):
        load_targets(eval_file, env={}).resolve("a")


def test_alias_chains_as_deep_as_agentv_allows_resolve(tmp_path: Path) -> None:
    """AgentV follows use_target up to 10 levels; a file that works there works here."""
    chain = "".join(f"  - name: a{i}\n    use_target: a{i + 1}\n" for i in range(10))
    eval_file = _project(tmp_path, f"targets:\n{chain}  - name: a10\n    provider: mock\n")
    assert load_targets(eval_file, env={}).resolve("a0").name == "a10"


def test_empty_alias_names_the_variable(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, "targets:\n  - name: default\n    use_target: ${{ AGENT_TARGET }}\n")
    with pytest.raises(ConfigError) as info:
        load_targets(eval_file, env={}).resolve("default")
    assert "AGENT_TARGET" in (info.value.hint or "")


def test_missing_api_key_names_variable_with_location(tmp_path: Path) -> None:
    eval_file = _project(
        tmp_path, "targets:\n  - name: llm\n    provider: openai\n    api_key: ${{ MY_OPENAI_KEY }}\n"
    )
    with pytest.raises(ConfigError) as info:
        create_target("llm", load_targets(eval_file, env={}))
    rendered = info.value.render()
    assert "MY_OPENAI_KEY" in rendered
    assert f"{tmp_path / '.agentv' / 'targets.yaml'}:4:5" in rendered


def test_default_api_key_variable(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, "targets:\n  - name: llm\n    provider: openai\n")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        create_target("llm", load_targets(eval_file, env={}))
    target = create_target("llm", load_targets(eval_file, env={"OPENAI_API_KEY": "sk-x"}))
    assert isinstance(target, OpenAITarget)
    assert target.config.api_key == "sk-x"


def test_dry_run_needs_no_key(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, "targets:\n  - name: llm\n    provider: openai\n")
    target = create_target("llm", load_targets(eval_file, env={}), dry_run=True)
    assert isinstance(target, DryRunTarget) and isinstance(target.real, OpenAITarget)
    assert target.config.dry_run
    asyncio.run(target.aclose())


def test_dry_run_checks_targets_as_a_real_run_does(tmp_path: Path) -> None:
    targets = (
        "targets:\n  - name: agent\n    provider: cli\n"  # no `command`
        "  - name: typo\n    provider: opanai\n"
        "  - name: replayed\n    provider: replay\n    fixtures: missing.jsonl\n"
    )
    config = load_targets(_project(tmp_path, targets), env={})
    for name, message, line in (
        ("agent", "needs `command`", 2),
        ("typo", "unknown provider 'opanai'", 5),
        ("replayed", "does not exist", None),
        ("agnet", "unknown target 'agnet'", None),
    ):
        with pytest.raises(ConfigError, match=message) as info:
            create_target(name, config, dry_run=True)
        if line is not None:
            assert info.value.location is not None and info.value.location.line == line
    with pytest.raises(ConfigError) as info:
        create_target("typo", config, dry_run=True)
    assert "did you mean 'openai'?" in (info.value.hint or "")


def test_unknown_target_suggests_close_name(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, "targets:\n  - name: toy-agent\n    provider: mock\n")
    with pytest.raises(ConfigError) as info:
        create_target("toy-agnet", load_targets(eval_file, env={}))
    assert "toy-agent" in (info.value.hint or "")


def test_unknown_provider_and_bad_field_point_at_the_file(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, "targets:\n  - name: x\n    provider: nope\n")
    with pytest.raises(ConfigError) as info:
        create_target("x", load_targets(eval_file, env={}))
    assert info.value.location is not None and info.value.location.line == 3
    eval_file = _project(tmp_path / "b", "targets:\n  - name: x\n    provider: mock\n    delay_ms: soon\n")
    with pytest.raises(ConfigError) as info:
        create_target("x", load_targets(eval_file, env={}))
    assert info.value.location is not None and info.value.location.line == 4


def test_malformed_file_and_explicit_path(tmp_path: Path) -> None:
    eval_file = _project(tmp_path, "targets: {name: x}\n")
    with pytest.raises(ConfigError, match="`targets:` list"):
        load_targets(eval_file, env={})
    other = tmp_path / "elsewhere.yaml"
    other.write_text("targets:\n  - name: only-here\n    provider: mock\n")
    assert load_targets(eval_file, explicit=other, env={}).names() == ["only-here"]
    with pytest.raises(ConfigError, match="does not exist"):
        load_targets(eval_file, explicit=tmp_path / "missing.yaml", env={})


def test_no_targets_file_still_allows_builtin_mock(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    eval_file = tmp_path / "a.eval.yaml"
    eval_file.write_text("tests: []\n")
    config = load_targets(eval_file, env={})
    assert config.path is None
    assert isinstance(create_target("mock", config), MockTarget)
    with pytest.raises(ConfigError, match="unknown target 'default'"):
        create_target("default", config)


def test_agentv_field_names_are_read(tmp_path: Path) -> None:
    """AgentV's own spellings: openai `endpoint` (not only base_url) and `max_output_tokens`; azure
    `resource` (a bare name or a URL ending in /openai[/v1]), `deployment`, `api_version` (with or without
    an `api-version=` prefix); anthropic `max_output_tokens`; `variant` as the model."""
    from agentv_ci.targets.anthropic import AnthropicTarget
    from agentv_ci.targets.openai import AzureTarget

    eval_file = _project(
        tmp_path,
        "targets:\n"
        "  - name: oa\n    provider: openai\n    endpoint: http://127.0.0.1:1/v1\n"
        "    variant: my-model\n    api_key: k\n    max_output_tokens: 77\n"
        "  - name: az\n    provider: azure\n    resource: myres\n    deployment: dep\n"
        "    api_version: api-version=2024-10-21\n    api_key: k\n"
        "  - name: az2\n    provider: azure-openai\n    endpoint: https://x.example.com/openai/\n"
        "    model: dep\n    api_key: k\n"
        "  - name: an\n    provider: anthropic\n    model: claude-x\n    api_key: k\n"
        "    max_output_tokens: 55\n",
    )
    config = load_targets(eval_file, env={})
    oa = create_target("oa", config)
    assert isinstance(oa, OpenAITarget)
    assert oa.config.base_url == "http://127.0.0.1:1/v1"
    assert oa.config.max_tokens == 77
    assert oa.model == "my-model"
    az = create_target("az", config)
    assert isinstance(az, AzureTarget)
    assert az._base_url() == "https://myres.openai.azure.com/openai/deployments/dep"
    assert az._path() == ("chat/completions", {"api-version": "2024-10-21"})
    assert az.model == "dep"
    az2 = create_target("az2", config)
    assert isinstance(az2, AzureTarget)
    assert az2._base_url() == "https://x.example.com/openai/v1"
    an = create_target("an", config)
    assert isinstance(an, AnthropicTarget)
    assert an.config.max_tokens == 55
