"""The environment a measurement was taken in: kernel, CPU, governor, THP, load, tools, and the
daemons running that can change settings underneath it (:mod:`hone.core.conflicts`).

Stored with every result so a number can be traced to the machine that produced it.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

from hone import __version__
from hone.core.conflicts import detect_conflicts
from hone.core.process import run_process


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _selected(text: str | None) -> str | None:
    if text and "[" in text:
        return text[text.index("[") + 1 : text.index("]")]
    return text


def cpu_model() -> str | None:
    info = _read("/proc/cpuinfo") or ""
    for line in info.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def tool_version(argv: list[str]) -> str | None:
    """First line of ``TOOL --version`` (None if missing). Short timeout."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        res = run_process([*argv], timeout=10)
    except Exception:
        return None
    out = (res.stdout or res.stderr).strip().splitlines()
    return out[0] if out else None


def fingerprint(spec_text: str | None = None, tools: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON-ready description of this machine now. ``tools`` adds their versions."""
    load = os.getloadavg()
    fp: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        "thp": _selected(_read("/sys/kernel/mm/transparent_hugepage/enabled")),
        "loadavg": list(load),
        "python": sys.version.split()[0],
        "hone": __version__,
        "tools": {t: tool_version([t, "--version"]) for t in tools},
    }
    scan = detect_conflicts()  # daemons that can change settings while this is measured
    fp["conflicts"] = scan.to_json()
    fp["conflict_notes"] = scan.notes
    if spec_text is not None:
        fp["spec_sha256"] = hashlib.sha256(spec_text.encode()).hexdigest()
    return fp


def machine_id() -> str:
    """A short stable id of this machine's hardware/kernel (for fleet results)."""
    parts = [socket.gethostname(), platform.release(), cpu_model() or "", str(os.cpu_count())]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]
