"""A fake GitLab REST API (v4): a real HTTP server on 127.0.0.1 with in-memory state.

    with FakeGitLab(project_id=42) as gitlab:
        gitlab.add_note(7, "quoting <!-- agentv-ci:sticky-comment ... -->", user_id=99)  # someone else
        ...
        assert [n.body for n in gitlab.notes_on(7)] == [...]

Tokens: `PROJECT_TOKEN` (sent as `PRIVATE-TOKEN`) is the project bot `BOT_ID`; `JOB_TOKEN` (sent as
`JOB-TOKEN`) may only download artifacts, as GitLab's CI_JOB_TOKEN; others get 401.

Endpoints (under `/api/v4`; others 404):
- `GET /user` (PRIVATE-TOKEN only: `{id, username}`)
- `GET|POST /projects/{id}/merge_requests/{iid}/notes` (paginated with `Link`, `per_page` capped at
  `page_size`), `PUT .../notes/{note_id}`; a body over 1,000,000 characters gets 400.
- `GET /projects/{id}/jobs/artifacts/{ref}/download?job=NAME`: 302 to a second server (storage) that
  serves the zip set with `set_artifact(ref, job, zip_bytes)` and answers 400 to any request carrying
  a token header (as a signed object-storage URL does); 404 when there is none.
- `GET /projects/{id}/pipelines?ref=&status=&source=` (newest id first, paginated) and
  `GET /projects/{id}/pipelines/{pid}/jobs?scope[]=` list what `add_pipeline(ref, job, zip_bytes,
  source=..., status=...)` made (one job per pipeline, of the pipeline's status; the filters are
  GitLab's: a merge-request pipeline's ref is `refs/merge-requests/<iid>/head`);
  `GET /projects/{id}/jobs/{job_id}/artifacts` redirects to storage as above. `JOB_TOKEN` may
  download artifacts, not list pipelines or jobs (403).

`fail_next(status, path=..., times=1, headers={...})` queues a fault (GitLab's `{"message"}` body,
with `headers`, e.g. `retry-after`) for the first request whose path contains `path`. Every request
is recorded in `requests` (server, method, path, query, lower-cased headers, body; the scaffold is
recording_server.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlencode

from tests.fakes.recording_server import Recorded, RecordingHandler, RecordingServers

NOTE_LIMIT = 1_000_000


@dataclass
class Pipeline:
    id: int
    ref: str
    source: str
    status: str
    job_id: int
    job_name: str
    artifact: bytes


@dataclass
class Note:
    id: int
    mr: int
    body: str
    user_id: int
    created_at: str
    system: bool = False


class FakeGitLab(RecordingServers):
    PROJECT_TOKEN = "glpat-fakeProjectToken0123456789"
    JOB_TOKEN = "glcbt-fakeJobToken0123456789abc"
    BOT_ID = 501

    def __init__(self, *, project_id: int = 42, page_size: int = 20) -> None:
        super().__init__()
        self.project_id = project_id
        self.page_size = page_size
        self.notes: list[Note] = []
        self.artifacts: dict[tuple[str, str], bytes] = {}
        self.pipelines: list[Pipeline] = []
        self._faults: list[tuple[int, str, dict[str, str]]] = []
        self._next_id = 9000

    @property
    def api_url(self) -> str:
        return self.base_url + "/api/v4"

    # -- state ------------------------------------------------------------------------------------

    def add_note(self, mr: int, body: str, *, user_id: int, system: bool = False) -> Note:
        with self._lock:
            self._next_id += 1
            note = Note(
                self._next_id, mr, body, user_id, f"2025-01-01T00:00:{self._next_id % 60:02d}Z", system
            )
            self.notes.append(note)
            return note

    def notes_on(self, mr: int) -> list[Note]:
        return [n for n in self.notes if n.mr == mr]

    def set_artifact(self, ref: str, job: str, data: bytes) -> None:
        self.artifacts[(ref, job)] = data

    def add_pipeline(
        self, ref: str, job: str, data: bytes, *, source: str = "push", status: str = "success"
    ) -> Pipeline:
        """A pipeline on `ref` (newer than every earlier one) whose job `job` left `data` (a zip)."""
        with self._lock:
            self._next_id += 1
            pipeline = Pipeline(self._next_id, ref, source, status, self._next_id + 100_000, job, data)
            self.pipelines.append(pipeline)
            return pipeline

    def fail_next(
        self, status: int, *, path: str, times: int = 1, headers: dict[str, str] | None = None
    ) -> None:
        with self._lock:
            self._faults.extend([(status, path, dict(headers or {}))] * times)

    # -- serving ----------------------------------------------------------------------------------

    def _answer(self, handler: RecordingHandler, request: Recorded) -> None:
        with self._lock:
            fault = next((f for f in self._faults if f[1] in request.path), None)
            if fault is not None:
                self._faults.remove(fault)
        if fault is not None:
            handler.reply(fault[0], {"message": "fault"}, fault[2])
            return
        answer = self._storage_answer if request.server == "storage" else self._api_answer
        handler.reply(*answer(request))

    def _api_answer(self, request: Recorded) -> tuple[int, Any, dict[str, str]]:
        private = request.headers.get("private-token")
        job = request.headers.get("job-token")
        if private != self.PROJECT_TOKEN and job != self.JOB_TOKEN:
            return 401, {"message": "401 Unauthorized"}, {}
        path = request.path.removeprefix("/api/v4")
        if path == "/user" and request.method == "GET":
            if private != self.PROJECT_TOKEN:
                return 401, {"message": "401 Unauthorized"}, {}
            return 200, {"id": self.BOT_ID, "username": "project_42_bot"}, {}
        prefix = f"/projects/{self.project_id}"
        if not path.startswith(prefix + "/"):
            return 404, {"message": "404 Project Not Found"}, {}
        rest = path[len(prefix) :].split("/")[1:]
        if rest[:2] == ["jobs", "artifacts"] and len(rest) == 4 and rest[3] == "download":
            key = (unquote(rest[2]), request.query.get("job", ""))
            if key not in self.artifacts:
                return 404, {"message": "404 Not found"}, {}
            location = f"{self.storage_url}/blob?{urlencode({'ref': key[0], 'job': key[1]})}"
            return 302, b"", {"location": location}
        if rest[:1] == ["jobs"] and len(rest) == 3 and rest[2] == "artifacts":
            if not any(str(p.job_id) == rest[1] for p in self.pipelines):
                return 404, {"message": "404 Not found"}, {}
            return 302, b"", {"location": f"{self.storage_url}/blob?{urlencode({'job_id': rest[1]})}"}
        if private != self.PROJECT_TOKEN:
            return 403, {"message": "403 Forbidden"}, {}
        if len(rest) >= 3 and rest[0] == "merge_requests" and rest[2] == "notes":
            return self._notes(request, int(rest[1]), rest[3:])
        if rest == ["pipelines"] and request.method == "GET":
            return self._page(request, [self._pipeline_json(p) for p in self._listed_pipelines(request)])
        if len(rest) == 3 and rest[0] == "pipelines" and rest[2] == "jobs" and request.method == "GET":
            return self._page(request, self._jobs(request, rest[1]))
        return 404, {"message": "404 Not found"}, {}

    def _listed_pipelines(self, request: Recorded) -> list[Pipeline]:
        query = request.query
        chosen = [
            p
            for p in self.pipelines
            if query.get("ref", p.ref) == p.ref
            and query.get("status", p.status) == p.status
            and query.get("source", p.source) == p.source
        ]
        return sorted(chosen, key=lambda p: p.id, reverse=query.get("sort", "desc") == "desc")

    def _jobs(self, request: Recorded, pipeline_id: str) -> list[dict[str, Any]]:
        scope = request.query.get("scope[]")
        return [
            {
                "id": p.job_id,
                "name": p.job_name,
                "status": p.status,
                "ref": p.ref,
                "pipeline": {"id": p.id, "ref": p.ref, "source": p.source, "status": p.status},
                "artifacts_file": {"filename": "artifacts.zip", "size": len(p.artifact)},
            }
            for p in self.pipelines
            if str(p.id) == pipeline_id and scope in (None, p.status)
        ]

    def _pipeline_json(self, pipeline: Pipeline) -> dict[str, Any]:
        return {
            "id": pipeline.id,
            "project_id": self.project_id,
            "ref": pipeline.ref,
            "source": pipeline.source,
            "status": pipeline.status,
            "sha": f"{pipeline.id:040x}",
            "web_url": f"https://gitlab.example/group/demo/-/pipelines/{pipeline.id}",
        }

    def _page(self, request: Recorded, items: list[Any]) -> tuple[int, Any, dict[str, str]]:
        size = min(int(request.query.get("per_page", "20")), self.page_size)
        page = int(request.query.get("page", "1"))
        headers = {}
        if page * size < len(items):
            query = {**request.query, "page": str(page + 1), "per_page": str(size)}
            headers["link"] = (
                f'<{self.api_url}{request.path.removeprefix("/api/v4")}?{urlencode(query)}>; rel="next"'
            )
        return 200, items[(page - 1) * size : page * size], headers

    def _notes(self, request: Recorded, mr: int, rest: list[str]) -> tuple[int, Any, dict[str, str]]:
        body = request.body.get("body") if isinstance(request.body, dict) else None
        if request.method in ("POST", "PUT") and isinstance(body, str) and len(body) > NOTE_LIMIT:
            return 400, {"message": {"note": ["is too long (maximum is 1000000 characters)"]}}, {}
        if request.method == "GET" and not rest:
            return self._page(request, [self._note_json(n) for n in self.notes_on(mr)])
        if request.method == "POST" and not rest and isinstance(body, str):
            note = self.add_note(mr, body, user_id=self.BOT_ID)
            return 201, self._note_json(note), {}
        if request.method == "PUT" and len(rest) == 1 and isinstance(body, str):
            for note in self.notes_on(mr):
                if str(note.id) == rest[0]:
                    note.body = body
                    return 200, self._note_json(note), {}
            return 404, {"message": "404 Not found"}, {}
        return 404, {"message": "404 Not found"}, {}

    def _note_json(self, note: Note) -> dict[str, Any]:
        return {
            "id": note.id,
            "body": note.body,
            "author": {"id": note.user_id, "username": f"user{note.user_id}"},
            "created_at": note.created_at,
            "system": note.system,
            "noteable_type": "MergeRequest",
        }

    def _storage_answer(self, request: Recorded) -> tuple[int, Any, dict[str, str]]:
        if "private-token" in request.headers or "job-token" in request.headers:
            return 400, {"message": "a token was sent to object storage"}, {}
        if "job_id" in request.query:
            job = next((p for p in self.pipelines if str(p.job_id) == request.query["job_id"]), None)
            data = job.artifact if job is not None else None
        else:
            data = self.artifacts.get((request.query.get("ref", ""), request.query.get("job", "")))
        return (200, data, {"content-type": "application/zip"}) if data is not None else (404, {}, {})
