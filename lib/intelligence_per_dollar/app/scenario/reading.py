"""Reading a scenario file safely: bounded size, no aliases, plain data, numbers only where the
file writes numbers.

A scenario is a short hand-written file (the shipped ones are a few kB with under a hundred
values), so the reader refuses anything far outside that instead of spending minutes on it:

* more than :data:`MAX_FILE_BYTES` bytes (read no further than that, so ``/dev/zero`` is refused too);
* YAML aliases (``*name``, and the merge keys ``<<: *name`` built on them): an alias repeats a
  node, and nine levels of nine make a billion ("billion laughs"); write the value out instead;
* more than :data:`MAX_NODES` values or nesting deeper than :data:`MAX_DEPTH`.

Values are built by PyYAML's safe constructors (mappings, lists, strings, numbers, booleans,
null; no Python objects). One change to its YAML 1.1 rules: an unquoted number in exponent form
without a dot (``1e14``, ``2E-3``) is a number, as in YAML 1.2 (1.1 reads it as a string). A
quoted value (``"2026"``, ``'0.25'``) stays a string, so a parameter that wants a number refuses
it instead of silently converting it.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

#: Largest scenario file read (the shipped ones are under 4 kB).
MAX_FILE_BYTES = 256 * 1024
#: Most YAML nodes (mappings, lists, keys and values) in one file.
MAX_NODES = 5_000
#: Deepest nesting of mappings and lists.
MAX_DEPTH = 32

#: YAML 1.2 numbers in exponent form without a dot, which YAML 1.1 leaves as strings.
_EXPONENT_FLOAT = re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$")


class ReadError(Exception):
    """The file cannot be read as a scenario: ``message``, what is ``allowed``, 1-based ``line``."""

    def __init__(self, message: str, allowed: str, line: int | None = None):
        super().__init__(message)
        self.message, self.allowed, self.line = message, allowed, line


class _Loader(yaml.SafeLoader):
    """The safe loader with aliases refused and nodes counted while the tree is composed."""

    def __init__(self, stream):
        super().__init__(stream)
        self.nodes = 0
        self.depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent):
            raise ReadError(f"YAML alias *{event.anchor} is not allowed (an alias repeats a node; nested aliases "
                            f"expand without bound)", "plain YAML: write the value out instead of an alias", line)
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ReadError(f"more than {MAX_NODES:,} values", f"at most {MAX_NODES:,} values", line)
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise ReadError(f"nested deeper than {MAX_DEPTH} levels", f"at most {MAX_DEPTH} levels", line)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


_Loader.add_implicit_resolver("tag:yaml.org,2002:float", _EXPONENT_FLOAT, list("-+0123456789"))


def read_text(path: Path) -> str:
    """The file's text: at most :data:`MAX_FILE_BYTES` bytes of UTF-8."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as ex:
        raise ReadError(f"cannot read the file: {ex}", "a readable UTF-8 YAML file") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ReadError(f"the file is larger than {MAX_FILE_BYTES // 1024} KiB",
                        f"a scenario file of at most {MAX_FILE_BYTES // 1024} KiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as ex:
        raise ReadError(f"cannot read the file: not UTF-8 ({ex.reason} at byte {ex.start})",
                        "a readable UTF-8 YAML file") from None


def parse(text: str) -> tuple[object, yaml.Node | None]:
    """``(data, node tree)`` of one YAML document; :class:`ReadError` if it is not plain YAML."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as ex:
        mark = getattr(ex, "problem_mark", None)
        msg = " ".join(str(ex).split())
        raise ReadError(f"not valid YAML (or a YAML tag the safe loader refuses): {msg[:300]}",
                        "plain YAML: mappings, lists, strings, numbers, booleans",
                        mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()
    return data, node


def index(root: yaml.Node | None) -> tuple[dict[tuple, int], list[tuple[tuple, int, int]]]:
    """One walk of the node tree: ``(key path -> 1-based line, keys given twice)``; each key given
    twice is ``(path, first line, second line)`` (:func:`yaml.safe_load` would keep the last)."""
    lines: dict[tuple, int] = {}
    twice: list[tuple[tuple, int, int]] = []

    def walk(node, path):
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                line = k.start_mark.line + 1
                if key in seen:
                    twice.append((path + (key,), seen[key], line))
                seen[key] = line
                walk(v, path + (key,))
                lines[path + (key,)] = line
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, path + (i,))

    if root is not None:
        walk(root, ())
    return lines, twice
