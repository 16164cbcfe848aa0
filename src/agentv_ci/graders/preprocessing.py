"""What an llm-grader reads when the answer is made of content blocks (AgentV v4.42.4
`content-preprocessor.ts`): text blocks as they are, and each file block as
`[[ file: <path> ]]` + its text, got from the `preprocessors` entry whose `type` matches the file's
media type (stdin `{path, original_path, media_type}`, stdout = the text), else read as UTF-8.
A preprocessor that fails, or a binary file without one, adds a
`[file preprocessing warning] <path> (<media type>): <reason>` line instead: the grader sees why.
"""

from __future__ import annotations

import json
import mimetypes
import shlex
from pathlib import Path
from typing import Any

from agentv_ci.graders.code_process import ScriptFailure, run_script

TIMEOUT_S = 300.0
_ALIASES = {
    "csv": "text/csv",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "htm": "text/html",
    "html": "text/html",
    "json": "application/json",
    "markdown": "text/markdown",
    "md": "text/markdown",
    "pdf": "application/pdf",
    "sql": "application/sql",
    "txt": "text/plain",
    "xhtml": "application/xhtml+xml",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "xml": "application/xml",
    "yaml": "application/yaml",
    "yml": "application/yaml",
}


def media_type(value: str) -> str:
    """`xlsx`, `.xlsx` or a media type -> the media type (lower case)."""
    text = value.strip().lower().lstrip(".")
    return _ALIASES.get(text, text)


def merge_preprocessors(*layers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Later layers win by type (a grader's own entries over the suite's)."""
    merged: dict[str, dict[str, Any]] = {}
    for layer in layers:
        for entry in layer:
            merged[media_type(str(entry.get("type", "")))] = entry
    return list(merged.values())


def has_file_blocks(content: Any) -> bool:
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "file" for b in content)


async def extract_text(content: list[Any], preprocessors: list[dict[str, Any]], *, base_dir: Path) -> str:
    """The text an llm-grader reads for an answer made of content blocks."""
    parts: list[str] = []
    warnings: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text", block.get("value", ""))))
        elif block.get("type") == "file":
            text, warning = await _file_text(block, preprocessors, base_dir)
            if text:
                parts.append(text)
            if warning:
                warnings.append(warning)
    return "\n".join(part for part in ["\n".join(parts), *warnings] if part)


async def _file_text(
    block: dict[str, Any], preprocessors: list[dict[str, Any]], base_dir: Path
) -> tuple[str, str | None]:
    written = str(block.get("path") or block.get("value") or "")
    kind = str(block.get("media_type") or mimetypes.guess_type(written)[0] or Path(written).suffix)
    wanted = media_type(kind)

    def warn(reason: str) -> tuple[str, str]:
        return "", f"[file preprocessing warning] {written} ({kind}): {reason}"

    if "://" in written and not written.startswith("file://"):
        return warn("remote file paths are not supported for preprocessing")
    path = Path(written.removeprefix("file://"))
    path = path if path.is_absolute() else base_dir / path
    entry = next((p for p in preprocessors if media_type(str(p.get("type", ""))) == wanted), None)
    if entry is not None:
        stdin = json.dumps({"path": str(path), "original_path": written, "media_type": kind}).encode()
        try:
            run = await run_script(list(entry["command"]), stdin=stdin, cwd=base_dir, timeout_s=TIMEOUT_S)
        except ScriptFailure as exc:
            return warn(str(exc))
        if run.exit_code != 0:
            return warn(run.stderr.strip()[-500:] or f"preprocessor exited with code {run.exit_code}")
        return f"[[ file: {written} ]]\n{run.stdout.strip()}", None
    try:
        data = path.read_bytes()
    except OSError as exc:
        return warn(exc.strerror or str(exc))
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n")
    if b"\0" in data or "\ufffd" in text:
        return warn("default UTF-8 read produced binary or invalid text; configure a preprocessor")
    return f"[[ file: {written} ]]\n{text}", None


def resolve_commands(entries: Any, base_dir: Path) -> list[dict[str, Any]]:
    """A grader's own `preprocessors` with each command's script (its last argument, when it names a
    file) made absolute against the eval file's directory, as the loader does for the suite's."""

    resolved: list[dict[str, Any]] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "type" not in entry or "command" not in entry:
            continue
        command = entry["command"]
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if argv and ("/" in argv[-1] or "." in argv[-1]) and not Path(argv[-1]).is_absolute():
            argv[-1] = str((base_dir / argv[-1]).resolve())
        resolved.append({"type": str(entry["type"]), "command": argv})
    return resolved
