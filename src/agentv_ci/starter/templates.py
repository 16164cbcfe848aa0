"""The files `agentv-ci init` writes, as text. Each is valid as written: `validate` and
`run --dry-run` pass on them, a real `run` passes with no key, and the workflow passes zizmor's
default policy (tests/e2e/test_init.py checks all of it).

The Action is pinned by commit SHA with its version in a comment (`uses: agentevals/action@<sha>
# vX.Y.Z`), as zizmor's `unpinned-uses` asks. The commit of a release is made by the release workflow
(the `action` job commits action.yml pinned to the image, on `release/vX.Y.Z`, and moves the major
tag there) after this file was released, so no version of agentv-ci can know its own release's SHA:
unless `--action-sha` gives it, the pin is `PLACEHOLDER_SHA`, forty zeros, which no repository has.
A workflow left with it fails at "Set up job" ("unable to find version"), red, never a quiet green;
`init` says so and prints the command that finds the real commit.
"""

from __future__ import annotations

from string import Template

from agentv_ci import __version__

__all__ = [
    "ACTION_REPOSITORY",
    "ACTION_VERSION",
    "AGENT_SCRIPT",
    "EVAL_FILE",
    "PLACEHOLDER_SHA",
    "TARGETS_FILE",
    "release_commit_command",
    "workflow_file",
]

ACTION_REPOSITORY = "agentevals/action"
ACTION_VERSION = f"v{__version__}"  # the Action release that matches this CLI
PLACEHOLDER_SHA = "0" * 40


def release_commit_command(version: str) -> str:
    """The command that prints the commit of release `version` (the release workflow's branch)."""
    return f"git ls-remote https://github.com/{ACTION_REPOSITORY} refs/heads/release/{version}"


TARGETS_FILE = """\
# Targets: what answers the tests (docs/targets.md). Written by `agentv-ci init`.
targets:
  # What a suite without a target runs.
  - name: default
    use_target: agent

  # Your agent, as a program: it reads the prompt from {PROMPT_FILE} and writes its answer to
  # {OUTPUT_FILE}. `cwd: ..` is the repository root (relative to the eval file's directory, evals/).
  - name: agent
    provider: cli
    command: python3 agent/hello_agent.py {PROMPT_FILE} {OUTPUT_FILE}
    cwd: ..
    timeout_seconds: 60

  # A model, for when you have a key: `agentv-ci run evals/ --target openai`. `base_url` points it
  # at any OpenAI-compatible server (vLLM, Ollama, LiteLLM, ...); the key is read from the
  # environment, never written here.
  - name: openai
    provider: openai
    model: gpt-4o-mini
    api_key: ${{ OPENAI_API_KEY }}
    # base_url: http://127.0.0.1:11434/v1
"""

AGENT_SCRIPT = '''\
"""A stand-in agent written by `agentv-ci init`: replace its `answer` with a call to your own agent.

agentv-ci runs it once per test (the `agent` target in .agentv/targets.yaml):
    python3 agent/hello_agent.py PROMPT_FILE OUTPUT_FILE
It reads the prompt from PROMPT_FILE and writes the answer to OUTPUT_FILE as JSON
(`text`, and `cost_usd`: what the answer cost, nothing for this script).
"""

import json
import re
import sys


def answer(prompt: str) -> str:
    match = re.search(r"greet (\\w+)", prompt, re.IGNORECASE)
    name = match.group(1) if match else "world"
    return f"Hello, {name}!"


def main() -> int:
    prompt_file, output_file = sys.argv[1], sys.argv[2]
    with open(prompt_file, encoding="utf-8") as handle:
        prompt = handle.read()
    with open(output_file, "w", encoding="utf-8") as handle:
        json.dump({"text": answer(prompt), "cost_usd": 0}, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

EVAL_FILE = """\
# An example eval written by `agentv-ci init` (docs/getting-started.md walks through it).
# Each test sends `input` to the target and grades the answer; a test passes at a score of 0.8.
name: hello
description: The agent greets people by name.
execution:
  target: agent   # the cli target in .agentv/targets.yaml (`--target openai` asks the model instead)
  threshold: 0.8
tests:
  - id: greets-by-name
    input: Greet Ada.
    expected_output: Hello, Ada!
    assertions:
      - type: contains
        value: Ada
      - type: starts-with
        value: Hello

  - id: greets-the-world
    input: Say hello to everyone.
    assertions:
      - type: equals
        value: Hello, world!
"""

_WORKFLOW = Template("""\
# Written by `agentv-ci init`: on each pull request, runs the evals its changes can affect, gates the
# merge, and keeps one comment on the PR with the scores (docs/github.md).
name: agentv-ci
on:
  pull_request:
permissions: {}
concurrency:
  group: agentv-ci-$${{ github.event.pull_request.number }}
  cancel-in-progress: true
jobs:
  evals:
    name: evals
    runs-on: ubuntu-latest
    timeout-minutes: 30
    permissions:
      contents: read
      pull-requests: write # the PR comment
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          fetch-depth: 0 # selection diffs against the merge-base
          persist-credentials: false
      $note
      - uses: $repository@$sha # $version
        with:
          paths: evals
          baseline_ref: merge-base # re-run the affected evals at the merge-base and diff
          max_regression: "0.1"
        env:
          OPENAI_API_KEY: $${{ secrets.OPENAI_API_KEY }} # for the `openai` target; the example needs none
""")


def workflow_file(sha: str, version: str) -> str:
    """The workflow, pinned to `sha` (`PLACEHOLDER_SHA` gets a comment saying how to replace it)."""
    if sha == PLACEHOLDER_SHA:
        note = (
            f"# Replace the zeros with the commit of {ACTION_REPOSITORY} release {version}:\n"
            f"      #   {release_commit_command(version)}"
        )
    else:
        note = f"# {ACTION_REPOSITORY} {version}, pinned by commit: update the SHA and the comment together."
    return _WORKFLOW.substitute(note=note, repository=ACTION_REPOSITORY, sha=sha, version=version)
