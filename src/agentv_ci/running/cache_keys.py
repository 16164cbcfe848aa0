"""What a response-cache key covers: everything that can change an answer (docs/running.md lists it).

A key is the SHA-256 of one canonical MessagePack payload:

- the key format and agentv-ci's version (how requests are built is agentv-ci's own code);
- the target: its plugin class, its converted config and its targets.yaml definition (provider and
  every field: model, base_url/endpoint, temperature, max_tokens, headers, command, cwd, env, args,
  ...), without values whose names say they are secrets (API keys, tokens, `authorization`);
- for a target that runs code (`cli`, the coding agents, any provider with a `command`): the
  content of that code, i.e. every file targets/sources.py names (the `sources:` list, else the
  script the command names, the in-repo modules it imports and the script's directory tree), each
  as its path + SHA-256 (a deleted file drops out of the list, which changes the key too), and
  the targets file it is defined in; for a `cli` command that names no file of the repository
  (`make`, `npm run x`, `python -c ...`), the whole repository instead, less the eval files and
  what `.gitignore` excludes (running/repository_digest.py);
- for such a target, the files the eval file reads (`Suite.dependencies`, as the loader records them
  for selection: the eval file, its prompt and data files, grader scripts, `.env` files looked for),
  by path + SHA-256 (directories by every file below them), less those already keyed as its code;
- the files the run's `select_all_on` globs match (running/watched_files.py), for every target;
- the request: suite, test id, the messages (a file block by its path as written + a digest of the
  file's bytes), the rendered prompt, the attached files (path + digest) and the attempt number;
- the test's workspace: its definition (hooks, env, repos, isolation, ...), the content of its
  template (every file's path + digest, `.git` excluded as the copy excludes it) and, for each repo,
  the commit checked out in the workspace (the SHA, whatever branch or tag `commit` names), and the
  files its setup hooks (`before_all`, `before_each`) run (loading/command_paths.py), path + digest.

A grader call's key (`judge_key`: an llm-grader's, a code grader's through its proxy) covers, under
a format of its own: the grader target as above (model, parameters, code), the request it gets (the
system prompt and messages, the whole rendered prompt with the answer in it, the grader's own
`target` and `temperature`), the answer it grades (suite, test id, eval target, attempt) and how
many times the same request was asked before while grading it (a retry after an unreadable reply is
a request of its own), plus the eval file's reads for a grader target that runs code, and the
`select_all_on` files.

Paths are hashed relative to the working directory when below it, so a baseline re-run in another
worktree of the same repository finds the answers of unchanged code.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from agentv_ci import __version__
from agentv_ci.loading.command_paths import command_files
from agentv_ci.model.suite import Message
from agentv_ci.model.workspace import SETUP_HOOKS, WorkspaceSpec
from agentv_ci.plugins import TargetRequest
from agentv_ci.running.repository_digest import repository_digest
from agentv_ci.security.redaction import is_secret_name
from agentv_ci.targets.config import TargetDefinition, TargetsConfig
from agentv_ci.targets.environment import find_repo_root
from agentv_ci.targets.sources import TargetSources, sources_root, target_sources

if TYPE_CHECKING:
    from agentv_ci.targets.grader_caller import JudgeAsk
    from agentv_ci.targets.sources import TargetSources

__all__ = ["CacheKeys", "TargetPart", "tree_digest"]

# Part of every key: bump it when what a key covers changes (old entries are then never read).
_FORMAT = "agentv-ci/response-cache/3"
_JUDGE_FORMAT = "agentv-ci/judge-reply/1"
_ENCODER = msgspec.msgpack.Encoder(order="sorted", enc_hook=str)
_SECRET_KEYS = frozenset({"authorization", "proxy_authorization", "cookie", "cookies", "credentials"})
# Targets whose answer is a function of the request: model APIs, the mock, a replay.
_REQUEST_ONLY_MODULES = frozenset(
    f"agentv_ci.targets.{name}" for name in ("openai", "anthropic", "gemini", "openrouter", "mock", "replay")
)


def _is_secret(key: Any) -> bool:
    name = str(key).replace("-", "_")
    return is_secret_name(name) or name.lower() in _SECRET_KEYS


def without_secrets(value: Any) -> Any:
    """`value` (builtins) with every mapping entry whose key names a secret left out, at any depth."""
    if isinstance(value, dict):
        return {k: without_secrets(v) for k, v in value.items() if not _is_secret(k)}
    if isinstance(value, list | tuple):
        return [without_secrets(v) for v in value]
    return value


def portable(path: str | Path) -> str:
    """`path` relative to the working directory (POSIX) when below it, else absolute."""
    absolute = os.path.abspath(path)
    try:
        relative = Path(absolute).relative_to(Path.cwd())
    except ValueError:
        return Path(absolute).as_posix()
    return relative.as_posix()


def file_digest(path: str | Path) -> str | None:
    """SHA-256 of a file's bytes; None when it cannot be read (the run reports that itself)."""
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None


def tree_digest(root: Path, *, skip: frozenset[str] = frozenset({".git"})) -> str | None:
    """SHA-256 over every entry below `root` (relative path, kind, content digest or link target),
    names in `skip` left out at any depth. None when `root` is not a directory."""
    if not root.is_dir():
        return None
    entries: list[tuple[str, str, str | None]] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in skip)
        here = Path(directory)
        for name in [*subdirs, *files]:
            if name in skip:
                continue
            path = here / name
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                entries.append((relative, "link", os.readlink(path)))
            elif path.is_file():
                entries.append((relative, "file", file_digest(path)))
            elif path.is_dir():
                entries.append((relative, "dir", None))
    entries.sort()
    return hashlib.sha256(_ENCODER.encode(entries)).hexdigest()


def _named_files(fields: dict[str, Any], base_dir: Path) -> list[Path]:
    """Existing files a target's fields name (a replay's `fixtures`, a prompt file), relative to
    where the target resolves paths: their content is part of what it answers."""
    found: list[Path] = []
    for value in fields.values():
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, str) and 0 < len(item) <= 300 and "\n" not in item:
                path = base_dir / item.removeprefix("file://")
                if path.is_file():
                    found.append(path)
    return found


def _is_sha(text: str) -> bool:
    return len(text) == 40 and all(c in "0123456789abcdef" for c in text.lower())


def checked_out_commit(checkout: Path) -> str | None:
    """The commit a workspace repo is checked out at: read from `.git/HEAD` (the workspace detaches
    it), else asked of git (a `mode: static` workspace may have a branch checked out). None when
    there is none to be had."""
    try:
        text = (checkout / ".git" / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        text = ""
    if _is_sha(text):
        return text.lower()
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--verify", "HEAD^{commit}"],
            cwd=checkout,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha.lower() if done.returncode == 0 and _is_sha(sha) else None


class TargetPart(NamedTuple):
    """A target's share of every key, and whether its answer is the request's alone."""

    raw: msgspec.Raw
    name: str
    request_only: bool  # a model API, the mock, a replay: nothing it does touches a workspace
    keyed: frozenset[str] = frozenset()  # the files its code part hashes (portable paths)


class CacheKeys:
    """The keys of one run. Target parts and template digests are computed once per run; file
    digests once per path. `warnings` gets one line per target whose workspace tests are not cached.
    `watch`: the run's `select_all_on` globs (their files key every answer, hashed once per run)."""

    def __init__(self, warnings: list[str] | None = None, *, watch: Sequence[str] = ()) -> None:
        self.warnings = warnings if warnings is not None else []
        self._watch = tuple(watch)
        self._watched: tuple[str | None] | None = None  # computed on the first key
        self._reads: dict[tuple[str, str, frozenset[str]], list[Any]] = {}
        self._uncached: set[str] = set()
        self._targets: dict[int, TargetPart] = {}
        self._files: dict[str, str | None] = {}
        self._templates: dict[str, str | None] = {}
        self._hooks: dict[tuple[str, bytes], list[Any]] = {}
        self._repositories: dict[str, str] = {}

    # ------------------------------------------------------------------ target
    def target_part(self, target: Any, name: str, targets: TargetsConfig | None) -> TargetPart:
        """The target's share of every key: class, config, definition and the code it runs."""
        part = self._targets.get(id(target))
        if part is None:
            request_only = type(target).__module__ in _REQUEST_ONLY_MODULES
            data = self._target(target, name, targets, request_only)
            keyed = frozenset(path for path, _ in data[-1])
            part = TargetPart(msgspec.Raw(_ENCODER.encode(data)), name, request_only, keyed)
            self._targets[id(target)] = part
        return part

    def _target(self, target: Any, name: str, targets: TargetsConfig | None, request_only: bool) -> list[Any]:
        config = getattr(target, "config", None)
        converted = (
            msgspec.to_builtins(config, enc_hook=str) if isinstance(config, msgspec.Struct) else config
        )
        definition: list[Any] = [name]
        code: list[tuple[str, str | None]] = []
        if targets is not None and name in targets.targets:
            resolved = targets.resolve(name)
            definition = [resolved.name, resolved.provider, resolved.fields, resolved.sources]
            sources = self._code(resolved, targets)
            paths = [*sources.all_files(), *_named_files(resolved.fields, targets.base_dir)]
            if not request_only and targets.path is not None:
                paths.append(targets.path)  # the whole file: what else it sets may reach the agent
            code = [(portable(path), self._digest(str(path))) for path in dict.fromkeys(paths)]
            if sources.repository is not None:
                code.append(("<repository>", self._repository(sources.repository)))
                self.warnings.append(
                    f"response cache: target {name!r} runs a command that names no file of the "
                    "repository; its answers are keyed on the whole repository (declare `sources:` "
                    "to key them on its code alone)"
                )
        return [
            type(target).__module__,
            type(target).__qualname__,
            without_secrets(msgspec.to_builtins(converted, enc_hook=str)),
            without_secrets(definition),
            code,
        ]

    @staticmethod
    def _code(definition: TargetDefinition, targets: TargetsConfig) -> TargetSources:
        """The target's code (targets/sources.py); outside a git repository the project directory
        stands for the repository."""

        base_dir = targets.base_dir
        root = find_repo_root(base_dir.resolve())
        if root is None:
            root = sources_root(targets.path) if targets.path is not None else base_dir
        return target_sources(definition, targets_file=targets.path, repo_root=root, base_dir=base_dir)

    def _repository(self, root: Path) -> str:
        """The whole repository's digest, once per run and root."""
        key = str(root)
        if key not in self._repositories:
            self._repositories[key] = repository_digest(root)
        return self._repositories[key]

    # ------------------------------------------------------------------ request
    def key(
        self,
        target: TargetPart,
        request: TargetRequest,
        workspace: WorkspaceSpec | None,
        *,
        reads: Sequence[str] = (),
    ) -> str | None:
        """The request's key; None when the answer cannot be kept: a target that runs code in the
        test's workspace (what it does there, which graders read, cannot be replayed), or a
        workspace repo whose commit is unknown. Such a request is neither read nor written.
        `reads`: the files the eval file reads (`Suite.dependencies`), keyed for code targets."""
        setup = None
        if workspace is not None and request.workspace_path is not None and not target.request_only:
            if target.name not in self._uncached:
                self._uncached.add(target.name)
                self.warnings.append(
                    f"response cache: target {target.name!r} runs in the tests' workspaces; its answers "
                    "there are not cached (what it does to a workspace cannot be replayed)"
                )
            return None
        if workspace is not None:
            setup = self._workspace(workspace, request.workspace_path, request.eval_path.parent)
            if setup is None:
                return None
        payload = _ENCODER.encode(
            (
                _FORMAT,
                __version__,
                target.raw,
                request.test.suite,
                request.test.id,
                self._messages(request.messages),
                request.prompt,
                [(portable(f), self._digest(f)) for f in request.files],
                request.attempt,
                setup,
                None if target.request_only else self._eval_reads(target, request.eval_path, reads),
                self._watched_part(),
            )
        )
        return hashlib.sha256(payload).hexdigest()

    def judge_key(self, judge: TargetPart, ask: JudgeAsk) -> str:
        """A grader call's key (module docstring): never None, a grader call has no workspace."""
        answer, call = ask.answer, ask.call
        payload = _ENCODER.encode(
            (
                _JUDGE_FORMAT,
                __version__,
                judge.raw,
                self._messages(call.messages),
                call.prompt,
                ask.asked.target,
                ask.asked.temperature,
                (answer.suite, answer.test_id, answer.target, answer.attempt),
                ask.occurrence,
                None if judge.request_only else self._eval_reads(judge, answer.eval_path, answer.reads),
                self._watched_part(),
            )
        )
        return hashlib.sha256(payload).hexdigest()

    def _watched_part(self) -> str | None:
        if self._watched is None:
            # lazy: `running.watched_files` loaded only when `_watched_part` runs
            from agentv_ci.running.watched_files import watched_digest

            root = find_repo_root(Path.cwd().absolute()) or Path.cwd().absolute()
            self._watched = (watched_digest(self._watch, root),)
        return self._watched[0]

    def _eval_reads(self, target: TargetPart, eval_path: Path, reads: Sequence[str]) -> list[Any]:
        """The files the eval file reads (directories by every file below them), path + digest, less
        the target's own code part; once per eval file and target."""

        memo = (str(eval_path), target.name, target.keyed)
        if memo not in self._reads:
            paths = [Path(p) for p in reads]
            found = TargetSources("", files=tuple(paths), directories=tuple(p for p in paths if p.is_dir()))
            entries = ((portable(p), str(p)) for p in found.all_files())
            self._reads[memo] = [(name, self._digest(p)) for name, p in entries if name not in target.keyed]
        return self._reads[memo]

    def _messages(self, messages: list[Message]) -> list[Any]:
        out: list[Any] = []
        for message in messages:
            if isinstance(message.content, list):
                message = msgspec.structs.replace(message, content=[self._block(b) for b in message.content])
            out.append(message)
        return out

    def _block(self, block: Any) -> Any:
        if not isinstance(block, dict) or block.get("type") != "file" or "path" not in block:
            return block
        portable_block = {k: v for k, v in block.items() if k != "path"}
        portable_block["sha256"] = self._digest(str(block["path"]))
        return portable_block

    def _digest(self, path: str) -> str | None:
        if path not in self._files:
            self._files[path] = file_digest(path)
        return self._files[path]

    # ------------------------------------------------------------------ workspace
    def _workspace(self, spec: WorkspaceSpec, path: Path | None, eval_dir: Path) -> list[Any] | None:
        template = None
        if spec.template is not None:
            if spec.template not in self._templates:
                self._templates[spec.template] = tree_digest(Path(spec.template))
            template = self._templates[spec.template]
        data = msgspec.to_builtins(spec)
        for field in ("template", "path", "base_dir"):
            if isinstance(data.get(field), str):
                data[field] = portable(data[field])
        for hook in data.get("hooks", {}).values():
            if isinstance(hook.get("cwd"), str):
                hook["cwd"] = portable(hook["cwd"])
        hooks = self._setup_code(spec, eval_dir)
        commits: list[str] = []
        for repo in spec.repos:
            commit = checked_out_commit(path / repo.path) if path is not None else None
            if commit is None:
                return None
            commits.append(commit)
        return [without_secrets(data), template, hooks, commits]

    def _setup_code(self, spec: WorkspaceSpec, eval_dir: Path) -> list[Any]:
        """The files the setup hooks (`before_all`, `before_each`) run, path + digest (a directory
        they name by its tree's digest), in hook order; computed once per run for each workspace."""

        hooks = {name: hook for name, hook in spec.hooks.items() if name in SETUP_HOOKS and hook.command}
        if not hooks or not spec.hooks_enabled:
            return []
        memo = (str(eval_dir), msgspec.json.encode(hooks))
        if memo not in self._hooks:
            found: list[Any] = []
            for name in sorted(hooks):
                hook = hooks[name]
                assert hook.command is not None
                cwd = Path(hook.cwd or spec.base_dir or eval_dir).absolute()
                root = find_repo_root(cwd) or cwd
                for path in command_files(hook.command, cwd, root).files:
                    digest = tree_digest(path) if path.is_dir() else self._digest(str(path))
                    found.append((name, portable(path), digest))
            self._hooks[memo] = found
        return self._hooks[memo]
