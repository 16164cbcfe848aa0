"""Eval projects whose `cli` target and hooks record the exact bytes they receive, for the
shell-injection tests (real `agentv-ci` subprocesses, a real agent program, real hook commands)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

PY = sys.executable

# The agent: records its argv and the prompt file as hex (exact bytes), answers "ok".
AGENT = """\
import json, os, sys
out, prompt_file, *rest = sys.argv[1:]
record = {
    "argv": [os.fsencode(a).hex() for a in rest],
    "prompt_file": open(prompt_file, "rb").read().hex(),
    "env_eval_id": os.fsencode(os.environ.get("AGENTV_EVAL_ID", "")).hex(),
}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "received.jsonl"), "a") as log:
    log.write(json.dumps(record) + "\\n")
open(out, "w").write("ok")
"""

# A hook program: records its argv (exact bytes) next to itself.
RECORDER = """\
import json, os, sys
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hooks.jsonl"), "a") as log:
    log.write(json.dumps([os.fsencode(a).hex() for a in sys.argv[1:]]) + "\\n")
"""


def project(root: Path, command: str, eval_text: str, *, name: str = "a.eval.yaml") -> Path:
    """`root/evals` with the agent, the hook recorder, a targets file whose `default` target runs
    `command` (`{AGENT}` is the agent's path) and the eval file. Returns the evals directory."""
    evals = root / "evals"
    (evals / ".agentv").mkdir(parents=True, exist_ok=True)
    (evals / "agent.py").write_text(AGENT)
    (evals / "recorder.py").write_text(RECORDER)
    targets = {
        "targets": [
            {
                "name": "default",
                "provider": "cli",
                "command": command.replace("{AGENT}", f"{PY} {evals / 'agent.py'}"),
            }
        ]
    }
    (evals / ".agentv" / "targets.yaml").write_text(json.dumps(targets))
    (evals / name).write_text(eval_text)
    return evals


# Characters YAML does not allow as written (or reads as line breaks): escaped.
_NOT_PRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def as_yaml(document: dict[str, Any]) -> str:
    """`document` as YAML: JSON, with the characters YAML does not take as written escaped."""
    text = json.dumps(document, ensure_ascii=False)
    return _NOT_PRINTABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def received(evals: Path) -> list[dict[str, Any]]:
    """What the agent got, one record per call, the hex turned back into bytes."""
    path = evals / "received.jsonl"
    if not path.exists():
        return []
    records = []
    for line in path.read_text().splitlines():
        raw = json.loads(line)
        records.append(
            {
                "argv": [bytes.fromhex(a) for a in raw["argv"]],
                "prompt_file": bytes.fromhex(raw["prompt_file"]),
                "env_eval_id": bytes.fromhex(raw["env_eval_id"]),
            }
        )
    return records


def hook_calls(evals: Path) -> list[list[bytes]]:
    path = evals / "hooks.jsonl"
    if not path.exists():
        return []
    return [[bytes.fromhex(a) for a in json.loads(line)] for line in path.read_text().splitlines()]


def run_env(tmp_path: Path) -> dict[str, str]:
    """The CLI's environment: the caller's, with a plain TMPDIR of the test's own."""
    temp = tmp_path / "tmp"
    temp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(temp), "NO_COLOR": "1"}


def created(root: Path, name: str) -> list[Path]:
    """Every file called `name` under `root` and in the temporary directories the run used."""
    return list(root.rglob(name))
