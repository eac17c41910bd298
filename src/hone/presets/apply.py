"""Applying a bound preset: every setting through the journal (original first, read back),
exactly as ``hone apply`` sets knobs, so ``hone status`` lists each resource and ``hone
rollback`` restores it."""

from __future__ import annotations

from dataclasses import dataclass

from hone.core.errors import KnobError
from hone.presets.bind import Planned
from hone.run.journal import Journal, MachineLock


@dataclass
class Applied:
    planned: Planned
    ok: bool
    message: str = ""


def apply_planned(planned: list[Planned], purpose: str) -> list[Applied]:
    """Set every ``apply`` setting. Kernel settings go one at a time, so one the kernel refuses
    (read back differs, EINVAL) is reported and the others still apply; each config file's keys
    go together so its restart command runs once, after all of them."""
    todo = [p for p in planned if p.status == "apply"]
    out: list[Applied] = []
    journal = Journal()
    with MachineLock(purpose=purpose):
        journal.preflight([p.driver for p in todo])
        by_file: dict[str, list[Planned]] = {}
        for p in todo:
            if p.setting.kind == "file":
                by_file.setdefault(p.driver.resource(), []).append(p)
                continue
            out.append(_one(journal, [p]))
        for group in by_file.values():
            out.extend(_group(journal, group))
    return out


def _one(journal: Journal, group: list[Planned]) -> Applied:
    return _group(journal, group)[0]


def _group(journal: Journal, group: list[Planned]) -> list[Applied]:
    try:
        journal.apply([(p.driver, p.text or "") for p in group])
    except KnobError as exc:
        return [Applied(p, False, exc.message) for p in group]
    return [Applied(p, True) for p in group]


__all__ = ["Applied", "apply_planned"]
