"""Reading and writing one small kernel file (/proc/sys, /sys) without a shell."""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from hone.core.errors import KnobError

_BRACKETED = re.compile(r"\[([^\]]+)\]")


def read_kernel_value(path: Path) -> str:
    """The file's value, whitespace-normalised; for ``a [b] c`` files the selected ``b``."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise KnobError(f"cannot read {path}: {exc.strerror}") from exc
    m = _BRACKETED.search(text)
    if m and " " in text.strip():
        return m.group(1)
    return " ".join(text.split())


def resolved_under(path: str | Path, root: Path, what: str) -> Path:
    """``path`` with symlinks and ``..`` resolved; KnobError unless that is below ``root``
    (checked on the resolved path, so no spelling of the path can leave ``root``)."""
    real = Path(os.path.realpath(path))
    if root not in real.parents:
        raise KnobError(f"{what}: {path} resolves to {real}, outside {root}")
    return real


def write_kernel_value(path: Path, text: str, what: str) -> None:
    """Write ``text`` with one write(2); a refusal (EINVAL, EPERM) names the knob. O_TRUNC:
    a shorter value must not leave the tail of a longer one in a regular file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    except OSError as exc:
        raise KnobError(f"{what}: cannot open {path} for writing: {exc.strerror}") from exc
    try:
        os.write(fd, text.encode())
    except OSError as exc:
        reason = "the kernel refused the value" if exc.errno == errno.EINVAL else exc.strerror
        raise KnobError(f"{what}: writing {text!r} to {path} failed: {reason} ({exc.strerror})") from exc
    finally:
        os.close(fd)
