"""nginx-style block configs (``directive args;`` inside ``name args { … }``): read and set
one directive, every other byte unchanged.

Why our own parser: the Python nginx parsers (crossplane, nginxparser) turn the file into
a tree and write it back from that tree, which re-indents it and drops or moves comments;
hone must change the bytes of one directive's arguments and nothing else. Tokens follow
nginx's own reader (``ngx_conf_read_token``): ``#`` starts a comment only where a token
may start, quotes with ``\\`` escapes, ``${var}`` inside a word, ``;`` and ``{`` end a
word. A stray ``;`` (BIND's ``};``) is an empty statement.

Key paths: ``http.server[1].listen`` — block names from the top, the directive last.
``[N]`` (from 0) picks the N-th block or directive of that name in its parent;
``[ARGS]`` picks the block whose arguments are ARGS (``location[/api]``,
``upstream[backend]``). A name that matches several blocks or directives without a
selector is an error that lists the choices. ``include`` directives are followed by
:func:`locate` only (see :mod:`hone.knobs._includes`): ``get``/``set`` see one file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hone.knobs._errors import ConfigError, MissingBlock

_SPACE = " \t\r\n"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r"}


@dataclass
class Token:
    text: str  # as written, quotes included
    start: int
    end: int

    @property
    def quoted(self) -> bool:
        return self.text[:1] in ("'", '"')

    def value(self) -> str:
        """The argument as nginx sees it: quotes removed, escapes resolved."""
        if not self.quoted:
            return self.text
        # nginx resolves these escapes and keeps any other backslash as written
        return re.sub(r"\\([\"'\\tnr])", lambda m: _ESCAPES.get(m.group(1), m.group(1)), self.text[1:-1])


@dataclass(eq=False)
class Directive:
    name: Token
    args: list[Token]
    end: int  # just past its ';' or its block's '}'
    parent: Directive | None
    file: str
    block: list[Directive] | None = None  # children, for a block directive
    close: int = -1  # index of the block's '}'
    siblings: list[Directive] = field(default_factory=list, repr=False)  # the list it stands in, in its file

    def args_text(self) -> str:
        return " ".join(a.text for a in self.args)

    def local_index(self) -> int:
        """Its position among the same-named directives of its parent, in its own file."""
        same = [d for d in self.siblings if d.name.text == self.name.text]
        return next(i for i, d in enumerate(same) if d is self)

    def local_key(self) -> str:
        """Its key path inside its own file, every step indexed."""
        steps = []
        node: Directive | None = self
        while node is not None:
            steps.append(f"{node.name.text}[{node.local_index()}]")
            node = node.parent
        return ".".join(reversed(steps))


@dataclass
class Parsed:
    text: str
    file: str
    top: list[Directive]


def _tokens(text: str, pos: int) -> tuple[Token | None, int]:
    """The next token at or after ``pos`` (``;``, ``{`` and ``}`` are tokens of their own),
    skipping whitespace and comments; (None, len) at the end."""
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch in _SPACE:
            pos += 1
        elif ch == "#":
            nl = text.find("\n", pos)
            pos = n if nl < 0 else nl + 1
        else:
            break
    if pos >= n:
        return None, n
    ch = text[pos]
    if ch in ";{}":
        return Token(ch, pos, pos + 1), pos + 1
    if ch in ("'", '"'):
        i = pos + 1
        while i < n and text[i] != ch:
            i += 2 if text[i] == "\\" else 1
        if i >= n:
            raise ConfigError(f"line {text.count(chr(10), 0, pos) + 1}: unterminated quoted string")
        return Token(text[pos : i + 1], pos, i + 1), i + 1
    i = pos
    while i < n:
        c = text[i]
        if c == "\\" and i + 1 < n:
            i += 2
            continue
        if c in _SPACE or c == ";":
            break
        if c == "{":
            if i > pos and text[i - 1] == "$":  # ${var}
                close = text.find("}", i)
                i = n if close < 0 else close + 1
                continue
            break
        i += 1
    return Token(text[pos:i], pos, i), i


def parse(text: str, file: str = "") -> Parsed:
    """The directive tree of one file. Raises :class:`ConfigError` on broken syntax."""
    top: list[Directive] = []
    stack: list[Directive] = []
    words: list[Token] = []
    pos = 0
    while True:
        tok, pos = _tokens(text, pos)
        if tok is None:
            break
        parent = stack[-1] if stack else None
        siblings = parent.block if parent is not None and parent.block is not None else top
        if tok.text in (";", "{") and tok.end - tok.start == 1 and not tok.quoted:
            if not words:
                if tok.text == "{":
                    raise ConfigError(f"line {text.count(chr(10), 0, tok.start) + 1}: '{{' without a block name")
                continue  # an empty statement
            d = Directive(words[0], words[1:], tok.end, parent, file, siblings=siblings)
            siblings.append(d)
            words = []
            if tok.text == "{":
                d.block = []
                stack.append(d)
        elif tok.text == "}" and tok.end - tok.start == 1 and not words:
            if not stack:
                raise ConfigError(f"line {text.count(chr(10), 0, tok.start) + 1}: unexpected '}}'")
            block = stack.pop()
            block.close, block.end = tok.start, tok.end
        else:
            words.append(tok)
    if words:
        raise ConfigError(f"line {text.count(chr(10), 0, words[0].start) + 1}: "
                          f"'{words[0].text}' is not ended by ';'")
    if stack:
        raise ConfigError(f"line {text.count(chr(10), 0, stack[-1].name.start) + 1}: "
                          f"block '{stack[-1].name.text}' is not closed by '}}'")
    return Parsed(text, file, top)


# ---------------------------------------------------------------- key paths


def split_key(key: str) -> list[tuple[str, int | str | None]]:
    """``http.server[1].location[/api].root`` → ``[("http", None), ("server", 1), …]``; a
    selector may contain dots."""
    steps: list[tuple[str, int | str | None]] = []
    i, n = 0, len(key)
    while i < n:
        j = i
        while j < n and key[j] not in ".[":
            j += 1
        name = key[i:j]
        selector: int | str | None = None
        if j < n and key[j] == "[":
            close = key.find("]", j)
            if close < 0:
                raise ConfigError(f"key {key}: '[' without ']'")
            raw = key[j + 1 : close].strip()
            selector = int(raw) if raw.isdigit() else raw
            j = close + 1
        if not name or (j < n and key[j] != "."):
            raise ConfigError(f"key {key}: expected names like http.server[0].listen")
        steps.append((name, selector))
        i = j + 1
        if j == n - 1:
            raise ConfigError(f"key {key}: ends with '.'")
    if not steps:
        raise ConfigError("empty key")
    return steps


#: Expands an ``include`` directive into the top-level directives of the files it names.
Expand = Callable[[Directive], list[Directive]]


def _view(nodes: list[Directive], expand: Expand | None) -> list[Directive]:
    """The directives of one context as nginx reads them: includes spliced in place."""
    if expand is None:
        return nodes
    out: list[Directive] = []
    for d in nodes:
        if d.name.text == "include" and d.block is None and len(d.args) == 1:
            out.extend(_view(expand(d), expand))
        else:
            out.append(d)
    return out


def _describe(ds: list[Directive], lines: Callable[[Directive], str]) -> str:
    return ", ".join(lines(d) for d in ds)


def _pick(found: list[Directive], name: str, selector: int | str | None, path: str, kind: str,
          lines: Callable[[Directive], str]) -> Directive | None:
    """The one directive ``path`` names among ``found`` (None when there is none)."""
    if isinstance(selector, str):
        want = " ".join(selector.split())
        found = [d for d in found if " ".join(d.args_text().split()) == want
                 or " ".join(a.value() for a in d.args) == want]
        selector = None
    if isinstance(selector, int):
        if selector >= len(found):
            if not found:
                return None
            raise ConfigError(f"{path}[{selector}]: there {'is' if len(found) == 1 else 'are'} {len(found)} "
                              f"'{name}' {kind}{'s' if len(found) > 1 else ''} here "
                              f"(0{'' if len(found) == 1 else f' … {len(found) - 1}'})")
        return found[selector]
    if len(found) > 1:
        raise ConfigError(f"{path} matches {len(found)} {kind}s ({_describe(found, lines)}): name one as "
                          f"{path}[0] … {path}[{len(found) - 1}]")
    return found[0] if found else None


@dataclass
class Located:
    """Where a key path leads: the directive (None when absent) and the block it is, or
    would be, in (None for the top level)."""

    directive: Directive | None
    parent: Directive | None


def walk(parsed: Parsed, key: str, expand: Expand | None = None,
         texts: dict[str, str] | None = None) -> Located:
    """Follow ``key`` through ``parsed`` (and the files ``expand`` splices in)."""
    steps = split_key(key)
    all_texts = texts if texts is not None else {}  # filled as includes are read: kept by reference
    all_texts.setdefault(parsed.file, parsed.text)

    def lines(d: Directive) -> str:
        text = all_texts.get(d.file, "")
        line = text.count("\n", 0, d.name.start) + 1
        return f"line {line}" if d.file == parsed.file else f"{d.file}:{line}"

    context = _view(parsed.top, expand)
    parent: Directive | None = None
    for i, (name, selector) in enumerate(steps):
        path = ".".join(n + (f"[{s}]" if s is not None else "") for n, s in steps[:i]) + ("." if i else "") + name
        last = i == len(steps) - 1
        if last:
            if isinstance(selector, str):
                raise ConfigError(f"{key}: a directive is picked by its position ({name}[0]), not by its arguments")
            found = [d for d in context if d.name.text == name]
            d = _pick(found, name, selector, path, "directive", lines)
            if d is not None and d.block is not None:
                raise ConfigError(f"{path}{'' if selector is None else f'[{selector}]'} is a block, not a directive "
                                  "with a value")
            return Located(d, parent)
        found = [d for d in context if d.name.text == name and d.block is not None]
        block = _pick(found, name, selector, path, "block", lines)
        if block is None:
            inside = f"in {path.rsplit('.', 1)[0]}" if i else "at the top level"
            sel = f" with arguments '{selector}'" if isinstance(selector, str) else ""
            raise MissingBlock(f"no '{name}' block{sel} {inside}, so {key} cannot be set")
        assert block.block is not None
        parent = block
        context = _view(block.block, expand)
    raise AssertionError("unreachable")


# ---------------------------------------------------------------- get / set in one file


def get(text: str, key: str) -> str | None:
    """The arguments of the directive ``key`` names: one quoted argument without its quotes,
    else the arguments as written, joined by one space (``80 default_server``)."""
    try:
        found = walk(parse(text), key)
    except MissingBlock:
        return None  # its block does not exist: the directive is absent
    d = found.directive
    if d is None:
        return None
    if len(d.args) == 1 and d.args[0].quoted:
        return d.args[0].value()
    return d.args_text()


def _quote(value: str, q: str = '"') -> str:
    return q + value.replace("\\", "\\\\").replace(q, "\\" + q) + q


def _as_args(value: str) -> str:
    """``value`` as nginx arguments: as given when it reads back as the same words, else
    one quoted argument (so ``;``, ``{`` or ``#`` in a value never end the directive)."""
    try:
        parsed = parse(f"x {value};")
    except ConfigError:
        return _quote(value)
    top = parsed.top
    if (len(top) == 1 and top[0].block is None and top[0].name.text == "x" and "\n" not in value
            and "#" not in value and top[0].args_text() == " ".join(value.split())
            and not any(a.text == "}" or a.text.endswith("\\") for a in top[0].args)
            and not (len(top[0].args) == 1 and top[0].args[0].quoted)):  # `"a b"` would read back as `a b`
        return value.strip()
    return _quote(value)


def _line_start(text: str, pos: int) -> int:
    return text.rfind("\n", 0, pos) + 1


def _indent_of(text: str, pos: int) -> str | None:
    """The whitespace before ``pos`` on its line, or None if something else stands there."""
    start = _line_start(text, pos)
    lead = text[start:pos]
    return lead if lead.strip() == "" else None


def set_(text: str, key: str, value: str) -> str:
    """``text`` with directive ``key`` set to ``value``; an absent directive is added as the
    last one of its block (before the ``}``, indented like the block's directives)."""
    parsed = parse(text)
    found = walk(parsed, key)
    d = found.directive
    if d is not None:
        one_quoted = len(d.args) == 1 and d.args[0].quoted
        new = _quote(value, d.args[0].text[0]) if one_quoted else _as_args(value)
        if not d.args:
            return text[: d.name.end] + (" " + new if new else "") + text[d.name.end :]
        return text[: d.args[0].start] + new + text[d.args[-1].end :]
    name = split_key(key)[-1][0]
    args = _as_args(value)
    line = f"{name} {args};" if args else f"{name};"
    block = found.parent
    nl = "\r\n" if "\r\n" in text else "\n"  # the file's own line ends
    if block is None:
        sep = "" if not text or text.endswith("\n") else nl
        return f"{text}{sep}{line}{nl}"
    assert block.block is not None
    close_indent = _indent_of(text, block.close)
    inner = None
    for child in reversed(block.block):
        inner = _indent_of(text, child.name.start)
        if inner is not None:
            break
    if close_indent is not None:  # the '}' starts its line: a new line before it
        if inner is None:
            outer = _indent_of(text, block.name.start) or close_indent
            inner = outer + ("\t" if outer.startswith("\t") else "    ")
        at = _line_start(text, block.close)
        return text[:at] + inner + line + nl + text[at:]
    gap = "" if text[block.close - 1] in _SPACE else " "  # `server { listen 80; }` on one line
    return text[: block.close] + gap + line + " " + text[block.close :]


__all__ = ["Directive", "Expand", "Located", "Parsed", "get", "parse", "set_", "split_key", "walk"]
