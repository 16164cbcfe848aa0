"""Make untrusted text (model answers, grader evidence, test ids, file names, YAML keys) safe for
reports and logs.

Model output may contain lone surrogates, ANSI escapes, XML-illegal control characters, raw HTML,
`@mentions` that would ping people in a PR comment, and `::` GitHub workflow commands that the
Actions runner would execute when the text reaches the job log, and GitLab's `section_start:` /
`section_end:` markers that GitLab's job log viewer acts on. Every reporter passes model text through
these functions before writing it.

For the console: `printable` shows one value on one line (every control character, line break and
bidirectional override as a visible escape such as `\\n` or `\\x1b`); `escape_controls` does the same
but keeps line breaks and tabs, for text we lay out ourselves. The console streams apply
`escape_controls`, `neutralise_log_sections` and `neutralise_workflow_commands` to everything printed
(security.streams).
"""

from __future__ import annotations

import re

__all__ = [
    "clean_text",
    "escape_controls",
    "escape_markdown_inline",
    "fenced_block",
    "neutralise_log_sections",
    "neutralise_workflow_commands",
    "printable",
]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
# XML 1.0 forbids C0 controls except TAB, LF, CR; also the non-characters U+FFFE/U+FFFF.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff]")
# `::command::` counts at a line start after leading whitespace; the runner (.NET ReadLine) also ends
# a line at a lone CR. The legacy `##[command]data` form is matched anywhere in a line.
_WORKFLOW_COMMAND = re.compile(r"(?:^|(?<=\r))(\s*):(:|%3A)", re.MULTILINE | re.IGNORECASE)
_LEGACY_COMMAND = "##["
_MAYBE_COMMAND = re.compile(r":(?::|%3A)|##\[", re.IGNORECASE)
_NEEDS_CLEANING = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffe\uffff\ud800-\udfff]")
_ZWSP = "\u200b"
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
# What a terminal or the Actions runner could act on: C0 and C1 controls (ESC starts ANSI and OSC
# sequences, BEL ends OSC, CR moves to the line start, U+009B/U+009D are 8-bit CSI/OSC), DEL, Unicode
# line and paragraph separators, bidirectional overrides (text that reads differently than it is),
# and lone surrogates (not encodable).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNPRINTABLE_BUT_LAYOUT = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def clean_text(text: str) -> str:
    """Replace lone surrogates, strip ANSI sequences and characters that XML 1.0 forbids."""
    if _NEEDS_CLEANING.search(text) is None:  # the common case: one scan, no copies
        return text
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = _ANSI.sub("", text)
    return _ILLEGAL.sub("", text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(value: object) -> str:
    """`value` as one line of plain text: each control character (CR, LF, TAB, ESC, BEL, ...), line
    separator and bidirectional override shown as a visible escape (`\\n`, `\\x1b`, `\\u202e`), so a
    file name or test id can neither add a line, nor move the cursor, nor send a terminal sequence."""
    text = value if isinstance(value, str) else str(value)
    if _UNPRINTABLE.search(text) is None:
        return text
    return _UNPRINTABLE.sub(_escape, text)


def escape_controls(text: str) -> str:
    """As `printable`, but line feeds and tabs stay (and CRLF becomes LF): for text laid out in lines."""
    if _UNPRINTABLE_BUT_LAYOUT.search(text) is None:
        return text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return _UNPRINTABLE_BUT_LAYOUT.sub(_escape, text)


def neutralise_workflow_commands(text: str) -> str:
    """Break `::command::` at the start of any line (LF or CR) and `##[command]` anywhere, so the
    Actions runner ignores them when the text reaches a job log."""
    if _MAYBE_COMMAND.search(text) is None:  # a literal scan: far cheaper than the anchored pattern
        return text
    text = _WORKFLOW_COMMAND.sub(lambda m: m.group(1) + ":" + _ZWSP + m.group(2), text)
    return text.replace(_LEGACY_COMMAND, "#" + _ZWSP + "#[") if _LEGACY_COMMAND in text else text


# GitLab's job log viewer (ci/job_log_viewer/lib/scanner.js) takes `section_<start|end>:<n>:<name>`
# anywhere in a line, without the ESC/CR its backend parser wants, and trims spaces around each part.
SECTION_MARKER = "section_"
_BROKEN_SECTION_MARKER = "section" + _ZWSP + "_"


def neutralise_log_sections(text: str) -> str:
    """Break every `section_` with a zero-width space, so no GitLab section marker in data can open,
    close or collapse a section of the job log."""
    if SECTION_MARKER not in text:
        return text
    return text.replace(SECTION_MARKER, _BROKEN_SECTION_MARKER)


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def escape_markdown_inline(text: str) -> str:
    """Escape text for a Markdown table cell or a line of prose: no HTML, no mentions, no formatting."""
    text = clean_text(text).replace("\r", "")
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    text = text.replace("@", "@" + _ZWSP)
    text = " ".join(text.split())  # newlines would end a table row
    return neutralise_workflow_commands(text)


def fenced_block(text: str, *, info: str = "text") -> str:
    """Wrap text in a code fence longer than any backtick run inside it (so it cannot break out).

    Inside a fence GitHub renders no HTML; tag openings (`<x`, `</`, `<!`, `<?`) and mentions are
    broken anyway with a zero-width space (defence in depth: the same body reaches renderers that do
    not honour fences), and so are `::` commands, because the same text may be echoed to a job log.
    """
    text = clean_text(text).replace("\r\n", "\n").replace("\r", "\n")  # CommonMark ends lines at CR too
    text = neutralise_workflow_commands(text).replace("@", "@" + _ZWSP)
    if "<" in text:
        text = _TAG_OPEN.sub("<" + _ZWSP, text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"
