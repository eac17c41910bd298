"""Bind values to placeholders in shell text: the value reaches the shell as a variable, never as code.

hone fills user values (knob values, sweep values, a binary's path, benchmark output) into
commands the user wrote as shell text: ``{name}`` placeholders (benchmark, ``hone compare``
and ``hone pgo`` commands) and ``$value``/``${value}``/``$out`` references (script knobs,
A-Tune files). Pasting the value into the text would let ``3; touch pwned`` run code. Here
each placeholder is rewritten into a reference to an environment variable that holds the
value, spelled for the quoting context it stands in:

* unquoted (also inside ``$(…)``, backticks, ``${x:-…}``): ``"$VAR"`` — one word, never
  split or globbed;
* inside ``"…"``, an unquoted here-document body (``<<EOF``) or ``$((…))``: ``${VAR}``;
* inside ``'…'``: ``'"$VAR"'`` (close the quote, insert, reopen), so A-Tune's
  ``sed 's/x/$value/'`` idiom gets the value;
* in a comment: left as it is;
* inside a quoted here-document (``<<'EOF'``), ``$'…'``, or as a parameter name
  (``${{n}}``): refused (:class:`ShellTextError`), the shell expands nothing there.

A value the variable cannot carry is refused when it is bound: a NUL byte, more than the
kernel's 128 KiB per environment string, or anything but an integer where the placeholder
stands inside ``$((…))`` (shell arithmetic evaluates the text it is given). A backslash
right before a placeholder (``\\{n}``) keeps it literal.

Why a small lexer of our own: no maintained library binds placeholders by quoting context.
:mod:`shlex` only splits words (it knows neither ``$(…)``, backticks, here-documents nor
comments); bashlex parses bash into word nodes, which do not say in which quoting context
each character of a word sits. This one tracks exactly the contexts above and copies every
other byte unchanged (``case`` patterns are followed so that their ``)`` does not end a
``$(…)``). Where it could still misjudge a context (bash's ``((…))`` command, ``<<`` read as
a here-document), the value still travels only in a variable: a misjudged context can lose or
split the value, never run it (what the script itself does with the variable, such as
``eval "$VAR"`` or bash's ``[[ $VAR -eq 1 ]]``, is the script's own business).

:func:`shell_script_index` finds the script of argv commands that run a shell with ``-c``
(``sh -c``, ``bash -lc``, ``busybox sh -c``, behind ``env``/``nice``/``timeout``/… prefixes),
so :func:`bind_argv` binds that script the same way and fills other argv elements in place.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from hone.core.errors import HoneError

Style = Literal["braces", "dollar"]

#: Linux's limit on one argv or environment string (MAX_ARG_STRLEN), "NAME=value\\0" included.
ENV_STRING_MAX = 128 * 1024
BRACES = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME_CHARS = _NAME_START | frozenset("0123456789")
_SPECIAL_PARAMS = frozenset("@*#?-$!0123456789")
_WORD_BREAK = frozenset(" \t\n;&|()<>")
_KEYWORD = re.compile(r"[A-Za-z]+(?=[ \t\n;&|()<>]|$)")
# Reserved words after which a command starts (``case``/``esac`` are tracked for patterns).
_RESERVED = frozenset({"case", "esac", "then", "do", "else", "elif", "if", "while", "until", "time"})
_INTEGER = re.compile(r"[-+]?(?:0[xX][0-9A-Fa-f]+|[0-9]+)")
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "ash", "yash", "hush", "posh"})


class ShellTextError(HoneError):
    """A placeholder in a context that cannot carry a value, or a value its variable cannot hold."""


def placeholder_label(name: str, style: Style) -> str:
    """How the user wrote the placeholder: ``{n}`` or ``$value``."""
    return "{" + name + "}" if style == "braces" else "$" + name


def placeholder_variables(names: Iterable[str], prefix: str = "HONE_PARAM_") -> dict[str, str]:
    """A distinct environment variable for each placeholder name (``n`` → ``HONE_PARAM_n``;
    characters a variable name cannot hold become ``_``, numbered if that collides)."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(set(names)):
        base = prefix + re.sub(r"[^A-Za-z0-9_]", "_", name)
        var, i = base, 2
        while var in taken:
            var, i = f"{base}_{i}", i + 1
        taken.add(var)
        out[name] = var
    return out


@dataclass(frozen=True)
class ShellTemplate:
    """Shell text whose placeholders now read environment variables.

    ``variables`` maps each placeholder name used to the variable that must hold its value;
    ``arithmetic`` names the placeholders inside ``$((…))`` (their values must be integers)."""

    text: str
    variables: dict[str, str] = field(default_factory=dict)
    arithmetic: frozenset[str] = frozenset()
    style: Style = "braces"
    what: str = "shell text"

    def environment(self, values: Mapping[str, str]) -> dict[str, str]:
        """The variables to add to the command's environment for ``values`` (by placeholder
        name). Raises ShellTextError for a value its variable cannot carry."""
        env: dict[str, str] = {}
        for name, var in self.variables.items():
            value = values[name]
            label = placeholder_label(name, self.style)
            check_value(value, _where(self.what, label))
            if not fits_environment(var, value):
                raise ShellTextError(f"{_where(self.what, label)}: the value is {len(value.encode())} bytes, more"
                                     f" than the {ENV_STRING_MAX // 1024} KiB an environment variable can hold")
            if name in self.arithmetic and not _INTEGER.fullmatch(value.strip()):
                raise ShellTextError(f"{_where(self.what, label)}: it stands inside $((…)), which evaluates it;"
                                     f" expected an integer, got {value[:60]!r}")
            env[var] = value
        return env


def _where(what: str, label: str) -> str:
    """``benchmark.command: {n}`` — what holds the placeholder, then the placeholder."""
    return f"{what}: {label}" if what else label


def check_value(value: str, where: str) -> None:
    """Refuse a value no argv element or environment variable can hold (a NUL byte)."""
    if "\0" in value:
        raise ShellTextError(f"{where}: the value {value[:60]!r} contains a NUL byte, which no command"
                             " argument or environment variable can hold")


def fits_environment(name: str, value: str) -> bool:
    """Whether ``name=value`` fits in one environment string (exec fails with E2BIG otherwise)."""
    return len(name.encode()) + len(value.encode()) + 2 <= ENV_STRING_MAX


# ---------------------------------------------------------------- the lexer

Edit = tuple[int, int, str]


class _Lexer:
    """One pass over shell text, recording an edit for every placeholder by its context."""

    def __init__(self, text: str, names: frozenset[str], style: Style, variables: Mapping[str, str],
                 what: str) -> None:
        self.text = text
        self.limit = len(text)
        self.i = 0
        self.names = names
        self.style = style
        self.variables = variables
        self.what = what
        self.edits: list[Edit] = []
        self.arith: set[str] = set()
        self.used: set[str] = set()

    # -- placeholders ------------------------------------------------------------------

    def match(self, i: int) -> tuple[str, int] | None:
        """(name, end) when a placeholder starts at ``i``."""
        t = self.text
        if self.style == "braces":
            if t[i] != "{":
                return None
            m = BRACES.match(t, i, self.limit)
            return (m.group(1), m.end()) if m and m.group(1) in self.names else None
        if t[i] != "$" or i + 1 >= self.limit:
            return None
        if t[i + 1] == "{":
            close = t.find("}", i + 2, self.limit)
            name = t[i + 2:close] if close > 0 else ""
            return (name, close + 1) if name in self.names else None
        j = i + 1
        while j < self.limit and t[j] in _NAME_CHARS:
            j += 1
        return (t[i + 1:j], j) if t[i + 1:j] in self.names else None

    def refuse(self, name: str, where: str, hint: str) -> ShellTextError:
        label = placeholder_label(name, self.style)
        return ShellTextError(f"{_where(self.what, label)}: it stands {where}, where the shell substitutes nothing;"
                              f" {hint}")

    def placeholder(self, found: tuple[str, int], context: str) -> None:
        """Edit the placeholder at ``self.i`` for an unquoted ("word"), double-quoted ("dq")
        or arithmetic ("arith") context."""
        name, end = found
        var = self.variables[name]
        self.used.add(name)
        if context == "arith":
            self.arith.add(name)
        if context == "word":
            self.edits.append((self.i, end, f'"${var}"'))
        elif self.style == "braces":
            self.edits.append((self.i, end, "${" + var + "}"))
        # a $name reference inside double quotes already expands the variable: unchanged
        self.i = end

    # -- contexts ----------------------------------------------------------------------

    def command(self, closer: bool = False) -> None:
        """Unquoted shell code up to the end, or up to the ``)`` that closes ``$(`` when ``closer``."""
        t = self.text
        depth = 0
        word_start = True
        heredocs: list[tuple[str, bool, bool]] = []
        # Open ``case`` commands: "header" (before ``in``), "pattern" (a pattern's ``)`` is
        # not the end of ``$(``) or "body" (up to ``;;``).
        cases: list[str] = []
        command_start = True  # where a reserved word (case, esac, then, …) counts as one
        while self.i < self.limit:
            c = t[self.i]
            if c == ")" and depth == 0 and cases and cases[-1] == "pattern":
                cases[-1] = "body"
                self.i += 1
                word_start = command_start = True
                continue
            if c == ")" and closer and depth == 0:
                return
            if word_start and c in _NAME_START:
                word = _KEYWORD.match(t, self.i, self.limit)
                reserved = word.group(0) if word else ""
                if reserved == "in" and cases and cases[-1] == "header":
                    cases[-1] = "pattern"
                elif reserved in _RESERVED and command_start:
                    if reserved == "case":
                        cases.append("header")
                    elif reserved == "esac" and cases and cases[-1] != "header":
                        cases.pop()
                else:
                    reserved = ""
                if reserved:
                    assert word is not None
                    self.i = word.end()
                    word_start = False
                    command_start = reserved not in ("case", "esac")
                    continue
            if c == ";" and cases and cases[-1] == "body" and t.startswith((";;", ";&"), self.i):
                cases[-1] = "pattern"
                self.i += 3 if t.startswith(";;&", self.i) else 2
                word_start = command_start = True
                continue
            if c == "(" and word_start and cases and cases[-1] == "pattern":
                self.i += 1  # a pattern's optional opening parenthesis
                continue
            if c not in " \t":
                command_start = c in ";&|()\n"
            found = self.match(self.i)
            if found:
                self.placeholder(found, "word")
                word_start = False
                continue
            if c == "\\":
                self.i += 2
            elif c == "'":
                self.single()
            elif c == '"':
                self.i += 1
                self.double()
            elif c == "`":
                self.backtick(in_double=False)
            elif c == "$":
                self.dollar(quoted=False)
            elif c == "#" and word_start:
                end = t.find("\n", self.i, self.limit)
                self.i = self.limit if end < 0 else end
                continue
            elif c == "\n":
                self.i += 1
                for delimiter, strip, quoted in heredocs:
                    self.heredoc(delimiter, strip, quoted)
                heredocs.clear()
                word_start = True
                continue
            elif t.startswith("<<<", self.i):
                self.i += 3
            elif t.startswith("<<", self.i):
                self.i += 2
                heredocs.append(self.heredoc_word())
            else:
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth = max(0, depth - 1)
                self.i += 1
                word_start = c in _WORD_BREAK
                continue
            word_start = False

    def single(self) -> None:
        """``'…'``: a placeholder closes the quote, expands the variable in double quotes and
        reopens it (quotes that would enclose nothing are dropped)."""
        t = self.text
        opening = self.i
        self.i += 1
        hits: list[tuple[int, int, str]] = []
        while self.i < self.limit and t[self.i] != "'":
            found = self.match(self.i)
            if found:
                hits.append((self.i, found[1], found[0]))
                self.i = found[1]
            else:
                self.i += 1
        closing = self.i
        self.i = min(self.i + 1, self.limit)
        for start, end, name in hits:
            self.used.add(name)
            before, after = "'", "'"
            if start == opening + 1:
                start, before = opening, ""
            if end == closing and closing < self.limit:
                end, after = closing + 1, ""
            self.edits.append((start, end, f'{before}"${self.variables[name]}"{after}'))

    def double(self) -> None:
        """``"…"`` after its opening quote, through the closing one."""
        t = self.text
        while self.i < self.limit:
            c = t[self.i]
            if c == '"':
                self.i += 1
                return
            found = self.match(self.i)
            if found:
                self.placeholder(found, "dq")
            elif c == "\\":
                self.i += 2  # an escape, or a literal backslash that keeps a placeholder literal
            elif c == "`":
                self.backtick(in_double=True)
            elif c == "$":
                self.dollar(quoted=True)
            else:
                self.i += 1

    def dollar(self, quoted: bool) -> None:
        """An expansion starting with ``$`` (not a placeholder)."""
        t = self.text
        nxt = t[self.i + 1] if self.i + 1 < self.limit else ""
        if t.startswith("$((", self.i):
            self.arithmetic()
        elif nxt == "(":
            self.i += 2
            self.command(closer=True)
            self.i = min(self.i + 1, self.limit)
        elif nxt == "{":
            self.parameter(quoted)
        elif nxt == "'" and not quoted:
            self.ansi_c()
        elif nxt in _NAME_START and nxt:
            self.i += 1
            while self.i < self.limit and t[self.i] in _NAME_CHARS:
                self.i += 1
        elif nxt in _SPECIAL_PARAMS and nxt:
            self.i += 2
        else:
            self.i += 1

    def parameter(self, quoted: bool) -> None:
        """``${…}``: its word (``${x:-word}``) is in the same context as the expansion."""
        t = self.text
        self.i += 2
        if self.i < self.limit and self.style == "braces":
            found = self.match(self.i)
            if found:
                raise self.refuse(found[0], "as a parameter name in ${…}",
                                  "write ${x:-{n}} or \"$x\"{n} to combine it with a variable")
        depth = 0
        while self.i < self.limit:
            c = t[self.i]
            if c == "}" and depth == 0:
                self.i += 1
                return
            found = self.match(self.i)
            if found:
                self.placeholder(found, "dq" if quoted else "word")
                continue
            if c == "\\":
                self.i += 2
            elif c == "'" and not quoted:
                self.single()
            elif c == '"':
                self.i += 1
                self.double()
            elif c == "`":
                self.backtick(in_double=quoted)
            elif c == "$":
                self.dollar(quoted)
            else:
                depth += 1 if c == "{" else -1 if c == "}" else 0
                self.i += 1

    def arithmetic(self) -> None:
        """``$((…))``: placeholders become ``${VAR}`` and their values must be integers; for
        ``$name`` references a bare ``name`` there reads the variable too."""
        t = self.text
        self.i += 3
        depth = 0
        while self.i < self.limit:
            c = t[self.i]
            if depth == 0 and t.startswith("))", self.i):
                self.i += 2
                return
            found = self.match(self.i)
            if found:
                self.placeholder(found, "arith")
                continue
            if c == "\\":
                self.i += 2
            elif c == "$":
                self.dollar(quoted=True)
            elif c == "`":
                self.backtick(in_double=False)
            elif c == '"':
                self.i += 1
                self.double()
            elif c in _NAME_START:
                start = self.i
                while self.i < self.limit and t[self.i] in _NAME_CHARS:
                    self.i += 1
                if self.style == "dollar" and t[start:self.i] in self.names:
                    self.used.add(t[start:self.i])
                    self.arith.add(t[start:self.i])
            else:
                depth += 1 if c == "(" else -1 if c == ")" and depth > 0 else 0
                self.i += 1

    def ansi_c(self) -> None:
        """``$'…'``: no expansion inside, so a placeholder there is refused."""
        t = self.text
        self.i += 2
        while self.i < self.limit and t[self.i] != "'":
            found = self.match(self.i)
            if found:
                raise self.refuse(found[0], "inside $'…'", "move it outside the $'…' quotes")
            self.i += 2 if t[self.i] == "\\" else 1
        self.i = min(self.i + 1, self.limit)

    def backtick(self, in_double: bool) -> None:
        """`` `…` ``: the text between the backquotes, its escapes removed, is a command of its
        own; bind it, then escape the edits for the backquotes again."""
        t = self.text
        escapable = '$`\\"' if in_double else "$`\\"
        self.i += 1
        inner: list[str] = []
        starts: list[int] = []
        ends: list[int] = []
        while self.i < self.limit and t[self.i] != "`":
            if t[self.i] == "\\" and self.i + 1 < self.limit and t[self.i + 1] in escapable:
                inner.append(t[self.i + 1])
                starts.append(self.i)
                ends.append(self.i + 2)
                self.i += 2
            else:
                inner.append(t[self.i])
                starts.append(self.i)
                ends.append(self.i + 1)
                self.i += 1
        self.i = min(self.i + 1, self.limit)
        sub = _Lexer("".join(inner), self.names, self.style, self.variables, self.what)
        sub.command()
        for start, end, text in sub.edits:
            text = text.replace("\\", "\\\\").replace("`", "\\`")
            if in_double:
                text = text.replace('"', '\\"')
            self.edits.append((starts[start], ends[end - 1], text))
        self.used |= sub.used
        self.arith |= sub.arith

    def heredoc_word(self) -> tuple[str, bool, bool]:
        """The delimiter after ``<<`` or ``<<-``: (delimiter, strip tabs, quoted)."""
        t = self.text
        strip = self.i < self.limit and t[self.i] == "-"
        self.i += strip
        while self.i < self.limit and t[self.i] in " \t":
            self.i += 1
        word: list[str] = []
        quoted = False
        while self.i < self.limit and t[self.i] not in _WORD_BREAK:
            c = t[self.i]
            if c in "'\"":
                quoted = True
                end = t.find(c, self.i + 1, self.limit)
                end = self.limit if end < 0 else end
                word.append(t[self.i + 1:end])
                self.i = min(end + 1, self.limit)
            elif c == "\\":
                quoted = True
                word.append(t[self.i + 1:self.i + 2])
                self.i += 2
            else:
                word.append(c)
                self.i += 1
        return "".join(word), strip, quoted

    def heredoc(self, delimiter: str, strip: bool, quoted: bool) -> None:
        """A here-document body starting at ``self.i``, through its delimiter line."""
        t = self.text
        pos = self.i
        body_end = after = self.limit
        while pos < self.limit:
            eol = t.find("\n", pos, self.limit)
            line_end = self.limit if eol < 0 else eol
            line = t[pos:line_end]
            if (line.lstrip("\t") if strip else line) == delimiter:
                body_end, after = pos, min(line_end + 1, self.limit)
                break
            pos = line_end + 1
        if quoted:
            for j in range(self.i, body_end):
                found = self.match(j)
                if found and found[1] <= body_end:
                    raise self.refuse(found[0], f"inside a quoted here-document (<<'{delimiter}')",
                                      f"use an unquoted delimiter (<<{delimiter}) to substitute it")
            self.i = after
            return
        saved = self.limit
        self.limit = body_end
        while self.i < self.limit:
            c = t[self.i]
            found = self.match(self.i)
            if found:
                self.placeholder(found, "dq")
            elif c == "\\":
                self.i += 2
            elif c == "`":
                self.backtick(in_double=False)
            elif c == "$":
                self.dollar(quoted=True)
            else:
                self.i += 1
        self.limit = saved
        self.i = after


def rewrite(text: str, names: Iterable[str], *, style: Style = "braces", variables: Mapping[str, str] | None = None,
            prefix: str = "HONE_PARAM_", what: str = "shell text") -> ShellTemplate:
    """``text`` with every placeholder of ``names`` turned into a reference to its variable.

    ``style="braces"``: ``{name}`` placeholders, each read from ``variables[name]`` (default
    :func:`placeholder_variables` with ``prefix``). ``style="dollar"``: ``$name`` and
    ``${name}`` references to the shell variable ``name`` itself, quoted by context (the
    caller puts ``name`` in the environment). ``what`` names the text in errors.
    """
    wanted = frozenset(names)
    if style == "dollar":
        mapping = {n: n for n in wanted}
    else:
        mapping = {**placeholder_variables(wanted, prefix), **(variables or {})}
    if not any(n in text for n in wanted):  # nothing to bind: skip the lexer
        return ShellTemplate(text, {}, frozenset(), style, what)
    lexer = _Lexer(text, wanted, style, mapping, what)
    lexer.command()
    out: list[str] = []
    pos = 0
    for start, end, replacement in sorted(lexer.edits):
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return ShellTemplate("".join(out), {n: mapping[n] for n in sorted(lexer.used)}, frozenset(lexer.arith),
                         style, what)


def bind(text: str, values: Mapping[str, str], *, style: Style = "braces",
         variables: Mapping[str, str] | None = None, prefix: str = "HONE_PARAM_",
         what: str = "shell text") -> tuple[str, dict[str, str]]:
    """(rewritten text, environment additions) for running ``text`` with ``values`` bound."""
    template = rewrite(text, values.keys(), style=style, variables=variables, prefix=prefix, what=what)
    return template.text, template.environment(values)


# ---------------------------------------------------------------- argv that runs a shell


def _skip_prefix(argv: Sequence[str], i: int) -> int | None:
    """The index of the command a wrapper at ``argv[i]`` runs (``env``, ``nice``, ``timeout``,
    ``setsid``, ``taskset``, ``nohup``, ``stdbuf``), or None when argv[i] is no such wrapper."""
    name = os.path.basename(argv[i])
    j = i + 1
    n = len(argv)
    if name == "env":
        while j < n and (argv[j].startswith("-") or ("=" in argv[j] and not argv[j].startswith("="))):
            if argv[j] in ("-u", "--unset", "-C", "--chdir"):
                j += 1
            elif argv[j] in ("-S", "--split-string") or argv[j].startswith(("-S", "--split-string")):
                return None  # env splits its own string: not an argv we can follow
            elif argv[j] == "--":
                return j + 1
            j += 1
        return j
    if name == "nice":
        if j < n and argv[j] in ("-n", "--adjustment"):
            j += 2
        elif j < n and argv[j].startswith("-"):
            j += 1
        return j
    if name == "timeout":
        while j < n and argv[j].startswith("-"):
            j += 2 if argv[j] in ("-s", "--signal", "-k", "--kill-after") else 1
        return j + 1  # the duration
    if name in ("setsid", "nohup"):
        while j < n and argv[j].startswith("-"):
            j += 1
        return j
    if name == "taskset":
        while j < n and argv[j].startswith("-"):
            if argv[j] in ("-p", "--pid"):
                return None
            j += 1
        return j + 1  # the mask or CPU list
    if name == "stdbuf":
        while j < n and argv[j].startswith("-"):
            j += 2 if argv[j] in ("-i", "-o", "-e") else 1
        return j
    return None


def shell_script_index(argv: Sequence[str]) -> int | None:
    """The index of the script in an argv that runs a shell with ``-c`` (``sh -c TEXT``,
    ``bash -lc TEXT``, ``busybox sh -c TEXT``, ``env X=1 nice -n 5 sh -e -c TEXT``), else None."""
    i = 0
    while i < len(argv):
        nxt = _skip_prefix(argv, i)
        if nxt is None:
            break
        i = nxt
    if i < len(argv) and os.path.basename(argv[i]) == "busybox":
        i += 1
    if i >= len(argv) or os.path.basename(argv[i]) not in SHELLS:
        return None
    i += 1
    has_c = False
    while i < len(argv):
        arg = argv[i]
        if arg in ("--", "-"):
            i += 1
            break
        if arg.startswith("--"):
            i += 2 if arg in ("--rcfile", "--init-file") else 1
            continue
        if len(arg) < 2 or arg[0] not in "-+":
            break
        has_c = has_c or "c" in arg[1:]
        i += 2 if ("o" in arg[1:] or "O" in arg[1:]) else 1
    return i if has_c and i < len(argv) else None


def fill_word(word: str, values: Mapping[str, str], style: Style = "braces", what: str = "command") -> str:
    """One argv element with its placeholders replaced by the values in place (no shell
    reads it, so it stays one argument whatever the value holds)."""
    if style == "braces":
        def replace(m: re.Match[str]) -> str:
            if m.group(1) not in values:
                return m.group(0)
            check_value(values[m.group(1)], f"{what}: {m.group(0)}")
            return values[m.group(1)]

        return BRACES.sub(replace, word)
    for name, value in values.items():
        if "$" + name in word or "${" + name + "}" in word:
            check_value(value, f"{what}: ${name}")
            word = word.replace("${" + name + "}", value).replace("$" + name, value)
    return word


def bind_argv(argv: Sequence[str], values: Mapping[str, str], *, style: Style = "braces",
              variables: Mapping[str, str] | None = None, prefix: str = "HONE_PARAM_",
              what: str = "command") -> tuple[list[str], dict[str, str]]:
    """(argv, environment additions) with ``values`` bound: the script of a shell ``-c``
    reads them from variables (:func:`rewrite`); every other element gets them in place."""
    script = shell_script_index(argv)
    out: list[str] = []
    env: dict[str, str] = {}
    for i, arg in enumerate(argv):
        if i == script:
            text, bound = bind(arg, values, style=style, variables=variables, prefix=prefix, what=what)
            out.append(text)
            env.update(bound)
        else:
            out.append(fill_word(arg, values, style, what))
    return out, env
