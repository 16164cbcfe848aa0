"""Property (issue 19): hostile strings as test ids, inputs, YAML keys, file names and numbers never
end in exit 4. Each example writes a small project (three eval files, one JSONL dataset) and runs the
real `validate` and `run` on it; any exit but 0, 1, 2 or 3, or a traceback, fails."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.properties import property_settings

_NASTY = [
    "\x00",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\r",
    "\n::error::x",
    "$(touch pwned)",
    "`id`",
    "'\"",
    "{{ test_id }}",
    "${{ HOME }}",
    "../../etc/passwd",
    "\ud800",
    "\u202e",
    "*" * 300,
    "9" * 400,
    "-1e400",
    "[" * 500,
    "&a [*a, *a]",
    "!!python/object:os.system",
    "<<: *x",
    "%TAG",
]
text = st.one_of(
    st.sampled_from(_NASTY), st.text(max_size=40), st.lists(st.sampled_from(_NASTY), max_size=4).map("".join)
)
number = st.one_of(
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([int("9" * 400), -(2**64), 2**64]),
)


def _yaml_scalar(value: object) -> str:
    if isinstance(value, float) and value != value:
        return ".nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return ".inf" if value > 0 else "-.inf"
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value


@pytest.mark.slow
@given(
    test_id=text,
    prompt=text,
    key=text,
    raw_value=text,
    file_name=text,
    threshold=number,
    weight=number,
)
@property_settings(12, deadline_ms=None)
def test_hostile_values_never_end_in_exit_4(
    test_id: str, prompt: str, key: str, raw_value: str, file_name: str, threshold: object, weight: object
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        evals = root / "evals"
        (evals / ".agentv").mkdir(parents=True)
        (evals / ".agentv" / "targets.yaml").write_text(
            "targets:\n  - name: default\n    provider: mock\n    response: hello\n", encoding="utf-8"
        )
        ident = json.dumps(test_id, ensure_ascii=False)
        quoted = json.dumps(prompt, ensure_ascii=False)
        (evals / "a.eval.yaml").write_text(
            f"name: a\nexecution: {{threshold: {_yaml_scalar(threshold)}}}\ntests:\n"
            f"  - id: {ident}\n    input: {quoted}\n"
            f"    assertions: [{{type: contains, value: h, weight: {_yaml_scalar(weight)}}}]\n",
            encoding="utf-8",
            errors="surrogatepass",
        )
        # The raw strings unquoted, where YAML itself must cope with them.
        (evals / "b.eval.yaml").write_text(
            f"name: b\n{key}: {raw_value}\ntests:\n  - id: b1\n    input: {raw_value}\n",
            encoding="utf-8",
            errors="surrogatepass",
        )
        (evals / "c.jsonl").write_text(
            json.dumps({"id": test_id, "input": prompt, "metadata": {key: threshold}}) + "\n",
            encoding="utf-8",
        )
        (evals / "c.eval.yaml").write_text("name: c\ntests: ./c.jsonl\n", encoding="utf-8")
        safe_name = file_name.replace("/", "_").replace("\x00", "_")[:100] or "_"
        try:
            (evals / f"{safe_name}.eval.yaml").write_text(
                "name: d\ntests:\n  - {id: d1, input: hi}\n", encoding="utf-8"
            )
        except (OSError, UnicodeEncodeError):
            pass  # a name the file system refuses is no input to us
        for args in (("validate", str(evals)), ("run", str(evals), "-o", str(root / "out"), "-q")):
            done = subprocess.run(
                [sys.executable, "-m", "agentv_ci", *args],
                capture_output=True,
                text=True,
                errors="replace",
                timeout=120,
                cwd=root,
            )
            assert done.returncode in (0, 1, 2, 3), (args, done.returncode, done.stderr[-2000:])
            assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-2000:]
