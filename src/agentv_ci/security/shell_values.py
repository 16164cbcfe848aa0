"""Placeholders in shell command templates: data is never code, runner-made paths work anywhere.

Two kinds of placeholder fill the commands of `cli` targets and workspace hooks:

- **data** (a prompt, a test id, input file names, case metadata, a model's earlier answer): the
  value goes in an environment variable of the child and the placeholder becomes `"$VAR"`, which
  the shell expands to exactly that value, as one word, without reading it again. No quoting of the
  value is involved, so no value can end a quote. Where that expansion would not be a plain word
  (inside quotes, a nested `sh -c` string, ...; security/shell_words.py) the template is refused:
  `problems` says where, and `validate` and `run` report it before anything runs.
- **runner-made paths** (`{OUTPUT_FILE}`, `{PROMPT_FILE}`, `{{workspace_path}}`) and numbers
  (`{ATTEMPT}`) are substituted as written, so they work inside quotes and nested shells too. They
  are built from safe parts only (`plain_path`): no quote, `$`, backtick, space or other character
  a shell treats specially can be in them, or the run refuses to use them.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentv_ci.security.shell_words import Placeholder, scan

# Characters a POSIX shell reads literally anywhere in a word, quoted or not.
_PLAIN_PATH = re.compile(r"/[A-Za-z0-9_./+@%:,-]*")


class UnsafePathError(ValueError):
    """A path the runner made (or was given for a workspace) is not plain enough for a shell."""


def plain_path(path: str | Path, what: str) -> str:
    """`path` as text, when it is absolute and made of characters no shell treats specially."""
    text = str(path)
    if not _PLAIN_PATH.fullmatch(text):
        raise UnsafePathError(
            f"{what} {text!r} holds characters a shell treats specially; commands could not use it "
            "safely (set TMPDIR to a plain path: letters, digits and `/._-`)"
        )
    return text


def plain_temp_dir(prefix: str) -> Path:
    """A new temporary directory whose path is plain (`plain_path`); `prefix` must be plain too."""
    base = plain_path(tempfile.gettempdir(), "the temporary directory")
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    plain_path(path, "the temporary directory")  # mkdtemp adds [a-z0-9_] only
    return path


@dataclass(frozen=True)
class CommandProblem:
    """A data placeholder where the shell could run it: the config key it is in, message, hint."""

    key: str
    message: str
    hint: str


@dataclass(frozen=True)
class Expansion:
    """What a data placeholder becomes: `text` (quoted `$VAR` references only) and the variables."""

    text: str
    env: dict[str, str]


def variable(name: str, value: str) -> Expansion:
    """The value of `name`, expanded as one word."""
    return Expansion(f'"${name}"', {name: value})


@dataclass(frozen=True)
class Template:
    """A placeholder syntax (group 1 of `pattern` is the name) and which names hold data."""

    pattern: re.Pattern[str]
    data: frozenset[str]
    runner: frozenset[str]
    shown: str = "{%s}"  # how a placeholder is written, for messages

    def placeholders(self, command: str, *, data_only: bool = False) -> list[Placeholder]:
        """The placeholders of `command`, in order (only the data ones with `data_only`)."""
        names = self.data if data_only else self.data | self.runner
        return [
            Placeholder(m.group(1), m.start(), m.end())
            for m in self.pattern.finditer(command)
            if m.group(1) in names
        ]

    def problems(self, command: str) -> list[Placeholder]:
        """The data placeholders of `command` that do not stand in a plain word."""
        return [p for p in scan(command, self.pattern, self.data, self.runner) if p.where is not None]

    def render(
        self, command: str, data: Mapping[str, Expansion], runner: Mapping[str, str]
    ) -> tuple[str, dict[str, str]]:
        """`command` with every placeholder substituted in one pass (a value's own text is never
        read for placeholders), and the variables the data placeholders it uses need."""
        env: dict[str, str] = {}

        def substitute(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in self.data and name in data:
                env.update(data[name].env)
                return data[name].text
            if name in self.runner and name in runner:
                return runner[name]
            return match.group(0)

        return self.pattern.sub(substitute, command), env

    def describe(self, problem: Placeholder, *, file_hint: str | None = None) -> tuple[str, str]:
        """The message and hint for a placeholder that stands where data could become code."""
        written = self.shown % problem.name
        where = problem.where or ""
        message = (
            f"{written} is {where} (at character {problem.start + 1} of the command): a value from "
            "data is never shell code, and there the shell could run `$(...)` or backticks in it"
        )
        if "quote" in where:
            hint = (
                f"remove the quotes around {written} (it reaches the program as one word, exactly as written)"
            )
        elif "nested" in where:
            hint = f"pass {written} to the inner program as an argument: `sh -c '... \"$1\"' sh {written}`"
        else:
            hint = f"use {written} as a plain argument of the command"
        if file_hint:
            hint += f", or use {file_hint}"
        return message, hint
