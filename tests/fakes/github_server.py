"""A fake GitHub REST API: a real HTTP server on 127.0.0.1 with in-memory state.

    with FakeGitHub(repository="octo/demo", page_size=2) as github:   # or the `github_server` fixture
        github.add_comment(7, "hello", author="alice")                # a PR comment by someone else
        client = GitHubClient(github.PAT, "octo/demo", api_url=github.base_url)
        ...
        assert [c.body for c in github.comments_on(7)] == [...]
        assert all("authorization" not in r.headers for r in github.requests_to("storage"))

Tokens: `github.PAT` authenticates as `octocat` (`GET /user` answers its login);
`github.INSTALLATION` is an Actions `GITHUB_TOKEN` (`GET /user` answers 403 "Resource not accessible
by integration"; its comments are authored by `github-actions[bot]`). `add_token(token, login,
installation=...)` adds more; any other token gets 401 "Bad credentials".

Endpoints (all under `/repos/{repository}`, others 404):
- `GET /user`
- `GET .../issues/{n}/comments` (oldest first, `per_page` capped at `page_size`, `Link` next/last),
  `POST .../issues/{n}/comments`, `GET|PATCH .../issues/comments/{id}`; a body over 65,536
  characters gets GitHub's 422 "Body is too long (maximum is 65536 characters)".
- `GET .../pulls/{n}` (only PRs added with `add_pull(n, head_sha=...)`).
- `GET .../actions/artifacts?name=` (newest first, paginated like comments), `GET .../actions/runs/{id}`,
  `GET .../actions/artifacts/{id}/zip`: 302 to a second server (`storage_url`, another port) that
  serves the zip and, like a signed storage URL, answers 400 to a request carrying `Authorization`.
  An expired artifact answers 410.

Faults, queued and consumed in order by the first request they match (`path` is a substring):
`fail_next(502, times=2)`, `rate_limit_next(reset_in=0)` (403 + `x-ratelimit-remaining: 0` +
`x-ratelimit-reset`), `retry_after_next(seconds=0)` (429 + `Retry-After`), `drop_next()` (the
connection closes without an answer); `apply=True` performs the request before failing it (a 502
after the comment was created, as GitHub sometimes does).

Every request is recorded in `github.requests` (server, method, path, query, lower-cased headers,
body): `requests_to("api"|"storage")` and `calls("POST", "/comments")` filter them (the scaffold
is recording_server.py).
"""

from __future__ import annotations

import io
import json
import re
import time
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from tests.fakes.recording_server import Recorded, RecordingHandler, RecordingServers

BODY_LIMIT = 65_536
_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass
class Comment:
    id: int
    pr: int
    body: str
    author: str
    author_type: str
    created_at: str
    updated_at: str


@dataclass
class Artifact:
    id: int
    name: str
    branch: str
    run_id: int
    conclusion: str
    expired: bool
    created_at: str
    content: bytes
    event: str = "push"
    from_fork: bool = False


@dataclass
class Fault:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = "injected fault"
    path: str | None = None
    method: str | None = None
    apply: bool = False
    drop: bool = False
    drip_s: float = 0.0  # > 0: the true answer, one byte every `drip_s` seconds
    drip_where: str = "headers"  # "headers": from the status line on; "body": headers at once
    server: str = "api"

    def matches(self, method: str, path: str, server: str = "api") -> bool:
        return (
            self.server == server
            and (self.method is None or self.method == method)
            and (self.path is None or self.path in path)
        )


def zip_files(files: Mapping[str, bytes | str]) -> bytes:
    """A zip archive holding `files` (name -> content), as upload-artifact builds one."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content.encode() if isinstance(content, str) else content)
    return buffer.getvalue()


class FakeGitHub(RecordingServers):
    """Start with `with FakeGitHub() as github:`; `github.base_url` is `http://127.0.0.1:PORT`."""

    PAT = "ghp_fakePersonalAccessToken0123456789abcd"
    INSTALLATION = "ghs_fakeInstallationToken0123456789abcdef"
    BOT = "github-actions[bot]"

    def __init__(self, *, repository: str = "octo/demo", page_size: int = 30) -> None:
        super().__init__()
        self.repository = repository
        self.page_size = page_size
        self.comments: list[Comment] = []
        self.artifacts: list[Artifact] = []
        self.pulls: dict[int, str] = {}  # PR number -> head sha (`GET .../pulls/{n}`)
        self.tokens: dict[str, tuple[str, bool]] = {
            self.PAT: ("octocat", False),
            self.INSTALLATION: (self.BOT, True),
        }
        self.link_base: str | None = None  # where `Link` URLs point (default `base_url`)
        self._faults: list[Fault] = []
        self.dripped: list[int] = []  # bytes each dripped answer sent before the client hung up
        self._next_id = 1000
        self._ticks = 0

    # -- state ------------------------------------------------------------------------------------

    def add_token(self, token: str, login: str, *, installation: bool = False) -> None:
        self.tokens[token] = (login, installation)

    def add_comment(
        self, pr: int, body: str, *, author: str = "someone", author_type: str = "User"
    ) -> Comment:
        with self._lock:
            stamp = self._stamp()
            comment = Comment(self._new_id(), pr, body, author, author_type, stamp, stamp)
            self.comments.append(comment)
            return comment

    def add_pull(self, number: int, *, head_sha: str) -> None:
        """A pull request `GET .../pulls/{number}` answers, with its head commit."""
        with self._lock:
            self.pulls[number] = head_sha

    def comments_on(self, pr: int) -> list[Comment]:
        with self._lock:
            return [c for c in self.comments if c.pr == pr]

    def add_artifact(
        self,
        *,
        name: str = "agentv-ci-results",
        branch: str = "main",
        files: Mapping[str, bytes | str] | None = None,
        content: bytes | None = None,
        conclusion: str = "success",
        expired: bool = False,
        event: str = "push",
        from_fork: bool = False,
    ) -> Artifact:
        """An artifact of a new workflow run; each one added is newer than the last."""
        with self._lock:
            data = content if content is not None else zip_files(files or {})
            artifact = Artifact(
                self._new_id(),
                name,
                branch,
                self._new_id(),
                conclusion,
                expired,
                self._stamp(),
                data,
                event,
                from_fork,
            )
            self.artifacts.append(artifact)
            return artifact

    # -- faults -----------------------------------------------------------------------------------

    def fail_next(
        self,
        status: int,
        *,
        times: int = 1,
        path: str | None = None,
        method: str | None = None,
        headers: Mapping[str, str] | None = None,
        message: str = "injected fault",
        apply: bool = False,
    ) -> None:
        with self._lock:
            for _ in range(times):
                self._faults.append(Fault(status, dict(headers or {}), message, path, method, apply))

    def rate_limit_next(self, *, reset_in: float = 0.0, path: str | None = None) -> None:
        """A primary rate limit: 403 with `x-ratelimit-remaining: 0` and the reset epoch."""
        reset = str(int(time.time() + reset_in))
        headers = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset}
        self.fail_next(403, path=path, headers=headers, message="API rate limit exceeded for installation.")

    def retry_after_next(self, *, seconds: float = 0, status: int = 429, path: str | None = None) -> None:
        self.fail_next(
            status,
            path=path,
            headers={"retry-after": f"{seconds:g}"},
            message="You have exceeded a secondary rate limit.",
        )

    def drip_next(
        self, *, path: str, interval_s: float = 0.5, where: str = "headers", server: str = "api"
    ) -> None:
        """The next answer to `path` (on the `api` or the `storage` server) is the true one, sent a
        byte at a time: from the status line on (`where="headers"`) or after the headers (`"body"`)."""
        with self._lock:
            self._faults.append(Fault(0, path=path, drip_s=interval_s, drip_where=where, server=server))

    def drop_next(self, *, times: int = 1, path: str | None = None) -> None:
        with self._lock:
            for _ in range(times):
                self._faults.append(Fault(0, path=path, drop=True))

    # -- internals --------------------------------------------------------------------------------

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _stamp(self) -> str:
        self._ticks += 1
        return (_EPOCH + timedelta(minutes=self._ticks)).isoformat().replace("+00:00", "Z")

    def _take_fault(self, method: str, path: str, server: str = "api") -> Fault | None:
        with self._lock:
            for index, fault in enumerate(self._faults):
                if fault.matches(method, path, server):
                    return self._faults.pop(index)
        return None

    def _answer(self, handler: RecordingHandler, record: Recorded) -> None:
        fault = self._take_fault(record.method, record.path, record.server)
        answer = self._storage_answer if record.server == "storage" else self._api_answer
        if fault is not None and fault.drip_s > 0:
            self._drip(handler, fault, *answer(record))
        elif record.server == "storage":
            handler.reply(*answer(record))
        elif fault is not None and fault.drop:
            handler.close_connection = True
            handler.connection.shutdown(2)
        elif fault is not None:
            if fault.apply:
                answer(record)
            handler.reply(fault.status, {"message": fault.message}, fault.headers)
        else:
            handler.reply(*answer(record))

    def _drip(
        self, handler: RecordingHandler, fault: Fault, status: int, payload: Any, headers: Mapping[str, str]
    ) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        lines = [f"HTTP/1.1 {status} OK", f"content-length: {len(data)}", "connection: close"]
        lines += [f"{key}: {value}" for key, value in headers.items()]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        raw = head + data
        start = len(head) if fault.drip_where == "body" else 0
        with self._lock:
            index = len(self.dripped)
            self.dripped.append(0)
        handler.close_connection = True
        try:
            handler.wfile.write(raw[:start])
            handler.wfile.flush()
            for position in range(start, len(raw)):
                if self._closing.wait(fault.drip_s):
                    return
                handler.wfile.write(raw[position : position + 1])
                handler.wfile.flush()
                with self._lock:
                    self.dripped[index] = position + 1 - start
        except OSError:  # the client hung up
            return

    # -- the API ----------------------------------------------------------------------------------

    def _api_answer(self, request: Recorded) -> tuple[int, Any, dict[str, str]]:
        auth = request.headers.get("authorization", "")
        token = auth.removeprefix("Bearer ").removeprefix("token ").strip()
        if token not in self.tokens:
            return 401, {"message": "Bad credentials"}, {}
        login, installation = self.tokens[token]
        path = request.path
        if path == "/user" and request.method == "GET":
            if installation:
                return 403, {"message": "Resource not accessible by integration"}, {}
            return 200, {"login": login, "id": 1, "type": "User"}, {}
        prefix = f"/repos/{self.repository}/"
        if not path.startswith(prefix):
            return 404, {"message": "Not Found"}, {}
        rest = path[len(prefix) :]
        with self._lock:
            return self._repo_answer(request, rest, login, installation)

    def _repo_answer(
        self, request: Recorded, rest: str, login: str, installation: bool
    ) -> tuple[int, Any, dict[str, str]]:
        method = request.method
        if match := re.fullmatch(r"issues/(\d+)/comments", rest):
            pr = int(match.group(1))
            if method == "GET":
                return self._page(request, [self._comment_json(c) for c in self.comments_on(pr)], None)
            if method == "POST":
                text = _body_text(request.body)
                if text is None:
                    return 422, {"message": 'Invalid request.\n\n"body" wasn\'t supplied.'}, {}
                if len(text) > BODY_LIMIT:
                    return _too_long()
                comment = self.add_comment(
                    pr, text, author=login, author_type="Bot" if installation else "User"
                )
                return 201, self._comment_json(comment), {}
        if match := re.fullmatch(r"issues/comments/(\d+)", rest):
            found = next((c for c in self.comments if c.id == int(match.group(1))), None)
            if found is None:
                return 404, {"message": "Not Found"}, {}
            if method == "GET":
                return 200, self._comment_json(found), {}
            if method == "PATCH":
                text = _body_text(request.body)
                if text is None:
                    return 422, {"message": 'Invalid request.\n\n"body" wasn\'t supplied.'}, {}
                if len(text) > BODY_LIMIT:
                    return _too_long()
                found.body = text
                found.updated_at = self._stamp()
                return 200, self._comment_json(found), {}
        if (match := re.fullmatch(r"pulls/(\d+)", rest)) and method == "GET":
            number = int(match.group(1))
            if number not in self.pulls:
                return 404, {"message": "Not Found"}, {}
            return 200, {"number": number, "head": {"sha": self.pulls[number]}}, {}
        if rest == "actions/artifacts" and method == "GET":
            name = request.query.get("name")
            chosen = [a for a in self.artifacts if name is None or a.name == name]
            chosen.sort(key=lambda a: a.created_at, reverse=True)
            return self._page(request, [self._artifact_json(a) for a in chosen], "artifacts")
        if (match := re.fullmatch(r"actions/runs/(\d+)", rest)) and method == "GET":
            run = next((a for a in self.artifacts if a.run_id == int(match.group(1))), None)
            if run is None:
                return 404, {"message": "Not Found"}, {}
            return 200, self._run_json(run), {}
        if (match := re.fullmatch(r"actions/artifacts/(\d+)/zip", rest)) and method == "GET":
            artifact = next((a for a in self.artifacts if a.id == int(match.group(1))), None)
            if artifact is None:
                return 404, {"message": "Not Found"}, {}
            if artifact.expired:
                return 410, {"message": "Artifact has expired"}, {}
            location = f"{self.storage_url}/blobs/{artifact.id}.zip?sig=signed-url-secret"
            return 302, b"", {"location": location}
        return 404, {"message": "Not Found"}, {}

    def _storage_answer(self, request: Recorded) -> tuple[int, Any, dict[str, str]]:
        if "authorization" in request.headers:  # signed URLs refuse a second credential
            return 400, b"<Error>Only one auth mechanism allowed</Error>", {}
        match = re.fullmatch(r"/blobs/(\d+)\.zip", request.path)
        with self._lock:
            artifact = next((a for a in self.artifacts if match and a.id == int(match.group(1))), None)
        if artifact is None:
            return 404, b"<Error>BlobNotFound</Error>", {}
        return 200, artifact.content, {"content-type": "application/zip"}

    def _page(self, request: Recorded, items: list[Any], key: str | None) -> tuple[int, Any, dict[str, str]]:
        per_page = min(int(request.query.get("per_page", 30)), 100, self.page_size)
        page = max(int(request.query.get("page", 1)), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []
        if page < last:
            links.append(f'<{self._page_url(request, page + 1)}>; rel="next"')
            links.append(f'<{self._page_url(request, last)}>; rel="last"')
        if page > 1:
            links.insert(0, f'<{self._page_url(request, page - 1)}>; rel="prev"')
        headers = {"link": ", ".join(links)} if links else {}
        payload: Any = {"total_count": len(items), key: chunk} if key else chunk
        return 200, payload, headers

    def _page_url(self, request: Recorded, page: int) -> str:
        query = dict(request.query, page=str(page))
        return f"{self.link_base or self.base_url}{request.path}?{urlencode(query)}"

    @property
    def _repo_url(self) -> str:
        return f"{self.base_url}/repos/{self.repository}"

    def _comment_json(self, comment: Comment) -> dict[str, Any]:
        return {
            "id": comment.id,
            "node_id": f"IC_{comment.id}",
            "url": f"{self.base_url}/repos/{self.repository}/issues/comments/{comment.id}",
            "html_url": f"https://github.com/{self.repository}/pull/{comment.pr}#issuecomment-{comment.id}",
            "body": comment.body,
            "user": {"login": comment.author, "type": comment.author_type},
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
        }

    def _artifact_json(self, artifact: Artifact) -> dict[str, Any]:
        return {
            "id": artifact.id,
            "name": artifact.name,
            "size_in_bytes": len(artifact.content),
            "archive_download_url": f"{self._repo_url}/actions/artifacts/{artifact.id}/zip",
            "expired": artifact.expired,
            "created_at": artifact.created_at,
            "expires_at": artifact.created_at,
            "workflow_run": {
                "id": artifact.run_id,
                "repository_id": 1,
                "head_repository_id": 2 if artifact.from_fork else 1,
                "head_branch": artifact.branch,
                "head_sha": f"{artifact.run_id:040x}",
            },
        }

    def _run_json(self, artifact: Artifact) -> dict[str, Any]:
        return {
            "id": artifact.run_id,
            "status": "completed",
            "conclusion": artifact.conclusion,
            "event": artifact.event,
            "head_branch": artifact.branch,
            "head_sha": f"{artifact.run_id:040x}",
            "html_url": f"https://github.com/{self.repository}/actions/runs/{artifact.run_id}",
        }


def _body_text(body: Any) -> str | None:
    return body.get("body") if isinstance(body, dict) and isinstance(body.get("body"), str) else None


def _too_long() -> tuple[int, Any, dict[str, str]]:
    return (
        422,
        {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "IssueComment",
                    "code": "unprocessable",
                    "field": "data",
                    "message": "Body is too long (maximum is 65536 characters)",
                }
            ],
            "documentation_url": "https://docs.github.com/rest/issues/comments#create-an-issue-comment",
        },
        {},
    )
