"""Where each placeholder of a shell command template stands, as the shell will read it.

A value that comes from data (a prompt, a test id, a file name, a model's earlier answer) is
substituted as a quoted variable expansion (`"$AGENTV_PROMPT"`, security/shell_values.py): the shell
expands it to exactly one word and never reads it again as code. That holds only where the
placeholder stands in a plain word of the command. `scan` finds every placeholder and, for those
named in `data`, says why one stands somewhere else:

- inside quotes (`'...'`, `"..."`, `$'...'`), backticks, `${...}`, a here-document, or right after
  `$` or a backslash, where the expansion would be changed or read again;
- in a program the command runs as code: the `-c` string of a nested shell (`sh -c "..."`, also
  after `env`, `xargs`, `timeout`...), the code of `python -c`, `node -e`, `perl -e`, `ruby -e`,
  `php -r`, the program of `awk`/`sed` (security/nested_programs.py), the arguments of `eval`,
  `trap`, `.` and `source`, arithmetic (`$((...))`, `((...))`, `let`, `[[ ... -eq ... ]]`);
- as the command name (the data would choose the program).

Anything the scanner does not understand counts as unsafe: a placeholder it did not reach is
reported too. security/nested_programs.py finds the code strings of nested programs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from agentv_ci.security.nested_programs import code_arguments

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_BREAKS = " \t\n;&|()<>"
# Words before a simple command's name that leave the next word the command: reserved words,
# and builtins that run the command after them (`command eval X` is `eval X`).
_RESERVED = frozenset({"!", "{", "if", "then", "else", "elif", "while", "until", "do"})
_PREFIXES = frozenset({"command", "builtin", "exec", "time"})
# bash reads a value assigned with `-i` as arithmetic and with `-a`/`-A` as a compound assignment.
_DECLARATIONS = frozenset({"declare", "typeset", "local", "export", "readonly"})
UNREAD = "where agentv-ci cannot tell how the shell reads it"


@dataclass
class Placeholder:
    """One placeholder of a template: `where` is None in a plain word, else why it is unsafe there."""

    name: str
    start: int
    end: int
    where: str | None = None


@dataclass
class _Word:
    start: int
    end: int = 0
    literal: str = ""  # the text with quotes removed, as far as the scanner follows it


class _Scanner:
    def __init__(
        self, text: str, pattern: re.Pattern[str], data: frozenset[str], known: frozenset[str]
    ) -> None:
        self.text = text
        self.data = data
        self.matches = {m.start(): m for m in pattern.finditer(text) if m.group(1) in known}
        self.found: list[Placeholder] = []
        self.i = 0
        self.heredocs: list[tuple[str, bool]] = []  # delimiter, `<<-` (leading tabs stripped)

    # ------------------------------------------------------------------ placeholders
    def placeholder(self, where: str | None) -> bool:
        """Record the placeholder starting here (if any) and step over it."""
        match = self.matches.get(self.i)
        if match is None:
            return False
        self.found.append(Placeholder(match.group(1), match.start(), match.end(), where))
        self.i = match.end()
        return True

    def mark(self, start: int, end: int, why: str, *, override: bool) -> None:
        for found in self.found:
            if found.name in self.data and start <= found.start < end and (override or found.where is None):
                found.where = why

    # ------------------------------------------------------------------ command lists
    def commands(self, closer: str | None = None) -> None:
        """A command list, up to `closer` (`)` of `$(`, a subshell, a process substitution)."""
        words: list[_Word] = []
        word: _Word | None = None
        text = self.text
        while self.i < len(text):
            start = self.i
            if self.i in self.matches:
                word = word or _Word(start)
                self.placeholder(None)
                word.literal += text[start : self.i]
                continue
            char = text[self.i]
            if char == closer:
                self.i += 1
                break
            if char in _BREAKS:
                if word is not None:
                    word.end = start
                    words.append(word)
                    word = None
                self.operator(char, words)
                continue
            if char == "#" and word is None:
                while self.i < len(text) and text[self.i] != "\n":
                    if not self.placeholder(None):  # a comment: the expansion is never run
                        self.i += 1
                continue
            word = word or _Word(start)
            word.literal += self.word_part()
        if word is not None:
            word.end = self.i
            words.append(word)
        self.judge(words)

    def operator(self, char: str, words: list[_Word]) -> None:
        text = self.text
        if char in " \t":
            self.i += 1
        elif char == "(" and text.startswith("((", self.i):
            self.judge(words)
            words.clear()
            self.i += 2
            self.balanced("(", ")", 2, "inside an arithmetic command `(( ))`")
        elif char == "(":
            self.judge(words)
            words.clear()
            self.i += 1
            self.commands(")")
        elif char in "<>" and text.startswith("(", self.i + 1):
            self.i += 2
            self.commands(")")  # a process substitution
        elif char == "<" and text.startswith("<<<", self.i):
            self.i += 3
        elif char == "<" and text.startswith("<<", self.i):
            self.i += 2
            strip = text.startswith("-", self.i)
            self.i += strip
            while self.i < len(text) and text[self.i] in " \t":
                self.i += 1
            start = self.i
            delimiter = ""
            while self.i < len(text) and text[self.i] not in _BREAKS:
                if not self.placeholder("in a here-document's delimiter"):
                    delimiter += self.word_part()
            self.mark(start, self.i, "in a here-document's delimiter", override=True)
            self.heredocs.append((delimiter, strip))
        elif char in "<>":
            self.i += 1
            while self.i < len(text) and text[self.i] in "&|>":
                self.i += 1
        else:  # ; & | ) newline: the simple command ends
            self.judge(words)
            words.clear()
            self.i += 1
            if char == "\n" and self.heredocs:
                self.heredoc_bodies()

    def heredoc_bodies(self) -> None:
        pending, self.heredocs = self.heredocs, []
        text = self.text
        for delimiter, strip in pending:
            while self.i < len(text):
                end = text.find("\n", self.i)
                end = len(text) if end < 0 else end
                line = text[self.i : end]
                if (line.lstrip("\t") if strip else line) == delimiter:
                    self.i = end + 1
                    break
                while self.i < end:
                    if not self.placeholder("inside a here-document"):
                        self.i += 1
                self.i = max(self.i, end + 1)

    def judge(self, words: list[_Word]) -> None:
        """The rules about a whole simple command: command name, eval, arithmetic, nested programs."""
        first = 0
        while first < len(words):  # assignments, reserved words and `command`-like prefixes
            literal = words[first].literal
            if _ASSIGNMENT.match(literal) or literal in _RESERVED:
                first += 1
            elif literal in _PREFIXES:
                first += 1
                while first < len(words) and words[first].literal.startswith("-"):
                    first += 1 + (words[first].literal == "-a")  # `exec -a NAME`
            else:
                break
        if first >= len(words):
            return
        command = words[first]
        arguments = words[first + 1 :]
        self.mark(
            command.start, command.end, "as the command name (it would choose the program)", override=False
        )
        name = PurePosixPath(command.literal).name or command.literal
        why = {
            "eval": "an argument of `eval`, which runs it as shell code",
            "let": "an argument of `let` (arithmetic)",
            "trap": "an argument of `trap`, which runs it as shell code",
            ".": "an argument of `.`, which runs the file it names as shell code",
            "source": "an argument of `source`, which runs the file it names as shell code",
        }
        options = "".join(w.literal[1:] for w in arguments if w.literal[:1] in "-+")
        if name in _DECLARATIONS and set(options) & set("aAi"):
            why[name] = f"an argument of `{name}` with an integer or array attribute (bash reads it as code)"
        if name == "[[" and any(w.literal in _ARITHMETIC_TESTS for w in arguments):
            why["[["] = "inside `[[ ... ]]` with an arithmetic comparison"
        if name in why:
            for word in arguments:
                self.mark(word.start, word.end, why[name], override=False)
        literals = [w.literal for w in words[first:]]
        for index, program in code_arguments(literals).items():
            word = words[first + index]
            self.mark(word.start, word.end, f"inside the code string of a nested {program}", override=True)

    # ------------------------------------------------------------------ one word
    def word_part(self) -> str:
        """Consume one piece of a word (a character, an escape, a quoted string, an expansion);
        return its literal text as far as it is known."""
        text = self.text
        char = text[self.i]
        if char == "\\":
            self.i += 1
            if self.placeholder("right after a backslash"):
                return ""
            literal = text[self.i : self.i + 1]
            self.i += 1
            return "" if literal == "\n" else literal
        if char == "'":
            return self.quoted("'", "inside single quotes", escapes=False)
        if char == '"':
            return self.double_quoted()
        if char == "$":
            return self.dollar(quoted=False)
        if char == "`":
            self.backticks()
            return "`...`"
        self.i += 1
        return char

    def quoted(self, close: str, where: str, *, escapes: bool) -> str:
        self.i += 1
        literal = ""
        text = self.text
        while self.i < len(text):
            if self.placeholder(where):
                continue
            char = text[self.i]
            self.i += 1
            if char == close:
                break
            if escapes and char == "\\" and self.i < len(text):
                if self.placeholder(where):
                    continue
                char = text[self.i]
                self.i += 1
            literal += char
        return literal

    def double_quoted(self) -> str:
        self.i += 1
        literal = ""
        text = self.text
        while self.i < len(text):
            if self.placeholder("inside double quotes"):
                continue
            char = text[self.i]
            if char == '"':
                self.i += 1
                break
            if char == "\\":
                self.i += 1
                if self.placeholder("inside double quotes"):
                    continue
                literal += text[self.i : self.i + 1]
                self.i += 1
            elif char == "$":
                literal += self.dollar(quoted=True)
            elif char == "`":
                self.backticks()
            else:
                literal += char
                self.i += 1
        return literal

    def dollar(self, *, quoted: bool) -> str:
        text = self.text
        self.i += 1
        if self.placeholder("right after `$`"):
            return ""
        if text.startswith("((", self.i):
            self.i += 2
            self.balanced("(", ")", 2, "inside an arithmetic expansion `$(( ))`")
        elif text.startswith("(", self.i):
            self.i += 1
            self.commands(")")
        elif text.startswith("{", self.i):
            self.i += 1
            self.balanced("{", "}", 1, "inside a `${...}` expansion")
        elif text.startswith("'", self.i) and not quoted:
            return self.quoted("'", "inside `$'...'` quotes", escapes=True)
        elif text.startswith('"', self.i) and not quoted:
            return self.double_quoted()
        else:
            return "$"
        return "$(...)"

    def balanced(self, open_: str, close: str, depth: int, where: str) -> None:
        text = self.text
        while self.i < len(text) and depth > 0:
            if self.placeholder(where):
                continue
            char = text[self.i]
            depth += (char == open_) - (char == close)
            self.i += 2 if char == "\\" else 1

    def backticks(self) -> None:
        self.i += 1
        text = self.text
        while self.i < len(text):
            if self.placeholder("inside backticks"):
                continue
            char = text[self.i]
            self.i += 2 if char == "\\" else 1
            if char == "`":
                return


def scan(
    template: str, pattern: re.Pattern[str], data: frozenset[str], runner: frozenset[str]
) -> list[Placeholder]:
    """Every placeholder `pattern` matches in `template` (group 1 is its name; only those named in
    `data` or `runner` are placeholders at all, others stay as written), in order, with `where` set
    for the `data` ones that do not stand in a plain word."""
    scanner = _Scanner(template, pattern, data, data | runner)
    scanner.commands()
    reached = {found.start for found in scanner.found}
    for start, match in scanner.matches.items():
        if start not in reached:
            scanner.found.append(Placeholder(match.group(1), start, match.end(), UNREAD))
    for found in scanner.found:
        if found.name not in data:
            found.where = None  # a runner-made value is safe anywhere (shell_values.plain_path)
    return sorted(scanner.found, key=lambda f: f.start)
