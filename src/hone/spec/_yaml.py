"""YAML loading that remembers where each value came from (for ``FILE:LINE`` errors).

PyYAML's composer gives every node a start mark; we walk the node tree once to build the
plain Python value and a map from path (``("knobs", 2, "range")``) to 1-based line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from hone.core.errors import SpecError

Loc = tuple[str | int, ...]


def format_loc(loc: Loc) -> str:
    """``("knobs", 2, "range")`` → ``knobs[2].range``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


class LocatedYaml:
    """A parsed YAML document with line numbers for every key and list item."""

    def __init__(self, data: Any, lines: dict[Loc, int], path: str) -> None:
        self.data = data
        self.lines = lines
        self.path = path

    def line_of(self, loc: Loc) -> int:
        """The line of the deepest known prefix of ``loc`` (1 when nothing matches)."""
        for n in range(len(loc), -1, -1):
            line = self.lines.get(tuple(loc[:n]))
            if line is not None:
                return line
        return 1


#: Deepest nesting of mappings and lists a spec may have: PyYAML composes recursively, and
#: a few hundred levels exhaust Python's stack (no real spec comes near this).
MAX_DEPTH = 100


def _check_depth(text: str, name: str) -> None:
    """SpecError at the line where ``text`` nests deeper than :data:`MAX_DEPTH` (checked on
    the parser's events, which need no recursion, before the recursive composer runs)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                line = event.start_mark.line + 1 if event.start_mark else 1
                raise SpecError(f"{name}:{line}: invalid YAML: nested more than {MAX_DEPTH} levels deep")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _build(node: yaml.Node, loc: Loc, lines: dict[Loc, int], name: str) -> Any:
    lines.setdefault(loc, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _build(key_node, (*loc, "\0key"), {}, name)
            child = (*loc, key)
            line = key_node.start_mark.line + 1
            if key in out:
                # PyYAML keeps the last value silently: a second `metrics:` would drop the first
                raise SpecError(f"{name}:{line}: {format_loc(child)}: duplicate key (first at line {lines[child]})")
            lines[child] = line
            out[key] = _build(value_node, child, lines, name)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, (*loc, i), lines, name) for i, item in enumerate(node.value)]
    # Scalars: let the safe constructor resolve the tag (int, float, bool, null, str).
    return yaml.SafeLoader("").construct_object(node, deep=True)  # type: ignore[arg-type]


def load_located(path: str | Path) -> LocatedYaml:
    """Read ``path`` as YAML. Unreadable or malformed files raise :class:`SpecError`."""
    name = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise SpecError(f"{name}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SpecError(f"{name}: cannot read: not UTF-8 text ({exc.reason})") from exc
    return parse_located(text, name)


def parse_located(text: str, name: str) -> LocatedYaml:
    """Parse YAML ``text`` (named ``name`` in errors)."""
    try:
        _check_depth(text, name)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        line = exc.problem_mark.line + 1 if exc.problem_mark else 1
        raise SpecError(f"{name}:{line}: invalid YAML: {exc.problem}") from exc
    except yaml.YAMLError as exc:
        raise SpecError(f"{name}: invalid YAML: {exc}") from exc
    lines: dict[Loc, int] = {}
    data = _build(node, (), lines, name) if node is not None else None
    return LocatedYaml(data, lines, name)
