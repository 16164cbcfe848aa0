"""`workspace.repos`: clone each repository once into a cache, check it out per workspace, reset it.

As AgentV v4.42.4 (`workspace/repo-manager.ts`): a bare mirror per repository identity under the
cache directory (`$XDG_CACHE_HOME/agentv-ci/git/<sha256>`, fetched once per run), then per workspace
`git clone --no-checkout <mirror> <path>`, `origin` set back to the declared URL, an optional cone
sparse checkout, and a detached checkout of `commit` (or `HEAD`), `ancestor` parents back. A reset
(`fast` / `strict`) of a repository this run cloned is `git reset --hard <that commit>` +
`git clean -fd` / `-fdx`; everything else is reset from a snapshot (snapshots.py).

Git runs with the scrubbed child environment, never prompts, and only over file/git/http(s)/ssh.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import shutil
import tempfile
from pathlib import Path

from agentv_ci.model.workspace import WorkspaceRepo
from agentv_ci.security.child_env import child_environment

GIT_TIMEOUT_S = 300.0
_FULL_SHA = re.compile(r"^[0-9a-f]{40}$", re.IGNORECASE)


class RepoError(Exception):
    """A repository could not be cloned, checked out or reset."""


def git_environment() -> dict[str, str]:
    return child_environment(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": "",
            "GIT_SSH_COMMAND": "ssh -o BatchMode=yes",
            "GIT_ALLOW_PROTOCOL": "file:git:http:https:ssh",
        }
    )


async def git(*args: str, cwd: Path | None = None, timeout_s: float = GIT_TIMEOUT_S) -> str:
    """Run git; its stdout, or `RepoError` with its stderr."""
    try:
        process = await asyncio.create_subprocess_exec(
            "git",
            *args,
            cwd=str(cwd) if cwd else None,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=git_environment(),
            start_new_session=True,
        )
    except OSError as exc:
        raise RepoError(f"cannot run git: {exc}") from None
    try:
        out, err = await asyncio.wait_for(process.communicate(), timeout_s)
    except (TimeoutError, asyncio.CancelledError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        detail = err.decode("utf-8", errors="replace").strip()[-600:]
        raise RepoError(f"git {' '.join(args[:3])} failed ({process.returncode}): {detail}")
    return out.decode("utf-8", errors="replace").strip()


def repo_identity(url: str) -> str:
    """The repository a URL names, whatever its spelling (AgentV's `normalizeRepoIdentity`)."""
    text = url.strip()
    scp = re.match(r"^[\w.-]+@([^:/]+):(.+)$", text)
    if scp:
        host, path = scp.group(1), scp.group(2)
    elif "://" in text:
        scheme, _, rest = text.partition("://")
        if scheme == "file":
            return "file://" + re.sub(r"\.git$", "", rest).rstrip("/")
        host, _, path = rest.partition("/")
        host = host.rpartition("@")[2]
    else:
        return re.sub(r"\.git$", "", text).rstrip("/")
    path = re.sub(r"\.git$", "", path.strip("/"), flags=re.IGNORECASE)
    host = host.lower()
    return f"{host}/{path.lower() if host == 'github.com' else path}"


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentv-ci" / "git"


class RepoCache:
    """Bare mirrors shared by every workspace of a run (and kept for the next run)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or default_cache_dir()
        self.warnings: list[str] = []
        self._locks: dict[str, asyncio.Lock] = {}
        self._fetched: set[str] = set()

    async def _mirror(self, url: str) -> Path:
        identity = repo_identity(url)
        mirror = self.root / hashlib.sha256(identity.encode()).hexdigest()
        async with self._locks.setdefault(identity, asyncio.Lock()):
            if (mirror / "HEAD").is_file():
                if identity not in self._fetched:
                    try:
                        await git("remote", "set-url", "origin", "--", url, cwd=mirror)
                        await git("fetch", "--prune", "--quiet", "origin", cwd=mirror)
                    except RepoError as exc:
                        self.warnings.append(
                            f"{url}: fetching the cached mirror failed, using it as is: {exc}"
                        )
                    self._fetched.add(identity)
                return mirror
            self.root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=mirror.name[:12] + ".", dir=self.root))
            try:
                await git("clone", "--mirror", "--quiet", "--", url, str(staging / "repo.git"))
                with contextlib.suppress(FileExistsError, OSError):
                    (staging / "repo.git").rename(mirror)  # atomic; another process may have won
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            if not (mirror / "HEAD").is_file():
                raise RepoError(f"cannot create the mirror of {url} in {self.root}")
            self._fetched.add(identity)
            return mirror

    @staticmethod
    async def checkout_commit(repo: WorkspaceRepo, directory: Path) -> str:
        """The SHA the repository is checked out at: `commit` (a SHA, tag, branch or the remote
        branch of that name; HEAD when unset), `ancestor` parents back."""
        ref = repo.commit or "HEAD"
        candidates = [ref]
        if not ref.startswith(("refs/", "origin/")) and not _FULL_SHA.match(ref):
            candidates.append(f"refs/remotes/origin/{ref}")
        sha = None
        for candidate in candidates:
            try:
                sha = await git(
                    "rev-parse", "--verify", "--end-of-options", f"{candidate}^{{commit}}", cwd=directory
                )
                break
            except RepoError:
                continue
        if sha is None:
            raise RepoError(f"{repo.repo}: cannot resolve {ref!r} to a commit")
        if repo.ancestor:
            try:
                sha = await git(
                    "rev-parse", "--verify", "--end-of-options", f"{sha}~{repo.ancestor}", cwd=directory
                )
            except RepoError:
                raise RepoError(f"{repo.repo}: {ref!r} has no ancestor {repo.ancestor}") from None
        return sha

    async def materialize(self, repo: WorkspaceRepo, workspace: Path) -> None:
        """Clone `repo` into `workspace / repo.path` and check out its commit."""
        target = workspace / repo.path
        mirror = await self._mirror(repo.repo)
        target.parent.mkdir(parents=True, exist_ok=True)
        await git("clone", "--quiet", "--no-checkout", "--", str(mirror), str(target))
        await git("remote", "set-url", "origin", "--", repo.repo, cwd=target)
        if repo.sparse:
            await git("sparse-checkout", "init", "--cone", cwd=target)
            await git("sparse-checkout", "set", "--", *repo.sparse, cwd=target)
        sha = await self.checkout_commit(repo, target)
        await git("-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", sha, cwd=target)

    async def reset(self, repo: WorkspaceRepo, workspace: Path, mode: str) -> None:
        """Back to the checked-out commit; `fast` keeps ignored files, `strict` removes them too."""
        target = workspace / repo.path
        if not (target / ".git").exists():
            await self.materialize(repo, workspace)  # removed by the test: clone it again
            return
        sha = await self.checkout_commit(repo, target)
        await git("reset", "--quiet", "--hard", sha, cwd=target)
        await git("clean", "-fdx" if mode == "strict" else "-fd", "--quiet", cwd=target)
