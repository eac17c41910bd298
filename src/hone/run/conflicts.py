"""Before a session changes knobs or measures: the daemons that could change them underneath
(:mod:`hone.core.conflicts`), which of the session's knobs each can change, a warning per
daemon, or with ``strict`` a refusal before anything is touched."""

from __future__ import annotations

from collections.abc import Callable, Collection

from hone.core.conflicts import ConflictScan, detect_conflicts
from hone.core.errors import HoneError
from hone.knobs import driver_for
from hone.spec.loader import LoadedSpec


def knob_idents(loaded: LoadedSpec | None, only: Collection[str] | None = None) -> dict[str, str]:
    """The session's system knobs (``only`` those named, when given): name → identity
    (``sysctl:vm.swappiness``)."""
    if loaded is None:
        return {}
    out = {}
    for knob in loaded.spec.knobs:
        if only is not None and knob.name not in only:
            continue
        driver = driver_for(knob)
        if driver.changes_system:
            out[knob.name] = driver.ident()
    return out


def conflict_lines(scan: ConflictScan, idents: dict[str, str]) -> list[str]:
    """One line per daemon: how it was found, what it changes, which knobs of the session overlap."""
    lines = []
    for c in scan.conflicts:
        overlap = c.overlapping(idents)
        tail = (f"; it can change this session's knobs {', '.join(overlap)}" if overlap else
                "; none of this session's knobs is among them, but it can still move the measurements")
        lines.append(f"{c.daemon} runs ({'; '.join(c.found)}): it {c.what}{tail}")
    return lines


def check_conflicts(loaded: LoadedSpec | None, *, strict: bool, verb: str, warn: Callable[[str], None],
                    only: Collection[str] | None = None) -> ConflictScan:
    """Find the daemons; warn about each, or with ``strict`` raise :class:`HoneError` (exit 2)
    before ``verb`` changes anything. ``only``: the knobs the session sets (default: all of the spec's)."""
    return check_conflicts_for(knob_idents(loaded, only), strict=strict, verb=verb, warn=warn)


def check_conflicts_for(idents: dict[str, str], *, strict: bool, verb: str,
                        warn: Callable[[str], None]) -> ConflictScan:
    """:func:`check_conflicts` for knobs given as name → identity (a preset's settings)."""
    scan = detect_conflicts()
    lines = conflict_lines(scan, idents)
    if strict and scan.conflicts:
        names = ", ".join(c.daemon for c in scan.conflicts)
        raise HoneError(f"{verb} --strict: refusing, nothing was changed: {' | '.join(lines)}",
                        hint=f"stop {names} for the session (systemctl stop UNIT, or kill PID), or drop --strict")
    for line in lines:
        warn(f"warning: {line}")
    return scan
