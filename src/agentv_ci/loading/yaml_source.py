"""YAML with the C parser, YAML-1.2-style scalars, duplicate-key errors, alias-bomb refusal,
and a mark for every node (json-path -> line:col).

Only `true`/`false` are booleans; dates and times stay strings; integers follow YAML 1.2
(`010` is 10, `0o17` and `0x10` are 15 and 16; `1_000` and `12:30` stay strings); floats follow
YAML 1.2 too (`1e-3` is a number, as in AgentV's JS parser).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import yaml

from agentv_ci.errors import LoadError
from agentv_ci.json_limits import MAX_INT, MAX_JSON_DEPTH, MIN_INT
from agentv_ci.model.source import SourceLocation

PathKey = str | int
JsonPath = tuple[PathKey, ...]

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_DROPPED_TAGS = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:timestamp",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
}

# A document may hold at most this many nodes per character of source (plus a floor): a plain
# document has fewer nodes than characters, so only alias expansion can exceed it.
_NODE_FLOOR = 10_000
# Deeper documents are refused: every later pass (interpolation, vars, checks) walks the tree recursively.
MAX_DEPTH = MAX_JSON_DEPTH


class EvalYamlLoader(_Base):  # type: ignore[misc]
    """CSafeLoader with YAML-1.2-ish implicit typing. Mapping keys are always the written text (as in
    JavaScript objects): `null:`/`true:`/`1:` become the keys "null"/"true"/"1", never None/True/1."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[str, Any]:
        self.flatten_mapping(node)  # `<<` merge keys
        mapping: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found a list or mapping used as a key",
                    key_node.start_mark,
                )
            mapping[str(key_node.value)] = self.construct_object(value_node, deep=deep)
        return mapping

    # The C parser asks these for every node. Without path resolvers (none are registered) a plain
    # scalar's tag depends on its text alone, so it is looked up once per distinct text.
    def resolve(self, kind: Any, value: Any, implicit: tuple[bool, bool]) -> str:
        if self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)  # type: ignore[no-any-return]
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return self.DEFAULT_SCALAR_TAG  # type: ignore[no-any-return]
            tag = _RESOLVED.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(_RESOLVED) >= _RESOLVED_MAX:
                    _RESOLVED.clear()
                _RESOLVED[value] = tag
            return tag
        if kind is yaml.MappingNode:
            return self.DEFAULT_MAPPING_TAG  # type: ignore[no-any-return]
        return self.DEFAULT_SEQUENCE_TAG  # type: ignore[no-any-return]


# Plain scalar text -> resolved tag, for EvalYamlLoader's implicit resolvers (fixed at import).
_RESOLVED: dict[str, str] = {}
_RESOLVED_MAX = 65_536


EvalYamlLoader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag not in _DROPPED_TAGS]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_BOOL_RX = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
# YAML 1.2 core schema ints: decimal (optionally signed), 0o octal, 0x hex. No 1.1 sexagesimal/underscores;
# `012` is decimal 12 and `0o17`/`0x10` are 15/16, as AgentV's parser (JS `yaml`, core schema) reads them.
_INT_RX = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
# YAML 1.2 core schema floats (as JS `yaml` reads them): `1e-3`, `5E2`, `.5`, `1.` are numbers, which
# YAML 1.1 left as strings because it wants a dot and a signed exponent.
_FLOAT_RX = re.compile(
    r"^(?:[-+]?(?:(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


# An integer past 64 bits (JavaScript's `yaml`, AgentV's parser, reads it as an inexact float or
# Infinity) is refused where it stands: Python would carry it until a float() or a JSON writer of it
# crashed. A text longer than any such number is refused before it is parsed.
_MAX_INT_TEXT = 30


def _int_value(text: str, node: yaml.Node | None = None) -> int:
    """A YAML 1.2 core-schema integer (no YAML 1.1 octal `012`, underscores or sexagesimal)."""
    if len(text) > _MAX_INT_TEXT:
        value = MAX_INT + 1
    elif text.startswith("0o"):
        value = int(text[2:], 8)
    elif text.startswith("0x"):
        value = int(text[2:], 16)
    else:
        value = int(text, 10)
    if not MIN_INT <= value <= MAX_INT:
        shown = text if len(text) <= 24 else f"{text[:12]}... ({len(text)} characters)"
        raise yaml.constructor.ConstructorError(
            None,
            None,
            f"the integer {shown} is too large to be a number (64 bits at most)",
            node.start_mark if node is not None else None,
        )
    return value


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    try:
        return _int_value(text, node)
    except ValueError:  # an explicit `!!int` in a YAML 1.1 spelling (`!!int 1_000`)
        return int(yaml.SafeLoader.construct_yaml_int(loader, node))


EvalYamlLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
EvalYamlLoader.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL_RX, list("tTfF"))
EvalYamlLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT_RX, list("-+0123456789"))
EvalYamlLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_RX, list("-+0123456789."))


class MarkedDocument:
    """A parsed YAML document plus the location of every node."""

    def __init__(
        self,
        data: Any,
        marks: dict[JsonPath, tuple[int, int]],
        key_marks: dict[JsonPath, tuple[int, int]],
        file: str,
    ) -> None:
        self.data = data
        self.marks = marks  # value position per path
        self.key_marks = key_marks  # key position per path (mapping entries only)
        self.file = file

    def locate(self, path: JsonPath, *, key: bool = False) -> SourceLocation:
        """Location of `path` (its key when `key=True`), falling back to the nearest ancestor."""
        probe = tuple(path)
        while True:
            table = self.key_marks if key and probe in self.key_marks else self.marks
            if probe in table:
                line, col = table[probe]
                return SourceLocation(self.file, line, col)
            if not probe:
                return SourceLocation(self.file, 1, 1)
            probe = probe[:-1]


_STR_TAG = "tag:yaml.org,2002:str"
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_NULL_TAG = "tag:yaml.org,2002:null"
_SCALAR = yaml.ScalarNode


class _Builder:
    """One walk over the composed nodes: records the marks, refuses duplicate keys, alias bombs and
    over-deep nesting, and builds the Python values as it goes (as `construct_document` would).

    A node it does not build itself (an explicit tag, a merge key `<<`, a non-scalar key, a scalar
    whose text is not its tag's implicit form) sets `fallback`: the document is then constructed by
    the loader after the walk, exactly as before, so those rare cases keep PyYAML's behaviour."""

    __slots__ = (
        "aliases",
        "budget",
        "built",
        "duplicates",
        "fallback",
        "file",
        "key_marks",
        "loader",
        "marks",
    )

    def __init__(self, loader: Any, file: str, budget: int, aliases: bool = True) -> None:
        self.loader = loader
        self.file = file
        self.budget = budget
        self.marks: dict[JsonPath, tuple[int, int]] = {}
        self.key_marks: dict[JsonPath, tuple[int, int]] = {}
        self.duplicates: list[LoadError] = []
        self.built: dict[yaml.Node, Any] = {}  # an aliased collection is one object, as in PyYAML
        self.aliases = aliases  # False when the text has no `&`, so no node can be reached twice
        self.fallback = False

    def walk(self, node: yaml.Node, path: JsonPath) -> Any:
        mark = node.start_mark
        if len(path) > MAX_DEPTH:
            raise LoadError(
                f"document is nested too deeply (more than {MAX_DEPTH} levels)",
                location=SourceLocation(self.file, mark.line + 1, mark.column + 1),
                hint="flatten this structure; eval files never need this much nesting",
            )
        self.budget -= 1
        if self.budget < 0:
            raise LoadError(
                "document expands to too many nodes (YAML alias bomb?)",
                location=SourceLocation(self.file, mark.line + 1, mark.column + 1),
                hint="reduce the use of anchors/aliases (&x / *x)",
            )
        self.marks[path] = (mark.line + 1, mark.column + 1)
        kind = type(node)
        if kind is yaml.ScalarNode:
            return self._scalar(node)
        if kind is yaml.MappingNode:
            return self._mapping(node, path)
        if node.tag != _SEQ_TAG:
            self.fallback = True
        items = [self.walk(item, (*path, index)) for index, item in enumerate(node.value)]
        return self.built.setdefault(node, items) if self.aliases else items

    def _mapping(self, node: yaml.Node, path: JsonPath) -> Any:
        if node.tag != _MAP_TAG:
            self.fallback = True
        mapping: dict[str, Any] = {}
        marks, key_marks = self.marks, self.key_marks
        shallow = len(path) < MAX_DEPTH  # a child's path is within MAX_DEPTH
        for key_node, value_node in node.value:
            if type(key_node) is _SCALAR:
                key: str = key_node.value
            else:
                key = str(key_node.value)
                self.fallback = True  # the loader refuses it after the walk, as before
            if key == "<<":
                self.fallback = True  # merge keys: PyYAML flattens them
                continue
            key_mark = key_node.start_mark
            child = (*path, key)
            if key in mapping:
                self.duplicates.append(
                    LoadError(
                        f"duplicate key {key!r} (first at line {key_marks[child][0]})",
                        location=SourceLocation(self.file, key_mark.line + 1, key_mark.column + 1),
                        hint="each key may appear once per mapping; remove or rename one of them",
                    )
                )
                continue
            key_marks[child] = (key_mark.line + 1, key_mark.column + 1)
            if type(value_node) is _SCALAR and value_node.tag == _STR_TAG and shallow and self.budget > 0:
                # The common case inlined (what `walk` does for a plain string value).
                self.budget -= 1
                mark = value_node.start_mark
                marks[child] = (mark.line + 1, mark.column + 1)
                mapping[key] = value_node.value
            else:
                mapping[key] = self.walk(value_node, child)
        return self.built.setdefault(node, mapping) if self.aliases else mapping

    def _scalar(self, node: yaml.Node) -> Any:
        tag = node.tag
        value: str = node.value
        if tag == _STR_TAG:
            return value
        if tag == _NULL_TAG:
            return None
        loader = self.loader
        if tag == "tag:yaml.org,2002:bool" and _BOOL_RX.match(value):
            return loader.construct_yaml_bool(node)
        if tag == "tag:yaml.org,2002:int" and _INT_RX.match(value):
            return _int_value(value, node)
        if tag == "tag:yaml.org,2002:float" and _FLOAT_RX.match(value):
            return loader.construct_yaml_float(node)
        self.fallback = True  # an explicit tag (`!!binary`, `!!int 0x1F`, `!custom`...)
        return value


class DuplicateKeys(LoadError):
    """Every duplicate key of a document (the first one is this error's own message/location)."""

    def __init__(self, errors: list[LoadError]) -> None:
        super().__init__(errors[0].message, location=errors[0].location, hint=errors[0].hint)
        self.errors = errors


def parse_yaml(text: str, file: str) -> MarkedDocument:
    """Parse one YAML document. Raises `LoadError` with file:line:col on syntax errors,
    duplicate keys (`DuplicateKeys`, carrying all of them) and alias bombs."""
    loader = EvalYamlLoader(text)
    builder = _Builder(loader, file, _NODE_FLOOR + len(text), aliases="&" in text)
    try:
        node = loader.get_single_node()
        data = None
        if node is not None:
            # One walk refuses duplicates and alias bombs before any construction can blow up.
            data = builder.walk(node, ())
            if builder.duplicates:
                raise DuplicateKeys(builder.duplicates)
            if builder.fallback:
                data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, text, file) from None
    except yaml.reader.ReaderError as exc:  # a NUL or another control character: no mark, a position
        line, col = _position_line_col(text, exc.position)
        char = exc.character
        shown = f"U+{char:04X}" if isinstance(char, int) else repr(char)
        raise LoadError(
            f"YAML error: character {shown} is not allowed ({exc.reason})",
            location=SourceLocation(file, line, col),
            hint="remove it: a NUL byte usually means a binary or UTF-16 file",
        ) from None
    except yaml.YAMLError as exc:
        raise LoadError(f"YAML error: {exc}", location=SourceLocation(file)) from None
    except RecursionError:
        raise LoadError("document is nested too deeply", location=SourceLocation(file)) from None
    finally:
        loader.dispose()
    return MarkedDocument(data, builder.marks, builder.key_marks, file)


def _syntax_error(exc: yaml.MarkedYAMLError, text: str, file: str) -> LoadError:
    """The error at the mark that helps: where an unclosed quote opens (PyYAML's problem is at the end
    of the file, lines below the mistake), else where the problem was found."""
    problem = exc.problem or exc.context or "invalid YAML"
    opened = exc.context_mark
    opener = _char_at(text, opened.line, opened.column) if opened is not None else ""
    if (
        opened is not None
        and exc.problem_mark is not None
        and (exc.context or "").startswith("while scanning a quoted scalar")
        and opener in ("'", '"')
        and any(end in problem for end in ("end of stream", "document indicator", "document separator"))
    ):
        ended = f"{exc.problem_mark.line + 1}:{exc.problem_mark.column + 1}"
        return LoadError(
            f"YAML syntax error: a quoted string is not closed ({problem} at {ended})",
            location=SourceLocation(file, opened.line + 1, opened.column + 1),
            hint=f"the quoted string opened here ({opener}) is not closed: add the closing {opener}",
        )
    mark = exc.problem_mark or opened
    loc = SourceLocation(file, mark.line + 1, mark.column + 1) if mark else SourceLocation(file)
    hint = _syntax_hint(problem)
    if hint is None and mark is not None and _char_at(text, mark.line, mark.column) == "\t":
        hint = "YAML does not allow tabs for indentation; use spaces"
    if hint is None and opened is not None and opener in ("[", "{") and "did not find expected" in problem:
        where = f"{opened.line + 1}:{opened.column + 1}"
        hint = f"the {opener} opened at {where} is not closed (or a ',' is missing)"
    if hint is None and mark is not None:
        hint = _quote_closed_late(text, mark)
    what = "YAML error" if "too large to be a number" in problem else "YAML syntax error"
    return LoadError(f"{what}: {problem}", location=loc, hint=hint)


_MAX_RESCAN = 1 << 20  # characters (or bytes) before the problem that `_quote_closed_late` rescans


def _quote_closed_late(text: str, problem: Any) -> str | None:
    """A hint when a quoted string that spans lines ends on the problem's line: a quote left open
    that a later line's quote closed (the error then shows at that later line)."""
    if problem.index > _MAX_RESCAN:
        return None  # tokens are Python objects: a huge file is not scanned twice
    last: Any = None
    try:
        for token in yaml.scan(text, Loader=_Base):
            if token.start_mark.line > problem.line:
                break
            if isinstance(token, yaml.ScalarToken) and token.style in ("'", '"'):
                last = token
    except yaml.YAMLError:
        pass
    if last is None or last.end_mark.line != problem.line or last.start_mark.line == problem.line:
        return None
    start = last.start_mark
    return (
        f"the quoted string opened at {start.line + 1}:{start.column + 1} ({last.style}) is closed only "
        "on this line: is its closing quote missing?"
    )


def _position_line_col(text: str, position: int) -> tuple[int, int]:
    """1-based line:col (in characters) of a reader position: a UTF-8 byte offset from the C parser,
    a character offset from the pure-Python one."""
    if _Base is not yaml.SafeLoader:
        prefix = text.encode("utf-8", "surrogatepass")[:position].decode("utf-8", "replace")
    else:
        prefix = text[:position]
    line_start = prefix.rfind("\n") + 1
    return prefix.count("\n") + 1, len(prefix) - line_start + 1


def _char_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    if line < len(lines) and column < len(lines[line]):
        return lines[line][column]
    return ""


def _syntax_hint(problem: str) -> str | None:
    if "mapping values are not allowed" in problem:
        return "a value containing ': ' must be quoted"
    if "found character '\\t'" in problem:
        return "YAML does not allow tabs for indentation; use spaces"
    if "used as a key" in problem:
        return "a key must be plain text; quote it if it contains [ ] { } or starts with ?"
    if "expected <block end>" in problem:
        return "check the indentation of this line against the lines above"
    if "is too large to be a number" in problem:
        return "quote it to keep it as text"
    return None


def iter_paths(data: Any, path: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    """Every (path, value) in a JSON-like tree, depth first."""
    yield path, data
    if isinstance(data, dict):
        for key, value in data.items():
            yield from iter_paths(value, (*path, str(key)))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from iter_paths(value, (*path, index))
