"""The words of a command that a program it starts runs as code.

`sh -c CODE`, `bash -lc CODE`, `python3 -c CODE`, `node -e CODE`, `perl -ne CODE`, `ruby -e CODE`,
`php -r CODE`: found anywhere in the words (after `env`, `xargs`, `timeout`, `docker run IMAGE` and
the like too), for an argv as for a simple command of a shell string. A value from data has no
safe place in such a string: in a shell's it may only be a `"$VAR"` expansion standing in a plain
word of that code (security/shell_words.py), in another language's nowhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "busybox", "fish"})
_FILE_OPTIONS = frozenset({"-f", "--file"})  # awk/sed: the program is read from a file


@dataclass(frozen=True)
class _Rule:
    names: re.Pattern[str]
    letters: str  # short options (alone or in a cluster) whose argument is code
    long: tuple[str, ...] = ()  # long options whose argument is code
    with_argument: tuple[str, ...] = ()  # options that take an argument that is not code
    program_operand: bool = False  # the first operand is the program (awk, sed) unless -e/-f gave one


_INTERPRETERS = (
    _Rule(re.compile("|".join(sorted(SHELLS))), "c", with_argument=("-o", "+o", "-O", "+O")),
    _Rule(re.compile(r"(?:python|pypy)[0-9.]*"), "c", with_argument=("-W", "-X")),
    _Rule(re.compile(r"nodejs|node|bun"), "ep", ("--eval", "--print"), ("-r", "--require", "--import")),
    _Rule(re.compile(r"perl[0-9.]*"), "eE"),
    _Rule(re.compile(r"ruby[0-9.]*"), "e", with_argument=("-r", "-I")),
    _Rule(re.compile(r"php[0-9.]*"), "r", with_argument=("-d", "-c")),
    _Rule(re.compile(r"[gmn]?awk"), "e", ("--source",), ("-f", "--file", "-v", "-F"), program_operand=True),
    _Rule(re.compile(r"g?sed"), "e", ("--expression",), ("-f", "--file", "-l"), program_operand=True),
)


@dataclass(frozen=True)
class Program:
    """An interpreter that runs one of a command's words as code: `sh` with `-c`, `python3` with `-c`."""

    name: str
    option: str

    @property
    def is_shell(self) -> bool:
        return self.name in SHELLS

    def __str__(self) -> str:
        return f"`{self.name} {self.option}`"


def code_arguments(words: list[str]) -> dict[int, Program]:
    """The indexes of `words` (an argv, or a simple command's words) that a program they start
    runs as code, each with that program: `sh -c CODE`, `bash -lc CODE`, `python3 -c CODE`,
    `node -e CODE`; `env`, `xargs`, `timeout` and the like before it change nothing."""
    code: dict[int, Program] = {}
    index = 0
    while index < len(words):
        name = PurePosixPath(words[index]).name
        rule = next((r for r in _INTERPRETERS if r.names.fullmatch(name)), None)
        index += 1
        if rule is None:
            continue
        is_shell = name in SHELLS
        pending: str | None = None
        has_program = False
        while index < len(words):
            word = words[index]
            if pending is not None:
                code[index] = Program(name, pending)
                pending, has_program = None, True
                index += 1
                if is_shell:
                    break  # the words after a shell's -c string are $0, $1, ...: arguments
                continue
            if word in rule.long:
                pending = word
            elif word in rule.with_argument:
                has_program = has_program or word in _FILE_OPTIONS
                index += 1  # the option's argument
            elif word.startswith("--") or word == "-":
                pass
            elif (len(word) > 1 and word[0] == "-") or (is_shell and len(word) > 1 and word[0] == "+"):
                if word[0] == "-" and any(letter in word[1:] for letter in rule.letters):
                    pending = word
            else:
                if rule.program_operand and not has_program:
                    code[index] = Program(name, "PROGRAM")
                break  # a script and its arguments: not code
            index += 1
    return code
