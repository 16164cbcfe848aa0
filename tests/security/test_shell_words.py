"""The scanner that says where a data placeholder may stand in a shell command, checked against real
`sh` and `bash`: whatever it accepts, rendered with hostile values, never runs them."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentv_ci.running.hooks import HookContext, run_hook
from agentv_ci.security.hook_commands import command_problems as hook_problems
from agentv_ci.security.nested_programs import code_arguments
from agentv_ci.security.shell_values import UnsafePathError, plain_path, variable
from agentv_ci.targets.cli import COMMAND
from tests.properties import property_settings

_READ_AS_CODE = " with an integer or array attribute (bash reads it as code)"
SHELLS = [s for s in ("sh", "bash") if shutil.which(s)]
PY = sys.executable


@pytest.mark.parametrize(
    ("template", "where"),
    [
        ('echo "{PROMPT}"', "inside double quotes"),
        ("echo '{PROMPT}'", "inside single quotes"),
        ("echo $'{PROMPT}'", "inside `$'...'` quotes"),
        ('sh -c "echo {PROMPT} > {OUTPUT_FILE}"', "inside the code string of a nested `sh -c`"),
        ("sh -c {PROMPT}", "inside the code string of a nested `sh -c`"),
        ("env A=1 timeout 5 bash -lc 'x {EVAL_ID}'", "inside the code string of a nested `bash -lc`"),
        ("xargs -0 sh -c {FILES}", "inside the code string of a nested `sh -c`"),
        ('sh -c "$(echo {PROMPT})"', "inside the code string of a nested `sh -c`"),
        ("python3 -c {PROMPT}", "inside the code string of a nested `python3 -c`"),
        ("node -e {PROMPT}", "inside the code string of a nested `node -e`"),
        ("perl -ne {PROMPT}", "inside the code string of a nested `perl -ne`"),
        ("echo `cat {PROMPT}`", "inside backticks"),
        ('echo "`cat {PROMPT}`"', "inside backticks"),
        ("echo ${PROMPT}", "right after `$`"),
        ("echo ${X:-{PROMPT}}", "inside a `${...}` expansion"),
        ("echo \\{PROMPT}", "right after a backslash"),
        ("echo $(( {PROMPT} + 1 ))", "inside an arithmetic expansion `$(( ))`"),
        ("(( {PROMPT} > 1 ))", "inside an arithmetic command `(( ))`"),
        ("let x={PROMPT}", "an argument of `let` (arithmetic)"),
        ("[[ {PROMPT} -eq 1 ]]", "inside `[[ ... ]]` with an arithmetic comparison"),
        ("eval {PROMPT}", "an argument of `eval`, which runs it as shell code"),
        # eval behind a reserved word or a builtin that runs the command after it
        ("command eval {PROMPT}", "an argument of `eval`, which runs it as shell code"),
        ("command -p eval {PROMPT}", "an argument of `eval`, which runs it as shell code"),
        ("builtin eval {PROMPT}", "an argument of `eval`, which runs it as shell code"),
        ("! eval {PROMPT}", "an argument of `eval`, which runs it as shell code"),
        ("time -p eval {PROMPT}", "an argument of `eval`, which runs it as shell code"),
        ("if eval {PROMPT}; then :; fi", "an argument of `eval`, which runs it as shell code"),
        ("while eval {PROMPT}; do :; done", "an argument of `eval`, which runs it as shell code"),
        ("if true; then eval {PROMPT}; fi", "an argument of `eval`, which runs it as shell code"),
        ("{ eval {PROMPT}; }", "an argument of `eval`, which runs it as shell code"),
        ("if . {PROMPT}; then :; fi", "an argument of `.`, which runs the file it names as shell code"),
        ("command {PROMPT}", "as the command name (it would choose the program)"),
        ("declare -i x={PROMPT}", "an argument of `declare`" + _READ_AS_CODE),
        ("local -a x={PROMPT}", "an argument of `local`" + _READ_AS_CODE),
        ("typeset -A x={PROMPT}", "an argument of `typeset`" + _READ_AS_CODE),
        ("trap {PROMPT} EXIT", "an argument of `trap`, which runs it as shell code"),
        (". {PROMPT}", "an argument of `.`, which runs the file it names as shell code"),
        ("awk -F, {PROMPT} file", "inside the code string of a nested `awk PROGRAM`"),
        ("sed -n -e {PROMPT}", "inside the code string of a nested `sed -e`"),
        ("{PROMPT} --x", "as the command name (it would choose the program)"),
        ("a; X=1 {EVAL_ID}", "as the command name (it would choose the program)"),
        ("cat <<EOF\n{PROMPT}\nEOF", "inside a here-document"),
        ("cat <<'EOF' > f\nx {PROMPT}\nEOF\n", "inside a here-document"),
        ("cat <<{PROMPT}\nx\n", "in a here-document's delimiter"),
    ],
)
def test_data_outside_a_plain_word_is_found_with_why(template: str, where: str) -> None:
    problems = COMMAND.problems(template)
    assert [p.where for p in problems] == [where], problems
    assert template[problems[0].start : problems[0].end] in ("{PROMPT}", "{EVAL_ID}", "{FILES}")


@pytest.mark.parametrize(
    "template",
    [
        "agent {PROMPT} {OUTPUT_FILE}",
        "agent --prompt={PROMPT} --id={EVAL_ID} {FILES} > {OUTPUT_FILE}",
        "X={PROMPT} agent \"{OUTPUT_FILE}\" '{PROMPT_FILE}'",
        'sh -c \'agent "$1" > "{OUTPUT_FILE}"\' sh {PROMPT}',
        "bash -c 'cd \"{OUTPUT_FILE}/x\" && ls'",
        'echo "$(printf %s {PROMPT})" > "{OUTPUT_FILE}"',
        'for f in {FILES}; do cat "$f"; done > {OUTPUT_FILE}',
        "cat <<EOF > {OUTPUT_FILE}\n{ATTEMPT} {PROMPT_FILE}\nEOF\nagent {PROMPT}",
        "agent {PROMPT} # echo '{PROMPT}'",
        "echo $(( {ATTEMPT} + 1 )) ${HOME} {UNKNOWN} '{UNKNOWN}'",
        "(cd dir && agent {PROMPT}) | tee {OUTPUT_FILE}",
        "[[ {PROMPT} == x ]] && agent",
        "awk -f prog.awk {PROMPT} > {OUTPUT_FILE}",
        "sed -e s/a/b/ {FILES}",
        "if [ -n {PROMPT} ]; then agent {PROMPT}; fi > {OUTPUT_FILE}",
        "export X={PROMPT}; command -v agent && time agent {PROMPT} {OUTPUT_FILE}",
    ],
)
def test_plain_words_and_runner_paths_anywhere_are_accepted(template: str) -> None:
    assert COMMAND.problems(template) == []


def test_nested_programs_in_an_argv() -> None:
    assert {
        i: str(p)
        for i, p in code_arguments(["env", "X=1", "bash", "-e", "-o", "pipefail", "-c", "c", "a"]).items()
    } == {7: "`bash -c`"}
    assert code_arguments(["sh", "script.sh", "-c", "x"]) == {}  # a script's own -c is an argument
    assert {i: str(p) for i, p in code_arguments(["python3", "-W", "ignore", "-c", "x"]).items()} == {
        4: "`python3 -c`"
    }
    assert code_arguments(["python3", "tool.py", "-c", "x"]) == {}


def test_hook_commands_string_and_argv() -> None:
    assert hook_problems("echo {{case_input}} > {{workspace_path}}/x") == []
    assert hook_problems(["sh", "-c", "echo {{case_input}}", "{{test_id}}"]) == []
    assert hook_problems(["cat", "'{{case_input}}'"]) == []  # an argv element is never read by a shell
    [(index, message, hint)] = hook_problems(["bash", "-c", "x '{{test_id}}'"])
    assert index == 2 and "{{test_id}} is inside single quotes" in message
    assert "remove the quotes around {{test_id}}" in hint and "stdin" in hint
    [(index, message, _)] = hook_problems(["python3", "-c", "print('{{workspace_path}}', {{case_metadata}})"])
    assert index == 2 and "{{case_metadata}}" in message and "python3 -c" in message


def test_runner_paths_must_be_plain() -> None:
    assert plain_path("/tmp/agentv-ci-cli-a_1/prompt.md", "x") == "/tmp/agentv-ci-cli-a_1/prompt.md"
    for bad in (
        "/tmp/a b",
        "/tmp/a'b",
        '/tmp/a"b',
        "/tmp/$x",
        "/tmp/`x`",
        "/tmp/a;b",
        "relative/x",
        "/tmp/a\nb",
        "/t/*",
    ):
        with pytest.raises(UnsafePathError, match="characters a shell treats specially"):
            plain_path(bad, "x")


def test_a_hook_shell_string_never_uses_a_workspace_path_that_is_not_plain(tmp_path: Path) -> None:
    """A static workspace path with shell characters: an argv still gets it as one argument, a shell
    string refuses it (the hook fails saying why) and nothing runs."""
    weird = tmp_path / "my ws $(touch pwned)"
    weird.mkdir()
    out = tmp_path / "argv.txt"
    context = HookContext(weird, "t", "run")
    argv = [PY, "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])", str(out), "{{workspace_path}}"]
    assert asyncio.run(run_hook(argv, cwd=tmp_path, context=context, timeout_ms=30_000)).ok
    assert out.read_text() == str(weird)
    refused = asyncio.run(
        run_hook(
            f"touch {tmp_path}/ran; ls '{{{{workspace_path}}}}'",
            cwd=tmp_path,
            context=context,
            timeout_ms=30_000,
        )
    )
    assert not refused.ok and "characters a shell treats specially" in refused.message
    assert not (tmp_path / "ran").exists() and not list(tmp_path.rglob("pwned"))


# --------------------------------------------------------------------------- soundness, by running
_FRAGMENTS = [
    " ", " ", " ", "{PROMPT}", "{PROMPT}", "{EVAL_ID}", "printf '%s\\n'", "echo", ":", "true", "'", '"', "\\",
    "`", "$(", ")", "(", "${X:-", "}", "$((", "))", ";", "|", "&&", "\n", "<<EOF\n", "\nEOF\n", "<<'Q'\n",
    "\nQ\n", "sh -c", "bash -c", "eval", "x=", "$'", "#", "cat", "[[", "]]", "-eq", "let", "trap", "awk",
    "sed", "-e", ". ", "source", "python3 -c", "{",
]  # fmt: skip
# Not generated: a template that hands a value to a shell itself (`x={PROMPT}; eval $x`, `| sh`), which
# no scanner can see (docs/security.md says so).
_PAYLOADS = [
    "$(touch {c})",
    "`touch {c}`",
    "; touch {c}",
    "'; touch {c}; '",
    '"; touch {c}; "',
    "\ntouch {c}\n",
    "x)||touch {c}||(x",
]


@pytest.mark.slow
@property_settings(300, deadline_ms=None)
@given(
    pieces=st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=12),
    payload=st.sampled_from(_PAYLOADS),
)
def test_whatever_the_scanner_accepts_never_runs_the_data(pieces: list[str], payload: str) -> None:
    template = "".join(pieces)
    if COMMAND.problems(template):
        return
    with tempfile.TemporaryDirectory() as directory:
        canary = Path(directory) / "canary"
        value = payload.format(c=canary)
        data = {"PROMPT": variable("AGENTV_PROMPT", value), "EVAL_ID": variable("AGENTV_EVAL_ID", value)}
        command, env = COMMAND.render(template, data, {})
        for shell in SHELLS:
            subprocess.run(
                [shell, "-c", command],
                env={"PATH": os.environ["PATH"], **env},
                cwd=directory,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=10,
            )
            assert not canary.exists(), (shell, template, command)


@property_settings(40, deadline_ms=None)
@given(value=st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"), max_size=40))
def test_a_plain_placeholder_reaches_the_program_byte_for_byte(value: str) -> None:
    command, env = COMMAND.render("printf %s {PROMPT}", {"PROMPT": variable("AGENTV_PROMPT", value)}, {})
    for shell in SHELLS:
        done = subprocess.run(
            [shell, "-c", command], env={"PATH": os.environ["PATH"], **env}, capture_output=True, timeout=10
        )
        assert done.stdout == value.encode()
