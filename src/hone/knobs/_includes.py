"""Which file holds a key when the knob's file includes others.

nginx (``include conf.d/*.conf;``, anywhere, globs allowed, relative to the main file's
directory) and ``conf`` files (PostgreSQL's ``include``/``include_if_exists``/
``include_dir``, redis's ``include``, relative to the including file) are read the way
the server reads them: included files where their ``include`` stands. The rule:

- the key is in exactly one file (the knob's own or an included one): hone edits and
  journals *that* file;
- it is in none: it is added to the knob's own file (nginx: to the file holding its block);
- a ``conf`` key set in several files is an error naming them (which one wins depends
  on their order, and editing the wrong one changes nothing): give the file that should
  hold it as ``path:``. nginx needs no such rule: a path naming several directives or
  blocks is already an error that lists them, wherever they stand.

:func:`locate` returns the file and the key *inside that file* (an nginx path with the
file's own block indexes), which is what ``get``/``set`` of the format work on.
"""

from __future__ import annotations

import posixpath

from hone.knobs import _nginx
from hone.knobs._config_formats import _conf_line, _unquote, conf_key
from hone.knobs._errors import ConfigError
from hone.knobs._files import Files

#: Includes nested deeper than this are taken for a loop.
MAX_DEPTH = 16


def _text(files: Files, path: str) -> str | None:
    data = files.read(path)
    if data is None:
        return None
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise ConfigError(f"{path} (included) is not UTF-8 text") from None


def _nginx_locate(files: Files, main: str, key: str) -> tuple[str, str]:
    text = _text(files, main)
    if text is None:
        return main, key
    texts: dict[str, str] = {main: text}
    chains: dict[int, tuple[str, ...]] = {}  # id(directive) -> the include chain that read its file
    keep: list[_nginx.Parsed] = []  # the included trees stay alive while their ids are keys

    def expand(d: _nginx.Directive) -> list[_nginx.Directive]:
        chain = (*chains.get(id(d), ()), d.file)
        pattern = d.args[0].value()
        if not pattern.startswith("/"):
            pattern = posixpath.join(posixpath.dirname(main), pattern)  # nginx: the conf prefix
        out: list[_nginx.Directive] = []
        for path in files.glob(pattern):
            real = files.realpath(path)
            if real in chain or len(chain) > MAX_DEPTH:
                raise ConfigError(f"include loop: {' -> '.join((*chain, real))}")
            sub = _text(files, real)
            if sub is None:
                continue
            texts[real] = sub
            try:
                parsed = _nginx.parse(sub, real)
            except ConfigError as exc:
                raise ConfigError(f"{real} (included): {exc}") from None
            keep.append(parsed)
            stack = list(parsed.top)
            while stack:
                node = stack.pop()
                chains[id(node)] = chain
                stack.extend(node.block or [])
            out.extend(parsed.top)
        return out

    found = _nginx.walk(_nginx.parse(text, main), key, expand, texts)
    if found.directive is not None:
        return found.directive.file, found.directive.local_key()
    name = _nginx.split_key(key)[-1][0]
    if found.parent is None:
        return main, name
    return found.parent.file, f"{found.parent.local_key()}.{name}"


def _conf_locate(files: Files, main: str, key: str) -> tuple[str, str]:
    name, index = conf_key(key)
    hits: list[tuple[str, int]] = []  # (file, its n-th line of the key), in the order the server reads them

    def scan(path: str, chain: tuple[str, ...]) -> None:
        if path in chain or len(chain) > MAX_DEPTH:
            raise ConfigError(f"include loop: {' -> '.join((*chain, path))}")
        text = _text(files, path)
        if text is None:
            return
        events = [(m.start(), "key", "") for m in _conf_line(name).finditer(text)]
        for directive in ("include", "include_if_exists", "include_dir"):
            events += [(m.start(), directive, _unquote(m.group("val"))) for m in _conf_line(directive).finditer(text)]
        n = 0
        for _, what, arg in sorted(events):
            if what == "key":
                hits.append((path, n))
                n += 1
                continue
            target = arg if arg.startswith("/") else posixpath.join(posixpath.dirname(path), arg)
            if what == "include_dir":
                names = files.listdir(target) or []
                for item in sorted(x for x in names if x.endswith(".conf") and not x.startswith(".")):
                    scan(files.realpath(posixpath.join(target, item)), (*chain, path))
            else:
                for item in files.glob(target):  # redis 7 takes wildcards
                    scan(files.realpath(item), (*chain, path))

    scan(main, ())
    if index is not None:
        if index < len(hits):
            path, n = hits[index]
            return path, f"{name}[{n}]"
        return main, key
    holders = list(dict.fromkeys(path for path, _ in hits))
    if len(holders) > 1:
        raise ConfigError(f"{name} is set in {' and in '.join(holders)} (the server reads them all, the last one "
                          f"wins): give the file that should hold it as path:")
    return (holders[0] if holders else main), key


def locate(files: Files, main: str, fmt: str, key: str) -> tuple[str, str]:
    """The real path of the file that holds (or will hold) ``key`` of the knob's file
    ``main``, and the key to use inside that file."""
    if fmt == "nginx":
        return _nginx_locate(files, main, key)
    if fmt == "conf":
        return _conf_locate(files, main, key)
    return main, key


__all__ = ["MAX_DEPTH", "locate"]
