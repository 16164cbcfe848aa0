"""A stochastic `cli` agent: `python stochastic_agent.py {PROMPT} {ATTEMPT} {OUTPUT_FILE}`.

The prompt holds `p=<rate>` (default 1): the answer is `PASS` with that probability, else `FAIL`.
The draw is seeded by `AGENT_SEED` (the environment), the prompt and the attempt, so a run is
reproducible and another seed is another sample. `AGENT_BROKEN` (comma-separated words of the
prompt, e.g. `id=always`) makes the prompts holding one of them always answer `FAIL`: a code change
that breaks a test without changing its definition.

The suites run it hundreds of times a session, so it imports little (no `re`, no `pathlib`: ~40% of
its start-up) and runs with `-S` (no site-packages to scan).
"""

from __future__ import annotations

import os
import random
import sys

# `.agentv/targets.yaml` running this agent as the `default` cli target (tests write it as is)
TARGETS_YAML = f"""\
targets:
  - name: default
    provider: cli
    command: {sys.executable} -S {os.path.realpath(__file__)} {{PROMPT}} {{ATTEMPT}} {{OUTPUT_FILE}}
    env:
      AGENT_SEED: ${{{{ AGENT_SEED }}}}
      AGENT_BROKEN: ${{{{ AGENT_BROKEN }}}}
"""


def passes(seed: str, prompt: str, attempt: str = "0", broken: str = "") -> bool:
    """Whether this attempt answers PASS (tests import it to know what a seed will do)."""
    if any(word and word in prompt.split() for word in broken.split(",")):
        return False
    rate = 1.0
    for word in prompt.split():
        if word.startswith("p="):  # the first `p=<rate>` word
            rate = float(word[2:])
            break
    return random.Random(f"{seed}|{prompt}|{attempt}").random() < rate


def main() -> None:
    prompt, attempt, output = sys.argv[1], sys.argv[2], sys.argv[3]
    ok = passes(os.environ.get("AGENT_SEED", ""), prompt, attempt, os.environ.get("AGENT_BROKEN", ""))
    with open(output, "w", encoding="utf-8") as handle:
        handle.write("PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
