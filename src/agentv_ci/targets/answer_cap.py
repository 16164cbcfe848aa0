"""The cap on an answer's size: a target's answer longer than `max_answer_bytes` (UTF-8) is cut there,
with a visible marker, before anything else sees it (graders, the response cache, `--record`, the
row). The test's row says so in `notes`, and the run prints a warning (the first few by name, then a
count), so a truncated answer is never mistaken for what the target said.

The default is 1 MiB; `agentv-ci run --max-answer-bytes N` or `AGENTV_CI_MAX_ANSWER_BYTES=N` change it
(docs/running.md). Every string of the answer is capped: its final text, each message's text (and
each text block of a message), and a provider's raw body is dropped when anything was cut.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from agentv_ci.model.result import TargetResponse
from agentv_ci.model.suite import JsonValue, Message

__all__ = [
    "DEFAULT_MAX_ANSWER_BYTES",
    "MAX_ANSWER_BYTES_ENV",
    "MAX_ANSWER_BYTES_LIMIT",
    "AnswerCap",
    "cut_text",
    "marker",
    "oversized_plain_text",
    "truncation_note",
]

DEFAULT_MAX_ANSWER_BYTES = 1024 * 1024
MAX_ANSWER_BYTES_LIMIT = 256 * 1024 * 1024  # --max-answer-bytes can raise the cap up to this
MAX_ANSWER_BYTES_ENV = "AGENTV_CI_MAX_ANSWER_BYTES"
_NAMED_WARNINGS = 5  # then one line counts the rest


def marker(limit: int, size: int) -> str:
    """What a cut answer ends with."""
    return f"\n[agentv-ci: answer cut at {limit} bytes; the target answered {size} bytes]"


def truncation_note(limit: int, size: int) -> str:
    """The row's note for an answer of `size` bytes cut at `limit`."""
    return (
        f"answer truncated: the target answered {size} bytes, cut at {limit} bytes "
        "(--max-answer-bytes / AGENTV_CI_MAX_ANSWER_BYTES); graders saw the cut answer"
    )


def cut_text(text: str, limit: int, size: int | None = None) -> tuple[str, int | None]:
    """(`text` cut at `limit` UTF-8 bytes plus the marker, its size in bytes), or (`text`, None) when
    it fits. `size`: the size the target really answered, when `text` is already a part of it."""
    if len(text) <= limit // 4 and size is None:  # at most 4 bytes a character: it fits
        return text, None
    data = text.encode("utf-8", "surrogatepass")
    total = max(size or 0, len(data))
    if len(data) <= limit and size is None:
        return text, None
    kept = data[:limit].decode("utf-8", "ignore")  # never half a character
    return kept + marker(limit, total), total


def oversized_plain_text(path: Path, head_bytes: int, size: int) -> TargetResponse | None:
    """The first `head_bytes` of a plain-text answer file of `size` bytes, as an answer that says it
    is partial (`answer_bytes`); None when the file is JSON (which cannot be parsed in part)."""
    with path.open("rb") as handle:
        head = handle.read(head_bytes)
    if head.lstrip()[:1] in (b"{", b"["):
        return None
    text = head.decode("utf-8", "replace").replace("\r\n", "\n")
    return TargetResponse(text=text, messages=[Message(role="assistant", content=text)], answer_bytes=size)


class AnswerCap:
    """Cuts each answer of a run at `limit` bytes; counts what it cut and says so once per test."""

    def __init__(self, limit: int, warnings: list[str]) -> None:
        self.limit = limit
        self.warnings = warnings
        self.cut_count = 0
        self._fits = limit // 4  # characters that fit whatever they are (at most 4 bytes each)

    def apply(self, response: TargetResponse, label: str) -> TargetResponse:
        """`response` with every answer string at most `limit` bytes (plus the marker)."""
        known = response.answer_bytes  # a target that read only part of a larger answer says so
        fits = self._fits
        if known is None and len(response.text) <= fits:  # nearly every answer: nothing to measure
            for message in response.messages:
                content = message.content
                if type(content) is not str or len(content) > fits:
                    break
            else:
                return response
        text, size = cut_text(response.text, self.limit, known)
        largest = size or 0
        messages: list[Message] = []
        changed = size is not None
        for message in response.messages:
            same = known is not None and message.content is response.text  # that partial answer
            content, cut = self._content(message.content, known if same else None)
            if cut is not None:
                largest = max(largest, cut)
                changed = True
                message = msgspec.structs.replace(message, content=content)
            messages.append(message)
        if not changed:
            return response
        size = max(largest, known or 0)
        self._warn(label, size)
        return msgspec.structs.replace(
            response,
            text=text,
            messages=messages,
            raw=None,
            answer_bytes=size,
            notes=[*response.notes, truncation_note(self.limit, size)],
        )

    def _content(self, content: JsonValue, known: int | None) -> tuple[JsonValue, int | None]:
        if isinstance(content, str):
            return cut_text(content, self.limit, known)
        if not isinstance(content, list):
            return content, None
        largest: int | None = None
        blocks: list[JsonValue] = []
        for block in content:
            value = block.get("value") if isinstance(block, dict) else None
            if isinstance(block, dict) and isinstance(value, str):
                cut, size = cut_text(value, self.limit)
                if size is not None:
                    largest = max(largest or 0, size)
                    block = {**block, "value": cut}
            blocks.append(block)
        return (blocks, largest) if largest is not None else (content, None)

    def _warn(self, label: str, size: int) -> None:
        self.cut_count += 1
        if self.cut_count <= _NAMED_WARNINGS:
            note = f"answer of {size} bytes cut at {self.limit} bytes (--max-answer-bytes)"
            self.warnings.append(f"{label}: {note}")

    def summary_warning(self) -> str | None:
        """One line for the answers cut beyond the ones named."""
        hidden = self.cut_count - _NAMED_WARNINGS
        if hidden <= 0:
            return None
        return f"{hidden} more answer(s) cut at {self.limit} bytes (see each row's notes)"
