"""How the reports name the baseline: one line for the Markdown summary (and so the PR comment), one
for the log, and its record in the run's `summary.json` (so `report` can say it again later)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from agentv_ci.model.baseline import BaselineSource
from agentv_ci.security.redaction import redact_bytes
from agentv_ci.text_safety import clean_text, escape_markdown_inline

__all__ = ["baseline_log_line", "baseline_markdown_line", "record_baseline"]

_SAFE_URL = re.compile(r"https?://[^\s()<>\[\]`\"'\\]{1,400}")
_SHA = re.compile(r"[0-9a-fA-F]{7,64}")
_MAX_TEXT = 400
_MAX_FILES = 10  # sidecars named in the Markdown line (the rest counted)


def _cap(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _code(text: str) -> str:
    """A name as inline code when it is plain, else as escaped prose."""
    plain = clean_text(text)
    return f"`{plain}`" if re.fullmatch(r"[\w./:@+-]{1,200}", plain) else escape_markdown_inline(_cap(plain))


def _commit(sha: str | None) -> str:
    return f"`{sha}`" if sha and _SHA.fullmatch(sha) else escape_markdown_inline(_cap(sha or "?"))


def baseline_markdown_line(source: BaselineSource, *, compared: bool) -> str:
    """`Baseline: artifact `agentv-ci-results` (id 12) of workflow run [345](URL), commit `SHA`.`, or
    `No baseline: REASON.` With `compared` False (e.g. `report` without `--baseline`) a found baseline
    is named as the one the run used, and the missing deltas are explained."""
    if source.kind == "none":
        return f"**No baseline:** {escape_markdown_inline(_cap(clean_text(source.reason or 'unknown')))}."
    if source.kind == "artifact":
        text = f"artifact {_code(source.name)}"
        text += f" (id {source.artifact_id})" if source.artifact_id else ""
        if source.run_id is not None:
            url = source.run_url or ""
            run = f"[{source.run_id}]({url})" if _SAFE_URL.fullmatch(url) else str(source.run_id)
            text += f" of workflow run {run}"
        text += f", commit {_commit(source.commit)}" if source.commit else ""
    elif source.kind == "commit":
        asked = source.ref and source.ref != source.commit
        text = f"re-run at commit {_commit(source.commit or source.ref)}" + (
            f" ({_code(source.ref or '')})" if asked else ""
        )
    elif source.kind == "sidecar":
        shown = [_code(f) for f in source.files[:_MAX_FILES]]
        more = len(source.files) - len(shown)
        text = "committed sidecar " + ", ".join(shown) + (f" and {more} more" if more > 0 else "")
        if source.reason:  # in place of the artifact `baseline: auto` could not have
            text += f" (fallback: {escape_markdown_inline(_cap(clean_text(source.reason)))})"
    else:
        text = f"results at {_code(source.name)}"
    if not compared:
        return f"**Baseline (when the run was gated):** {text}; not read again here, so no deltas."
    return f"**Baseline:** {text}."


def baseline_log_line(source: BaselineSource) -> str:
    """`baseline: <what it was>` or `baseline: none: <why>` for the console / Action log."""
    return clean_text(f"baseline: {_cap(source.describe())}")


def record_baseline(run_dir: Path, source: BaselineSource | None) -> None:
    """Set `baseline` in `run_dir/summary.json` (the rest of the file is kept as written). Nothing
    happens when there is no such file or no source to record."""
    path = run_dir / "summary.json"
    if source is None or not path.is_file():
        return
    try:
        document = msgspec.json.decode(path.read_bytes())
    except msgspec.DecodeError:
        return  # not ours to repair: `report` says what is wrong with it
    if not isinstance(document, dict):
        return
    document["baseline"] = msgspec.to_builtins(source)
    encoded = msgspec.json.format(msgspec.json.encode(document), indent=2) + b"\n"
    path.write_bytes(redact_bytes(encoded))
