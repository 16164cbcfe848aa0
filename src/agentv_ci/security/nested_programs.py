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
# name, short option letters whose argument is code, long options whose argument is code, options
# that take an argument that is not code
_INTERPRETERS: tuple[tuple[re.Pattern[str], str, tuple[str, ...], tuple[str, ...]], ...] = (
    (re.compile("|".join(sorted(SHELLS))), "c", (), ("-o", "+o", "-O", "+O")),
    (re.compile(r"(?:python|pypy)[0-9.]*"), "c", (), ("-W", "-X")),
    (re.compile(r"nodejs|node|bun"), "ep", ("--eval", "--print"), ("-r", "--require", "--import")),
    (re.compile(r"perl[0-9.]*"), "eE", (), ()),
    (re.compile(r"ruby[0-9.]*"), "e", (), ("-r", "-I")),
    (re.compile(r"php[0-9.]*"), "r", (), ("-d", "-c")),
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
        rule = next((r for r in _INTERPRETERS if r[0].fullmatch(name)), None)
        index += 1
        if rule is None:
            continue
        _, letters, long_options, with_argument = rule
        is_shell = name in SHELLS
        pending: str | None = None
        while index < len(words):
            word = words[index]
            if pending is not None:
                code[index] = Program(name, pending)
                pending = None
                index += 1
                if is_shell:
                    break  # the words after a shell's -c string are $0, $1, ...: arguments
                continue
            if word in long_options:
                pending = word
            elif word in with_argument:
                index += 1  # the option's argument
            elif word.startswith("--") or word == "-":
                pass
            elif (len(word) > 1 and word[0] == "-") or (is_shell and len(word) > 1 and word[0] == "+"):
                if word[0] == "-" and any(letter in word[1:] for letter in letters):
                    pending = word
            else:
                break  # a script and its arguments: not code
            index += 1
    return code
