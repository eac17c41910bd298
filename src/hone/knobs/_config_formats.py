"""Edit one key of a config file as text, leaving every other byte as it was.

Why our own: config parsers (configparser, ruamel, json) re-serialise the whole file and
lose comments, order or spacing; we need a surgical edit of one value. YAML and JSON use
PyYAML's node marks to find the exact span of the value and replace only that span. TOML
goes through tomlkit, whose documents write back every byte they did not change. nginx
block syntax: :mod:`hone.knobs._nginx`; Java properties: :mod:`hone.knobs._properties`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import tomlkit
import tomlkit.exceptions
import yaml
from tomlkit import items as toml_items

from hone.knobs import _nginx, _properties
from hone.knobs._errors import ConfigError, MissingBlock

FORMATS = ("conf", "ini", "env", "yaml", "json", "toml", "nginx", "properties")


def guess_format(path: str, section: str | None) -> str:
    """``auto`` → a format from the section and the file name."""
    if section is not None:
        return "ini"
    p = Path(path)
    suffix = p.suffix.lower()
    name = p.name.lower()
    if suffix in (".yaml", ".yml"):
        return "yaml"
    if suffix == ".json":
        return "json"
    if suffix == ".toml":
        return "toml"
    if suffix == ".properties":
        return "properties"
    # nginx.conf, site.nginx, and anything under a directory named nginx (conf.d/*.conf,
    # sites-enabled/default)
    if name == "nginx.conf" or suffix == ".nginx" or "nginx" in (part.lower() for part in p.parent.parts):
        return "nginx"
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


def conf_key(key: str) -> tuple[str, int | None]:
    """``save[1]`` → (``save``, 1): the second active line of a key that repeats."""
    m = re.fullmatch(r"(.+?)\[(\d+)\]", key)
    return (m.group(1), int(m.group(2))) if m else (key, None)


def _conf_get(text: str, key: str) -> str | None:
    name, index = conf_key(key)
    matches = list(_conf_line(name).finditer(text))
    if index is not None:
        return _unquote(matches[index].group("val")) if index < len(matches) else None
    # the last active line wins, as in PostgreSQL
    return _unquote(matches[-1].group("val")) if matches else None


def _conf_set(text: str, key: str, value: str) -> str:
    name, index = conf_key(key)
    matches = list(_conf_line(name).finditer(text))
    if index is not None and index >= len(matches):
        raise ConfigError(f"{key}: there {'is' if len(matches) == 1 else 'are'} {len(matches)} active "
                          f"'{name}' line{'' if len(matches) == 1 else 's'}")
    if matches:
        m = matches[-1 if index is None else index]
        return text[: m.start("val")] + _requote(m.group("val"), value) + text[m.end("val") :]
    nl = "\r\n" if "\r\n" in text else "\n"
    sep = "" if text.endswith("\n") or not text else nl
    return f"{text}{sep}{name}{_conf_separator(text)}{value}{nl}"


_ACTIVE_LINE = re.compile(r"^[ \t]*[A-Za-z_][\w.-]*(?P<sep>[ \t]*=[ \t]*|[ \t]+)\S", re.MULTILINE)


def _conf_separator(text: str) -> str:
    """How the file's active lines separate key and value: ``key = value`` (postgresql.conf)
    or ``key value`` (redis.conf) — an added key is written the file's way."""
    seps = [m.group("sep") for m in _ACTIVE_LINE.finditer(text)]
    spaced = sum("=" not in sep for sep in seps)
    return " " if seps and spaced * 2 > len(seps) else " = "


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


# ---------------------------------------------------------------- TOML (tomlkit)


def _toml_path(text: str, key: str) -> tuple[tomlkit.TOMLDocument, object, str | int]:
    """The parsed document, the table/array holding the key's last part, and that part."""
    try:
        doc = tomlkit.parse(text)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"not valid TOML: {exc}") from None
    parts = split_path(key)
    if not parts:
        raise ConfigError("empty key")
    node: object = doc
    for i, part in enumerate(parts[:-1]):
        where = ".".join(str(p) for p in parts[: i + 1])
        if isinstance(part, int):
            if not isinstance(node, list) or part >= len(node):
                raise MissingBlock(f"no element {where} (an array of {len(node) if isinstance(node, list) else 0})")
            node = node[part]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            raise MissingBlock(f"no table {where}, so {key} cannot be set")
        if not isinstance(node, dict | list):
            raise ConfigError(f"{where} is a value, not a table: {key} cannot be inside it")
    return doc, node, parts[-1]


def _toml_item(container: object, last: str | int) -> object | None:
    if isinstance(last, int):
        return container[last] if isinstance(container, list) and last < len(container) else None
    if not isinstance(container, dict) or last not in container:
        return None
    # .item(): the tomlkit item itself (indexing gives a plain bool for a boolean)
    item = container.item(last) if hasattr(container, "item") else container[last]
    return tomlkit.item(item) if isinstance(item, bool) else item


def _toml_text(item: object) -> str | None:
    if isinstance(item, toml_items.Bool):
        return "true" if item.value else "false"
    if isinstance(item, toml_items.Integer):
        return str(int(item))
    if isinstance(item, toml_items.String):
        return str(item)
    if isinstance(item, toml_items.Float | toml_items.DateTime | toml_items.Date | toml_items.Time):
        return item.as_string().strip()
    return None  # a table or an array: not one value


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def _toml_new(old: object | None, value: str, key: str) -> object:
    """``value`` as a TOML item of the old item's type (a new key: the type it reads as)."""
    if old is None:
        if value in ("true", "false"):
            return tomlkit.item(value == "true")
        if re.fullmatch(r"[+-]?\d+", value):
            return tomlkit.item(int(value))
        if re.fullmatch(r"[+-]?(\d+\.\d*|\d*\.\d+)([eE][+-]?\d+)?|[+-]?\d+[eE][+-]?\d+", value):
            return tomlkit.item(float(value))
        return toml_items.String.from_raw(value)
    if isinstance(old, toml_items.Bool):
        if value.lower() not in _TRUE + _FALSE:
            raise ConfigError(f"{key} is a boolean: expected true or false, got {value!r}")
        return tomlkit.item(value.lower() in _TRUE)
    if isinstance(old, toml_items.Integer):
        try:
            return tomlkit.item(int(value, 0) if value.lower().startswith(("0x", "0o", "0b")) else int(value))
        except ValueError:
            raise ConfigError(f"{key} is an integer: expected a whole number, got {value!r}") from None
    if isinstance(old, toml_items.Float):
        try:
            return tomlkit.item(float(value))
        except ValueError:
            raise ConfigError(f"{key} is a float: expected a number, got {value!r}") from None
    if isinstance(old, toml_items.String):
        try:
            return toml_items.String.from_raw(value, old.type)  # the same quote style
        except tomlkit.exceptions.InvalidStringError:
            # a literal string cannot escape its quote or a control character: a basic one can
            multiline = old.type in (toml_items.StringType.MLL, toml_items.StringType.MLB)
            return toml_items.String.from_raw(value, toml_items.StringType.MLB if multiline
                                              else toml_items.StringType.SLB)
    what = type(old).__name__.lower()
    raise ConfigError(f"{key} holds a {what}: hone sets strings, numbers and booleans")


def _toml_get(text: str, key: str) -> str | None:
    try:
        _, container, last = _toml_path(text, key)
    except MissingBlock:
        return None
    item = _toml_item(container, last)
    return None if item is None else _toml_text(item)


def _toml_set(text: str, key: str, value: str) -> str:
    doc, container, last = _toml_path(text, key)
    old = _toml_item(container, last)
    if isinstance(last, int) and old is None:
        raise MissingBlock(f"no element {key} in its array")
    new = _toml_new(old, value, key)
    container[last] = new  # type: ignore[index]  # tomlkit keeps the old item's comment and spacing
    return tomlkit.dumps(doc)


# ---------------------------------------------------------------- dispatch


def get_value(text: str, fmt: str, key: str, section: str | None = None) -> str | None:
    """The value of ``key`` in config ``text`` (None when the key is absent). Raises
    :class:`ConfigError` when the text is not in the format or the key is ambiguous."""
    if fmt == "conf":
        return _conf_get(text, key)
    if fmt == "ini":
        return _ini_get(text, key, section)
    if fmt == "env":
        return _env_get(text, key)
    if fmt == "toml":
        return _toml_get(text, key)
    if fmt == "nginx":
        return _nginx.get(text, key)
    if fmt == "properties":
        return _properties.get(text, key)
    return _tree_get(text, key)


def set_value(text: str, fmt: str, key: str, value: str, section: str | None = None) -> str:
    """``text`` with ``key`` set to ``value``; every other byte unchanged. A missing key is
    added for conf/ini/env/properties, to its table for TOML and to its block for nginx
    (a missing table or block raises :class:`ConfigError`); for YAML/JSON a missing path
    raises KeyError."""
    if fmt == "conf":
        return _conf_set(text, key, value)
    if fmt == "ini":
        return _ini_set(text, key, section, value)
    if fmt == "env":
        return _env_set(text, key, value)
    if fmt == "toml":
        return _toml_set(text, key, value)
    if fmt == "nginx":
        return _nginx.set_(text, key, value)
    if fmt == "properties":
        return _properties.set_(text, key, value)
    return _tree_set(text, key, value, fmt)


__all__ = ["FORMATS", "ConfigError", "conf_key", "get_value", "guess_format", "set_value", "split_path"]
