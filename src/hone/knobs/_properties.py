"""Java ``.properties`` files (Kafka's ``server.properties``): read and set one key, every
other byte unchanged.

Why our own parser: the Python libraries for this format (jproperties, javaproperties)
write the whole file back from what they parsed, re-escaping and re-spacing every entry;
hone must replace one value's characters and nothing else. The syntax is that of
``java.util.Properties.load``: ``key=value``, ``key: value`` or ``key value``; lines
starting with ``#`` or ``!`` are comments; a line ending in an odd number of ``\\``
continues on the next (whose leading blanks are dropped); ``\\`` escapes any character
(``\\ `` a space in a key, ``\\=``, ``\\:``, ``\\t``, ``\\n``, ``\\uXXXX``). The last
occurrence of a key wins, as in Java. Values are written ASCII-only (``\\uXXXX``) since
``Properties.load(InputStream)`` reads ISO-8859-1.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_BLANK = " \t\f"
_SIMPLE = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_NATURAL = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


@dataclass
class PropertyEntry:
    key: str  # unescaped
    value: str  # unescaped
    sep: str  # the separator as written (``=``, `` = ``, ``: ``, `` ``, or empty)
    value_start: int  # where the value's text begins in the file
    end: int  # end of the logical line, before its line terminator


def _logical_lines(text: str) -> Iterator[tuple[list[tuple[str, int]], int]]:
    """Each key-value line as (characters with their offsets, offset where it ends);
    continuations joined, their backslash-newline and the next line's leading blanks gone."""
    pos, n = 0, len(text)
    chars: list[tuple[str, int]] = []
    continuing = False
    while pos < n:
        m = _NATURAL.match(text, pos)
        assert m is not None
        line_end = m.end()
        body_end = line_end
        while body_end > pos and text[body_end - 1] in "\r\n":
            body_end -= 1
        i = pos
        while i < body_end and text[i] in _BLANK:
            i += 1
        pos = line_end if line_end > pos else n
        if not continuing:
            if i == body_end or text[i] in "#!":
                continue  # a blank or comment line
            chars = []
        backslashes = 0
        j = body_end
        while j > i and text[j - 1] == "\\":
            backslashes += 1
            j -= 1
        continuing = backslashes % 2 == 1
        stop = body_end - 1 if continuing else body_end
        chars.extend((text[k], k) for k in range(i, stop))
        if not continuing:
            yield chars, body_end
    if continuing:  # a continuation at the end of the file
        yield chars, n


def _unescape(chars: list[tuple[str, int]]) -> str:
    out, i = [], 0
    while i < len(chars):
        c = chars[i][0]
        if c == "\\" and i + 1 < len(chars):
            nxt = chars[i + 1][0]
            if nxt == "u":
                digits = "".join(ch for ch, _ in chars[i + 2 : i + 6])
                if len(digits) == 4 and all(d in "0123456789abcdefABCDEF" for d in digits):
                    out.append(chr(int(digits, 16)))
                    i += 6
                    continue
            out.append(_SIMPLE.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    # \uD83D\uDE00 pairs (how Java writes characters beyond the BMP) become one character
    return "".join(out).encode("utf-16", "surrogatepass").decode("utf-16", errors="replace")


def entries(text: str) -> list[PropertyEntry]:
    """Every key-value line of ``text`` in order."""
    out = []
    for chars, end in _logical_lines(text):
        i, n = 0, len(chars)
        while i < n:  # the key runs to the first unescaped separator or blank
            c = chars[i][0]
            if c == "\\":
                i += 2
                continue
            if c in "=:" or c in _BLANK:
                break
            i += 1
        i = min(i, n)
        key_chars = chars[:i]
        j = i
        while j < n and chars[j][0] in _BLANK:
            j += 1
        if j < n and chars[j][0] in "=:":
            j += 1
            while j < n and chars[j][0] in _BLANK:
                j += 1
        value_start = chars[j][1] if j < n else end
        sep = "".join(c for c, _ in chars[i:j])
        out.append(PropertyEntry(_unescape(key_chars), _unescape(chars[j:]), sep, value_start, end))
    return out


def _escape(text: str, key: bool) -> str:
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[ch])
        elif ch == " " and (key or i == 0):
            out.append("\\ ")  # a key ends at a blank; a value's leading blanks are dropped
        elif key and (ch in "=:" or (i == 0 and ch in "#!")):
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            for unit in range(0, len(b := ch.encode("utf-16-be")), 2):
                out.append(f"\\u{int.from_bytes(b[unit : unit + 2], 'big'):04X}")
    return "".join(out)


def get(text: str, key: str) -> str | None:
    found = None
    for e in entries(text):
        if e.key == key:
            found = e.value
    return found


def set_(text: str, key: str, value: str) -> str:
    """``text`` with the last ``key`` line's value replaced (continuation lines included);
    an absent key is appended with the separator the file's last entry uses."""
    all_entries = entries(text)
    hits = [e for e in all_entries if e.key == key]
    if hits:
        e = hits[-1]
        new = _escape(value, key=False)
        if not e.sep:  # a key alone on its line: give it a separator
            new = "=" + new
        return text[: e.value_start] + new + text[e.end :]
    seps = [e.sep for e in all_entries if e.sep]
    sep = seps[-1] if seps else "="
    if text and not text.endswith(("\n", "\r")):
        text += "\r\n" if "\r\n" in text else "\n"
    newline = "\r\n" if "\r\n" in text else "\n"
    return f"{text}{_escape(key, key=True)}{sep}{_escape(value, key=False)}{newline}"


__all__ = ["PropertyEntry", "entries", "get", "set_"]
