"""Edit one key of a config file as text, leaving every other byte as it was.

Why our own: config parsers (configparser, ruamel, json) re-serialise the whole file and
lose comments, order or spacing; we need a surgical edit of one value. YAML and JSON use
PyYAML's node marks to find the exact span of the value and replace only that span.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

FORMATS = ("conf", "ini", "env", "yaml", "json")


def guess_format(path: str, section: str | None) -> str:
    """``auto`` → a format from the section and the file name."""
    if section is not None:
        return "ini"
    suffix = Path(path).suffix.lower()
    name = Path(path).name.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".json":
        return "json"
    if suffix in (".ini", ".cfg", ".cnf"):
        return "ini"
    if suffix in (".env", ".sh") or name in (".env", "environment") or name.endswith("rc"):
        return "env"
    return "conf"


# ---------------------------------------------------------------- key = value (postgresql.conf)


def _conf_line(key: str) -> re.Pattern[str]:
    return re.compile(
        r"^(?P<lead>[ \t]*)(?P<key>" + re.escape(key) + r")(?P<sep>[ \t]*=[ \t]*|[ \t]+)"
        r"(?P<val>'(?:[^'\\]|\\.|'')*'|\"[^\"]*\"|[^#\n]*?)(?P<tail>[ \t]*(?:#.*)?)$",
        re.MULTILINE,
    )


def _unquote(val: str) -> str:
    val = val.strip()
    if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
        return val[1:-1]
    return val


def _requote(old: str, new: str) -> str:
    old = old.strip()
    if len(old) >= 2 and old[0] == old[-1] and old[0] in "'\"":
        return old[0] + new + old[0]
    return new


def _conf_get(text: str, key: str) -> str | None:
    found = None
    for m in _conf_line(key).finditer(text):  # the last active line wins, as in PostgreSQL
        found = _unquote(m.group("val"))
    return found


def _conf_set(text: str, key: str, value: str) -> str:
    matches = list(_conf_line(key).finditer(text))
    if matches:
        m = matches[-1]
        return text[: m.start("val")] + _requote(m.group("val"), value) + text[m.end("val") :]
    sep = "" if text.endswith("\n") or not text else "\n"
    return f"{text}{sep}{key} = {value}\n"


# ---------------------------------------------------------------- INI [section] key


_SECTION = re.compile(r"^[ \t]*\[(?P<name>[^\]]+)\][ \t]*(?:[#;].*)?$", re.MULTILINE)


def _ini_span(text: str, section: str | None) -> tuple[int, int] | None:
    if section is None:
        first = _SECTION.search(text)
        return 0, first.start() if first else len(text)
    sections = list(_SECTION.finditer(text))
    for i, m in enumerate(sections):
        if m.group("name").strip() == section:
            end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
            return m.end(), end
    return None


def _ini_line(key: str) -> re.Pattern[str]:
    return re.compile(
        r"^(?P<lead>[ \t]*)" + re.escape(key) + r"(?P<sep>[ \t]*[=:][ \t]*)(?P<val>[^\n]*?)(?P<tail>[ \t]*)$",
        re.MULTILINE,
    )


def _ini_get(text: str, key: str, section: str | None) -> str | None:
    span = _ini_span(text, section)
    if span is None:
        return None
    m = _ini_line(key).search(text, span[0], span[1])
    return _unquote(m.group("val")) if m else None


def _ini_set(text: str, key: str, section: str | None, value: str) -> str:
    span = _ini_span(text, section)
    if span is None:
        sep = "" if text.endswith("\n") or not text else "\n"
        return f"{text}{sep}[{section}]\n{key} = {value}\n"
    m = _ini_line(key).search(text, span[0], span[1])
    if m:
        return text[: m.start("val")] + _requote(m.group("val"), value) + text[m.end("val") :]
    # Insert after the section's last non-blank line, keeping what follows as it was.
    body = text[span[0] : span[1]].rstrip("\n")
    insert = span[0] + len(body)
    newline_before = "" if insert == 0 or text[insert - 1] == "\n" else "\n"
    line = f"{newline_before}{key} = {value}"
    if insert < len(text):
        return text[:insert] + line + text[insert:]
    return text[:insert] + line + "\n"


# ---------------------------------------------------------------- KEY=VALUE


def _env_line(key: str) -> re.Pattern[str]:
    return re.compile(
        r"^(?P<lead>[ \t]*(?:export[ \t]+)?)" + re.escape(key) + r"=(?P<val>\"[^\"]*\"|'[^']*'|[^#\n]*?)"
        r"(?P<tail>[ \t]*(?:#.*)?)$",
        re.MULTILINE,
    )


def _env_get(text: str, key: str) -> str | None:
    found = None
    for m in _env_line(key).finditer(text):
        found = _unquote(m.group("val"))
    return found


def _env_quote(old: str | None, value: str) -> str:
    if old is not None and old.strip()[:1] in ("'", '"'):
        return _requote(old, value)
    if re.fullmatch(r"[A-Za-z0-9_./:,+@%-]*", value):
        return value
    return "'" + value.replace("'", "'\\''") + "'"


def _env_set(text: str, key: str, value: str) -> str:
    matches = list(_env_line(key).finditer(text))
    if matches:
        m = matches[-1]
        return text[: m.start("val")] + _env_quote(m.group("val"), value) + text[m.end("val") :]
    sep = "" if text.endswith("\n") or not text else "\n"
    return f"{text}{sep}{key}={_env_quote(None, value)}\n"


# ---------------------------------------------------------------- YAML / JSON paths


def split_path(key: str) -> list[str | int]:
    """``a.b[2].c`` → ``["a", "b", 2, "c"]``."""
    parts: list[str | int] = []
    for token in re.finditer(r"([^.\[\]]+)|\[(\d+)\]", key):
        parts.append(int(token.group(2)) if token.group(2) is not None else token.group(1))
    return parts


def _find_node(text: str, key: str) -> yaml.Node | None:
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    for part in split_path(key):
        if isinstance(part, int) and isinstance(node, yaml.SequenceNode):
            if part >= len(node.value):
                return None
            node = node.value[part]
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if str(k.value) == str(part):
                    node = v
                    break
            else:
                return None
        else:
            return None
    return node


def _tree_get(text: str, key: str) -> str | None:
    node = _find_node(text, key)
    if node is None or not isinstance(node, yaml.ScalarNode):
        return None
    return str(node.value)


def _tree_set(text: str, key: str, value: str, fmt: str) -> str:
    node = _find_node(text, key)
    if node is None or not isinstance(node, yaml.ScalarNode):
        raise KeyError(key)
    start, end = node.start_mark.index, node.end_mark.index
    old = text[start:end]
    if fmt == "json":
        is_number = re.fullmatch(r"-?\d+(\.\d+)?([eE][+-]?\d+)?", value) is not None
        new = value if (is_number or value in ("true", "false", "null")) and old[:1] != '"' else json.dumps(value)
    else:
        new = _requote(old, value) if old[:1] in ("'", '"') else value
    return text[:start] + new + text[end:]


# ---------------------------------------------------------------- dispatch


def get_value(text: str, fmt: str, key: str, section: str | None = None) -> str | None:
    """The value of ``key`` in config ``text`` (None when the key is absent)."""
    if fmt == "conf":
        return _conf_get(text, key)
    if fmt == "ini":
        return _ini_get(text, key, section)
    if fmt == "env":
        return _env_get(text, key)
    return _tree_get(text, key)


def set_value(text: str, fmt: str, key: str, value: str, section: str | None = None) -> str:
    """``text`` with ``key`` set to ``value``; every other byte unchanged. A missing key is
    added for conf/ini/env; for YAML/JSON a missing path raises KeyError."""
    if fmt == "conf":
        return _conf_set(text, key, value)
    if fmt == "ini":
        return _ini_set(text, key, section, value)
    if fmt == "env":
        return _env_set(text, key, value)
    return _tree_set(text, key, value, fmt)
