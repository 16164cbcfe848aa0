"""Which files of the repository a command runs: the script it names, a `python -m` module, the
scripts named inside `sh -c "..."` / `bash -c '...'` strings, and the in-repo Python modules those
scripts import (followed through `import` statements, bounded).

    found = command_files(["sh", "-c", "cd checks && python3 -m grade"], cwd=evals, repo_root=repo)
    found.scripts   # (repo/evals/checks/grade.py,)
    found.imports   # modules of the repository it imports, transitively

Used for change-based selection (a code grader, a cli agent) and for the response cache key (the
code a target runs). Only paths inside `repo_root` are returned; a script that is named but missing
is returned too (a deleted agent script is still the agent's code).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentv_ci.loading.paths import safe_resolve
from agentv_ci.loading.python_imports import (
    MAX_DEPTH,
    SKIPPED_PARTS,
    package_inits,
    python_imports,
    python_imports_of_source,
    read_small,
)

__all__ = [
    "CommandFiles",
    "command_files",
    "looks_like_script",
    "script_position",
    "shell_segments",
]

SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh", ".rb", ".pl")
# Words between an interpreter and its script (`uv run x.py`, `npx tsx x.ts`, `bun run x.ts`).
RUNNER_WORDS = frozenset({"run", "exec", "tsx", "ts-node", "node", "python", "python3", "bun", "deno", "x"})
# Interpreter flags after which the next word is code or a module, not a script file.
CODE_FLAGS = frozenset({"-c", "-m", "-e", "--eval", "-p", "--print"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"})
# Commands that run the rest of their arguments as a command (`env X=1 python3 x.py`).
WRAPPERS = frozenset({"env", "exec", "command", "nohup", "nice", "time", "stdbuf", "xargs", "timeout"})
# Programs that run repository code they do not name: task runners and package managers (`make`,
# `npm run`), and interpreters given inline code (`python -c`, `node -e`) or a module/entry point.
TASK_RUNNERS = frozenset(
    {"make", "gmake", "just", "task", "npm", "npx", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno",
     "uv", "uvx", "poetry", "pdm", "hatch", "pipenv", "tox", "nox", "invoke", "cargo", "go", "gradle",
     "gradlew", "mvn", "rake", "bundle", "node", "tsx", "ts-node", "ruby", "perl", "php"}
)  # fmt: skip
_PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$")
_PYTHON_ARG_FLAGS = frozenset({"-W", "-X", "-Q"})  # python flags that take the next word
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", ";;", "|&"})
_REDIRECTS = frozenset({">", ">>", "&>", ">&", "2>", "<"})


def looks_like_script(arg: str) -> bool:
    return arg.startswith(("./", "../")) or (arg.endswith(SCRIPT_SUFFIXES) and not arg.startswith("-"))


def script_position(argv: list[str]) -> int | None:
    """Which argument of a command is the script it runs: the program itself when it is a path
    relative to the eval file (`./check.sh`), else the first word after the interpreter and its
    options (`node x.mjs --out ../dir`: `x.mjs`; `uv run check.py`: `check.py`). None for inline
    code (`python -c ...`) or when nothing there looks like a script. Later arguments are data,
    never checked as scripts."""
    if not argv:
        return None
    if argv[0].startswith(("./", "../")) or argv[0].endswith(SCRIPT_SUFFIXES):
        return 0  # a program written next to the eval file (an absolute path is an installed one)
    for index in range(1, len(argv)):
        arg = argv[index]
        if arg in CODE_FLAGS:
            return None
        if arg.startswith("-") or arg in RUNNER_WORDS:
            continue
        return index if looks_like_script(arg) else None
    return None


def _is_redirect(token: str) -> bool:
    return token.endswith(">") and set(token) <= set("0123456789>&")


def shell_segments(text: str) -> list[list[str]]:
    """A shell command line as its simple commands (split at `;`, `&&`, `||`, `|`, `&`, newlines and
    parentheses), each as words; a redirection's target is dropped. Unparseable text gives []."""
    segments: list[list[str]] = []
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        skip_next = False
        try:
            for token in lexer:
                if token in _OPERATORS:
                    if current:
                        segments.append(current)
                    current = []
                elif token in _REDIRECTS or _is_redirect(token):
                    if current and current[-1].isdigit():
                        current.pop()  # the descriptor of `2>&1`, `2> err.txt`
                    skip_next = token != "<"
                elif skip_next:
                    skip_next = False
                else:
                    current.append(token)
        except ValueError:
            return []
        if current:
            segments.append(current)
    return segments


@dataclass(frozen=True)
class CommandFiles:
    """The repository files a command runs (absolute paths, each inside the repository)."""

    scripts: tuple[Path, ...] = ()  # the programs it runs: scripts, `-m` modules (existing or not)
    imports: tuple[Path, ...] = ()  # in-repo Python modules those import, transitively
    arguments: tuple[Path, ...] = ()  # other existing files or directories the command names
    # It runs repository code it does not name: no script at all, inline code (`python -c`), or a
    # task runner or interpreter without a script (`make`, `npm run x`, `node -e`, `uv run tool`).
    unnamed_code: bool = False

    @property
    def files(self) -> tuple[Path, ...]:
        return tuple(dict.fromkeys((*self.scripts, *self.imports, *self.arguments)))


@dataclass
class _Collector:
    repo_root: Path
    scripts: dict[Path, None] = field(default_factory=dict)
    imports: dict[Path, None] = field(default_factory=dict)
    arguments: dict[Path, None] = field(default_factory=dict)
    python_entries: list[tuple[Path, tuple[Path, ...]]] = field(default_factory=list)
    seen_scripts: set[Path] = field(default_factory=set)
    unnamed_code: bool = False

    def __post_init__(self) -> None:
        self.root = safe_resolve(self.repo_root)
        self._prefix = str(self.root).rstrip(os.sep) + os.sep

    def inside(self, path: Path) -> Path | None:
        """`path` made absolute, when it lies in the repository (outside any skipped directory).
        Without `..` and symlinks (the common case) no `realpath` is needed."""
        plain = os.path.normpath(os.path.abspath(path))
        if plain.startswith(self._prefix) and not os.path.islink(plain):
            resolved = Path(plain)
        else:
            resolved = safe_resolve(path)
        root = self.root
        if resolved != root and root not in resolved.parents:
            return None
        if SKIPPED_PARTS.intersection(resolved.relative_to(root).parts):
            return None
        return resolved

    def roots(self, first: Path) -> tuple[Path, ...]:
        """Where a program whose `sys.path[0]` is `first` finds absolute imports in the repository."""
        return tuple(dict.fromkeys((first, self.repo_root, self.repo_root / "src")))

    def add_script(self, path: Path, depth: int) -> None:
        found = self.inside(path)
        if found is None or found.is_dir():
            return
        self.scripts[found] = None
        if found in self.seen_scripts or not found.is_file():
            return
        self.seen_scripts.add(found)
        if found.suffix == ".py" or (found.suffix == "" and _has_python_shebang(found)):
            self.python_entries.append((found, self.roots(found.parent)))
        elif found.suffix == ".sh" or (found.suffix == "" and _has_shell_shebang(found)):
            text = read_small(found)
            if text is not None and depth < MAX_DEPTH:
                # Its commands run in the caller's directory; names relative to the script's own
                # directory are tried too (`"$(dirname "$0")/agent.py"` is common).
                self.shell(text, found.parent, depth + 1)

    def locate(self, word: str, cwd: Path) -> Path:
        """A script named relative to `cwd`; when it is not there, the same name from the repository
        root (a directory the command may not really run in: counting it errs towards running)."""
        path = cwd / word
        if not path.exists() and not Path(word).is_absolute() and (self.repo_root / word).is_file():
            return self.repo_root / word
        return path

    def add_argument(self, path: Path) -> None:
        found = self.inside(path)
        if found is not None and found.exists() and found != self.root:
            self.arguments[found] = None

    def module(self, name: str, cwd: Path) -> None:
        """`python -m name` run in `cwd`: the module file, or the package's `__main__.py`."""
        parts = [p for p in name.split(".") if p]
        if not parts or not all(p.isidentifier() for p in parts):
            return
        roots = self.roots(cwd)
        for root in roots:
            target = root.joinpath(*parts)
            for candidate in (target.with_suffix(".py"), target / "__main__.py"):
                if candidate.is_file() and self.inside(candidate) is not None:
                    packages = parts if candidate.name == "__main__.py" else parts[:-1]
                    for package in package_inits(root, packages):
                        if package.is_file():
                            self.add_import(package)
                    self.add_script(candidate, MAX_DEPTH)
                    self.python_entries.append((safe_resolve(candidate), roots))
                    return
        self.add_script(cwd.joinpath(*parts).with_suffix(".py"), MAX_DEPTH)  # missing: still its name

    def add_import(self, path: Path) -> None:
        found = self.inside(path)
        if found is not None:
            self.imports[found] = None

    def inline_python(self, code: str, cwd: Path) -> None:
        """`python -c CODE`: the modules it imports, found from `cwd` (its `sys.path[0]`)."""
        for found in python_imports_of_source(code, None, self.roots(cwd), self.repo_root):
            self.add_import(found)
            self.python_entries.append((found, self.roots(cwd)))

    def argv(self, argv: list[str], cwd: Path, depth: int) -> Path:
        """One simple command; returns the directory later commands run in (after a `cd`)."""
        words = _strip_wrappers(argv)
        if not words:
            return cwd
        program = os.path.basename(words[0])
        if program == "cd":
            if len(words) > 1 and not any(ch in words[1] for ch in "$`~"):
                return cwd / words[1]
            return cwd
        if program in SHELLS:
            self.shell_command(words, cwd, depth)
            return cwd
        named = len(self.scripts)
        start = next((i for i, w in enumerate(words[:4]) if _PYTHON.match(os.path.basename(w))), None)
        if start is not None:
            self.python(words[start + 1 :], cwd)
        else:
            position = script_position(words)
            if position is not None and _usable(words[position]):
                self.add_script(self.locate(words[position], cwd), depth)
        runner = start is not None or program in TASK_RUNNERS
        if runner and len(self.scripts) == named:
            self.unnamed_code = True  # `make`, `npm run x`, `python -c ...`: code found by name only
        for word in words[1:]:
            if _usable(word) and ("/" in word or word.endswith(SCRIPT_SUFFIXES)):
                self.add_argument(cwd / word)
        return cwd

    def shell_command(self, words: list[str], cwd: Path, depth: int) -> None:
        index = 1
        while index < len(words):
            word = words[index]
            if word in ("-o", "+o"):
                index += 2
                continue
            if word.startswith("-") and word != "--" and "c" in word[1:] and not word.startswith("--"):
                if index + 1 < len(words) and depth < MAX_DEPTH:
                    self.shell(words[index + 1], cwd, depth + 1)
                return
            if word.startswith(("-", "+")):
                index += 1
                continue
            if _usable(word):
                self.add_script(self.locate(word, cwd), depth)  # `sh run.sh`, `bash ./agent.sh`
            return

    def python(self, args: list[str], cwd: Path) -> None:
        index = 0
        while index < len(args):
            arg = args[index]
            if arg == "-m" or (arg.startswith("-m") and len(arg) > 2 and not arg.startswith("--")):
                name = arg[2:] if len(arg) > 2 else (args[index + 1] if index + 1 < len(args) else "")
                if _usable(name):
                    self.module(name, cwd)
                return
            if arg == "-c":
                if index + 1 < len(args):
                    self.inline_python(args[index + 1], cwd)
                return
            if arg in _PYTHON_ARG_FLAGS:
                index += 2
                continue
            if arg.startswith("-"):
                index += 1
                continue
            if _usable(arg):
                self.add_script(self.locate(arg, cwd), MAX_DEPTH)
            return

    def shell(self, text: str, cwd: Path, depth: int) -> None:
        here = cwd
        for segment in shell_segments(text):
            here = self.argv(segment, here, depth)

    def follow_imports(self) -> None:
        for path in python_imports(self.python_entries, self.repo_root):
            self.add_import(path)


def _usable(word: str) -> bool:
    """A word that can name a file as written (no placeholder, variable or glob to expand)."""
    return bool(word) and not any(ch in word for ch in "{}$*?`") and not word.startswith("-")


def _strip_wrappers(argv: list[str]) -> list[str]:
    words = list(argv)
    while words and _ASSIGNMENT.match(words[0]):
        words.pop(0)
    while words and os.path.basename(words[0]) in WRAPPERS:
        wrapper = os.path.basename(words.pop(0))
        while words and (words[0].startswith("-") or _ASSIGNMENT.match(words[0])):
            flag = words.pop(0)
            takes_value = flag in ("-n", "-s", "-k", "-i", "-o", "-e")
            if wrapper in ("nice", "timeout", "stdbuf") and takes_value and words:
                words.pop(0)
        if wrapper == "timeout" and words:
            words.pop(0)  # the duration
    return words


def _first_line(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.readline(200).decode("utf-8", "replace")
    except OSError:
        return ""


def _has_python_shebang(path: Path) -> bool:
    line = _first_line(path)
    return line.startswith("#!") and "python" in line


def _has_shell_shebang(path: Path) -> bool:
    line = _first_line(path)
    return line.startswith("#!") and any(line.rstrip().endswith(shell) for shell in SHELLS)


_MEMO: dict[tuple[str | tuple[str, ...], Path, Path], CommandFiles] | None = None


@contextmanager
def remembered() -> Iterator[None]:
    """Within the block, `command_files` answers each (command, cwd, repository) once: selection
    loads thousands of eval files sharing a few grader commands, and reads files that do not change
    while it runs."""
    global _MEMO
    outer = _MEMO
    _MEMO = {} if outer is None else outer
    try:
        yield
    finally:
        _MEMO = outer


def command_files(command: list[str] | str, cwd: Path, repo_root: Path) -> CommandFiles:
    """The repository files `command` runs in `cwd`: an argv list (run as is) or a string (run by the
    shell). Scripts it names (through interpreters, `uv run`, `sh -c`/`bash -c` strings, shell
    scripts it calls, `cd DIR && ...`), `python -m` modules (from `cwd`, the repo root or `src/`),
    the in-repo modules those Python files import, and the other existing paths it names."""
    key = (command if isinstance(command, str) else tuple(command), cwd, repo_root)
    if _MEMO is not None and key in _MEMO:
        return _MEMO[key]
    collector = _Collector(repo_root=repo_root)
    if isinstance(command, str):
        collector.shell(command, cwd, 0)
    else:
        collector.argv([str(word) for word in command], cwd, 0)
    collector.follow_imports()
    scripts = tuple(collector.scripts)
    imports = tuple(p for p in collector.imports if p not in collector.scripts)
    arguments = tuple(
        p for p in collector.arguments if p not in collector.scripts and p not in collector.imports
    )
    unnamed = collector.unnamed_code or not scripts
    found = CommandFiles(scripts=scripts, imports=imports, arguments=arguments, unnamed_code=unnamed)
    if _MEMO is not None:
        _MEMO[key] = found
    return found
