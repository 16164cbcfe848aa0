from __future__ import annotations

from pathlib import Path

from agentv_ci.loading.interpolate import build_env, interpolate_env, parse_dotenv, substitute_vars


def test_parse_dotenv_handles_quotes_export_and_comments() -> None:
    text = "export A=1\nB=\"two words\"\nC='x # y'\nD=plain # trailing\n# skip\nbad line\nE=\n"
    assert parse_dotenv(text) == {"A": "1", "B": "two words", "C": "x # y", "D": "plain", "E": ""}


def test_process_env_wins_then_nearest_dotenv(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".env").write_text("X=root\nY=root\nZ=root\n")
    sub = tmp_path / "evals"
    sub.mkdir()
    (sub / ".env").write_text("X=near\nY=near\n")
    env, files = build_env(sub, tmp_path, {"X": "process"})
    assert (env["X"], env["Y"], env["Z"]) == ("process", "near", "root")
    assert files[0] == sub / ".env"


def test_env_placeholders_values_only_with_whole_string_coercion() -> None:
    env = {"N": "3", "F": "0.5", "B": "true", "S": "text"}
    data = {"${{ S }}": "${{N}}", "list": ["${{ F }}", "${{ B }}", "a-${{ S }}-${{ MISSING }}"], "num": 7}
    assert interpolate_env(data, env) == {"${{ S }}": 3, "list": [0.5, True, "a-text-"], "num": 7}


def test_vars_whole_placeholder_keeps_json_type_and_unknown_stay() -> None:
    variables = {"q": "capital?", "obj": {"a": [1, 2]}, "user": {"name": "Ann"}}
    assert substitute_vars("{{ obj }}", variables) == {"a": [1, 2]}
    assert substitute_vars("Q: {{q}} by {{ user.name }} {{nope}}", variables) == "Q: capital? by Ann {{nope}}"
    assert substitute_vars("data={{obj}}", variables) == 'data={"a": [1, 2]}'
    assert substitute_vars(["{{q}}"], {}) == ["{{q}}"]
