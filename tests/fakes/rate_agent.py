"""A `cli` agent with a pass rate per test: `python rate_agent.py {PROMPT} {ATTEMPT} {OUTPUT_FILE}`.

The prompt holds `id=<name> p=<rate>`; `AGENT_RATES` (the environment, `name=rate,...`) overrides
the rate of a test without changing its definition: a code change that makes a test flakier. The
answer is `PASS` with that probability, else `FAIL`, drawn from `AGENT_SEED`, the prompt and the
attempt, so a run is reproducible and each attempt is its own sample. Each call appends the
attempt to `AGENT_LOG` when set (what was really sent, not read from a cache).

The suites run it hundreds of times a session, so it imports little (no `re`, no `pathlib`: ~40% of
its start-up); run it with `-S` (no site-packages to scan).
"""

from __future__ import annotations

import os
import random
import sys


def passes(seed: str, prompt: str, attempt: str = "0", rates: str = "") -> bool:
    """Whether this attempt answers PASS (tests import it to know what a seed will do)."""
    fields = dict(word.split("=", 1) for word in prompt.split() if word.startswith(("id=", "p=")))
    overrides = dict(pair.split("=", 1) for pair in rates.split(",") if "=" in pair)
    rate = float(overrides.get(fields.get("id", ""), fields.get("p", "1")))
    return random.Random(f"{seed}|{prompt}|{attempt}").random() < rate


def main() -> None:
    prompt, attempt, output = sys.argv[1], sys.argv[2], sys.argv[3]
    ok = passes(os.environ.get("AGENT_SEED", ""), prompt, attempt, os.environ.get("AGENT_RATES", ""))
    log = os.environ.get("AGENT_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(f"{prompt.split()[0]} {attempt}\n")
    with open(output, "w", encoding="utf-8") as handle:
        handle.write("PASS" if ok else "FAIL")


if __name__ == "__main__":
    main()
