"""Property: generated hostile test ids, inputs, input file names and case metadata, through a real
`agentv-ci run` of a real `cli` target and real hook commands, never run as shell: the canary file is
never created, every program receives the exact bytes, and the run passes (never exit 4). Each
example is a whole run (about 2 s), so a failure is reported as generated, not shrunk."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from tests.cli_helpers import run_cli
from tests.properties import property_settings
from tests.security.shell_projects import PY, as_yaml, hook_calls, project, received, run_env

CANARY = "@CANARY@"  # replaced by the canary's path in each example
_ATTACKS = [
    f"$(touch {CANARY})", f"`touch {CANARY}`", f";touch {CANARY};", f"\ntouch {CANARY}\n", f"|touch {CANARY}",
    f"&&touch {CANARY}", "'", '"', "\\", "$'", "$HOME", "${PATH}", "\t", "#", "%s", " -c ", "{PROMPT}",
    "{OUTPUT_FILE}", "{{case_input}}", "{{workspace_path}}", "\r", "\x1b[31m", "~", "!", "\u2028", "é",
]  # fmt: skip
_TEXT = st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")


def _hostile(extra: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.lists(st.one_of(st.sampled_from(_ATTACKS), extra), min_size=1, max_size=6).map("".join)


# A file name: any character but `/` and NUL (and the glob characters input_files would expand).
_NAME_TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00/*?[]"), max_size=4)
_FILE_NAME = st.lists(
    st.one_of(st.sampled_from([a.replace("/", "") for a in _ATTACKS]), _NAME_TEXT), min_size=1, max_size=4
).map(lambda parts: "f" + "".join(parts)[:80])


@settings(parent=property_settings(6, deadline_ms=None), phases=[Phase.explicit, Phase.generate])
@given(
    ids=st.lists(_hostile(st.text(_TEXT, max_size=4)), min_size=1, max_size=3),
    inputs=st.lists(_hostile(st.text(_TEXT, max_size=8)), min_size=3, max_size=3),
    names=st.lists(_FILE_NAME, min_size=1, max_size=3, unique_by=lambda n: n.encode()),
)
def test_hostile_ids_inputs_and_file_names_never_run_as_shell(
    ids: list[str], inputs: list[str], names: list[str]
) -> None:
    with tempfile.TemporaryDirectory(prefix="shell-prop-") as directory:
        root = Path(directory)
        canary = root / "canary"
        files = root / "evals" / "files"
        files.mkdir(parents=True)
        for name in names:
            (files / name).write_bytes(b"x")
        tests = [
            {
                "id": f"t{n}-{test_id.replace(CANARY, str(canary))}",
                "input": f"q {inputs[n].replace(CANARY, str(canary))}",
                "input_files": [f"./files/{name}" for name in names],
                "metadata": {"note": inputs[-1 - n].replace(CANARY, str(canary))},
                "assertions": [{"type": "contains", "value": "ok"}],
            }
            for n, test_id in enumerate(ids)
        ]
        recorder = f"{PY} {root / 'evals' / 'recorder.py'}"
        hook = f"{recorder} {{{{case_input}}}} {{{{test_id}}}} {{{{case_metadata}}}}"
        document = {"workspace": {"hooks": {"before_each": {"command": hook}}}, "tests": tests}
        evals = project(
            root, "{AGENT} {OUTPUT_FILE} {PROMPT_FILE} {PROMPT} {EVAL_ID} {FILES}", as_yaml(document)
        )
        result = run_cli("run", str(evals), "-o", str(root / "out"), cwd=root, env=run_env(root), timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        calls = {call["argv"][1]: call for call in received(evals)}
        hooks = {call[1]: call for call in hook_calls(evals)}
        assert len(calls) == len(hooks) == len(tests)
        for test in tests:
            call = calls[test["id"].encode()]
            prompt, eval_id, *paths = call["argv"]
            assert prompt == call["prompt_file"]
            assert test["input"].encode() in prompt
            assert eval_id == call["env_eval_id"] == test["id"].encode()
            assert paths == [str((files / name).resolve()).encode() for name in names]
            case_input, _, metadata = hooks[test["id"].encode()]
            assert test["input"].encode() in case_input
            assert json.loads(metadata) == test["metadata"]
        assert not canary.exists()
