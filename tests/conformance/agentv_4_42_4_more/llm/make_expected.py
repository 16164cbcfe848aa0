"""Run the reference CLI on this directory against the scripted judge and write the expected rows and
judge requests. Usage (from the repository root, Node + agentv@4.42.4 installed):

    python tests/conformance/agentv_4_42_4_more/llm/make_expected.py /path/to/agentv
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[3]))
sys.path.insert(0, str(HERE))

from judge import respond  # noqa: E402

from tests.fakes.llm_server import FakeLlmServer  # noqa: E402


def main() -> None:
    agentv = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp, FakeLlmServer(lambda call: respond(call.body)) as server:
        work = Path(tmp) / "llm"
        shutil.copytree(HERE, work)
        subprocess.run(["git", "init", "-q"], cwd=work, check=True)
        env = {**os.environ, "LLM_API_KEY": "k", "LLM_MODEL": "gpt-fake", "LLM_BASE_URL": server.base_url}
        subprocess.run([agentv, "eval", "judge.eval.yaml", "-o", "out"], cwd=work, env=env, check=False)
        rows = subprocess.run(
            [sys.executable, str(HERE.parent / "make_expected.py"), str(work / "out" / "index.jsonl")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (HERE / "expected-agentv-4.42.4.jsonl").write_text(rows, encoding="utf-8")
        calls = sorted(json.dumps(c.body["messages"], ensure_ascii=False) for c in server.calls)
        (HERE / "expected-calls.jsonl").write_text("".join(c + "\n" for c in calls), encoding="utf-8")


if __name__ == "__main__":
    main()
