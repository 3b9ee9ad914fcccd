"""Reading pack files with line numbers, and checking them against the shipped schemas.

The JSON Schemas in ``schemas/`` are the single description of the format: editors use
them for completion, and the loader and the linter check every file against them. The
runtime install has no ``jsonschema`` dependency, so this module implements the small
subset of JSON Schema the shipped schemas use (type, properties, required,
additionalProperties, patternProperties, items, minItems, uniqueItems, minLength,
pattern, enum, anyOf, $ref). The test suite checks that ``jsonschema`` agrees.

YAML is read with ``yaml.SafeLoader`` only. The node tree gives each value its line, so
a schema error can be reported as ``path:line``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import regex
import yaml

from guardlex.errors import PackError

SCHEMA_DIR = Path(__file__).with_name("schemas")
FILE_KINDS = (
    "locale",
    "concepts",
    "refusal",
    "overview",
    "stopwords",
    "first_person",
    "lexicon",
    "messages",
)
SCHEMA_VERSIONS = frozenset({1, 2})

JsonPath = tuple[str | int, ...]
# The C-accelerated loader is the same safe loader, only faster; both build plain data.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Problem:
    """One schema violation: where it is and what is wrong, in words for a linguist."""

    path: JsonPath
    message: str


@dataclass
class PackFile:
    """A parsed pack file with the line of every value (1-based), keyed by JSON path."""

    path: Path
    kind: str
    data: dict[str, Any]
    lines: dict[JsonPath, int] = field(default_factory=dict)

    def line(self, json_path: JsonPath) -> int:
        """The line of ``json_path``, or of its nearest ancestor with a known line."""
        p = tuple(json_path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), 1)


@cache
def load_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema shipped for one file kind."""
    with (SCHEMA_DIR / f"{kind}.schema.json").open(encoding="utf-8") as fh:
        schema: dict[str, Any] = json.load(fh)
    return schema


#: The largest pack file read (bytes). Generated word lists stay far below it; a bigger
#: file is a mistake (or an attack on the loader), not a pack.
MAX_PACK_FILE_BYTES = 8 * 1024 * 1024

# PyYAML's wording -> what a linguist should do (first matching fragment wins)
_YAML_HINTS: tuple[tuple[str, str], ...] = (
    (
        "cannot start any token",
        "a tab or another character YAML does not allow here; indent "
        "with spaces only, and put text that starts with @, `, %, | or > in quotes",
    ),
    (
        "mapping values are not allowed",
        "a ':' followed by a space inside a value; put the "
        "whole value in quotes ('how much: exactly') or check the indentation of this line",
    ),
    (
        "could not find expected ':'",
        "a line that should read 'key: value' has no ':', or a quote opened earlier is not closed",
    ),
    (
        "did not find expected key",
        "this line is not aligned with the keys above it; indent "
        "it like its neighbours (spaces only)",
    ),
    (
        "did not find expected '-' indicator",
        "a list item is not aligned with the other items; "
        "start every item with '- ' at the same indentation",
    ),
    ("expected <block end>", "the indentation of this line does not match the lines above it"),
    (
        "unknown escape character",
        "a backslash in double-quoted text; write regular "
        "expressions in single quotes ('\\mword\\M')",
    ),
    (
        "expected ',' or ']'",
        "a [list] is not closed, or one of its items contains a ':' or '#' and needs quotes",
    ),
    ("expected ',' or '}'", "a {mapping} is not closed, or one of its values needs quotes"),
    ("while scanning a quoted scalar", "a quote is opened but never closed"),
    (
        "found unexpected end of stream",
        "the file ends in the middle of a value; a quote or a bracket is not closed",
    ),
    ("found undefined alias", "'*' starts a YAML alias; put text that starts with * in quotes"),
    (
        "expected alphabetic or numeric character",
        "'*' or '&' starts a YAML alias or anchor; put text that starts with * or & in quotes",
    ),
    (
        "found duplicate anchor",
        "YAML anchors (&name) are not allowed in packs; write values out in full",
    ),
)


def explain_yaml_error(exc: yaml.YAMLError) -> tuple[str, int | None]:
    """A sentence for a linguist about a YAML syntax error, and its line (1-based)."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    raw = " ".join(
        str(x) for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x
    ) or str(exc)
    for fragment, hint in _YAML_HINTS:
        if fragment in raw:
            return f"this is not valid YAML: {hint}", line
    return "this is not valid YAML; check the indentation (spaces only) and the quotes", line


def _line_map(
    node: yaml.Node,
    path: JsonPath,
    out: dict[JsonPath, int],
    seen: set[int] | None = None,
    file: str = "",
) -> None:
    """Record each value's line; reject aliases (a node reached twice) and duplicate keys."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        raise PackError(
            f"{_describe(path)} repeats the value written on line {node.start_mark.line + 1} "
            "through a YAML alias (*name); aliases and anchors are not allowed in packs: "
            "write the value out in full",
            file,
            out.get(path, node.start_mark.line + 1),
        )
    seen.add(id(node))
    out[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        keys: dict[str, int] = {}
        for key, value in node.value:
            name = str(key.value)
            child: JsonPath = (*path, name)
            if name == "<<":
                raise PackError(
                    "'<<' merges another mapping through a YAML alias; aliases are not allowed "
                    "in packs: write the keys out in full",
                    file,
                    key.start_mark.line + 1,
                )
            if name in keys:
                raise PackError(
                    f"the key '{name}' appears twice in {_describe(path)} (first on line "
                    f"{keys[name]}); YAML would silently keep only the second: merge them",
                    file,
                    key.start_mark.line + 1,
                )
            keys[name] = key.start_mark.line + 1
            out[child] = key.start_mark.line + 1
            _line_map(value, child, out, seen, file)
            out[child] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _line_map(item, (*path, i), out, seen, file)


def _stringify_keys(value: Any) -> Any:
    """YAML turns ``1:`` into an int key; JSON Schema and the engine expect strings."""
    if isinstance(value, dict):
        return {str(k): _stringify_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stringify_keys(v) for v in value]
    return value


def read_pack_file(path: Path, kind: str) -> PackFile:
    """Parse one pack file safely: a size limit, no aliases, no duplicate keys; a YAML
    syntax error becomes a PackError with its line, explained in words."""
    try:
        size = path.stat().st_size
        if size > MAX_PACK_FILE_BYTES:
            raise PackError(
                f"the file has {size:,} bytes, more than the {MAX_PACK_FILE_BYTES:,} a pack file "
                "may have; split it, or use stems and concepts instead of listing every form",
                str(path),
            )
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PackError(f"cannot read the file ({exc}); save it as UTF-8", str(path)) from exc
    lines: dict[JsonPath, int] = {}
    try:
        loader = _SAFE_LOADER(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _line_map(node, (), lines, file=str(path))
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        message, line = explain_yaml_error(exc)
        raise PackError(message, str(path), line) from exc
    if not isinstance(data, dict):
        raise PackError(
            "the file must be a mapping that starts with 'locale:' and 'schema_version:'",
            str(path),
            1,
        )
    return PackFile(path=path, kind=kind, data=_stringify_keys(data), lines=lines)


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
}


def _type_ok(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def _describe(path: JsonPath) -> str:
    if not path:
        return "the file"
    parts: list[str] = []
    for p in path:
        parts.append(f"[{p}]" if isinstance(p, int) else (f".{p}" if parts else str(p)))
    return "'" + "".join(parts) + "'"


def validate(
    data: Any, schema: dict[str, Any], root: dict[str, Any] | None = None
) -> list[Problem]:
    """Check ``data`` against ``schema``; an empty list means valid."""
    out: list[Problem] = []
    _validate(data, schema, root or schema, (), out)
    return out


def _validate(
    value: Any, schema: dict[str, Any], root: dict[str, Any], path: JsonPath, out: list[Problem]
) -> None:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        _validate(value, root["$defs"][name], root, path, out)
        return
    where = _describe(path)
    expected = schema.get("type")
    if expected and not _type_ok(value, expected):
        kind = {"object": "a mapping (key: value)", "array": "a list", "string": "text"}.get(
            expected, expected
        )
        hint = ""
        if expected == "string" and isinstance(value, dict):
            hint = "; text containing ': ' must be quoted, e.g. 'a: b'"
        elif expected == "string" and isinstance(value, (bool, int, float)):
            hint = "; YAML reads yes/no/on/off and numbers as values: put the word in quotes"
        got = {"dict": "a mapping", "list": "a list", "str": "text", "NoneType": "empty"}.get(
            type(value).__name__, type(value).__name__
        )
        out.append(Problem(path, f"{where} must be {kind}, not {got}{hint}"))
        return
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(str(v) for v in schema["enum"])
        out.append(Problem(path, f"{where} is {value!r}; allowed values: {allowed}"))
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(Problem(path, f"{where} is empty; write a value or remove the entry"))
        pat = schema.get("pattern")
        if pat and not regex.search(pat, value, timeout=1.0):
            wanted = schema.get("x-hint")
            if wanted:  # the schema says in words what the pattern wants
                out.append(Problem(path, f"{where} is {value!r}; write {wanted}"))
            else:
                out.append(Problem(path, f"{where} is {value!r}, which does not match {pat}"))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            out.append(
                Problem(
                    path, f"{where} needs at least {schema['minItems']} item(s), has {len(value)}"
                )
            )
        if schema.get("uniqueItems"):
            seen: set[str] = set()
            for item in value:
                key = json.dumps(item, sort_keys=True, ensure_ascii=False)
                if key in seen:
                    out.append(Problem(path, f"{where} lists {item!r} twice; remove one"))
                seen.add(key)
        if "items" in schema:
            for i, item in enumerate(value):
                _validate(item, schema["items"], root, (*path, i), out)
    if isinstance(value, dict):
        for name in schema.get("required", ()):
            if name not in value:
                out.append(Problem(path, f"{where} is missing '{name}'; add it"))
        props = schema.get("properties", {})
        pattern_props = schema.get("patternProperties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                _validate(item, props[key], root, (*path, key), out)
                continue
            matched = False
            for pat, sub in pattern_props.items():
                if regex.search(pat, key, timeout=1.0):
                    matched = True
                    _validate(item, sub, root, (*path, key), out)
            if matched:
                continue
            if extra is False:
                known = ", ".join(list(props) + list(pattern_props)) or "none"
                out.append(
                    Problem(
                        (*path, key),
                        f"unknown key '{key}' in {where}; allowed keys: {known} (check spelling)",
                    )
                )
            elif isinstance(extra, dict):
                _validate(item, extra, root, (*path, key), out)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if all(validate(value, opt, root) for opt in options):
            needs = " or ".join(
                "/".join(opt.get("required", [])) or "another form" for opt in options
            )
            out.append(Problem(path, f"{where} needs {needs}"))
