"""``--fail-on``: turn a comparison's verdicts into a CI gate.

A comparison is judged first and reported in full; only then does the gate look at each
candidate's verdict against the reference (every row of a sweep) and, when one is in the
list, the command exits with :class:`~hone.core.errors.GateFailedError`'s code (4).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from hone.core.errors import GateFailedError, HoneError
from hone.core.metrics import verdict_word
from hone.report.base import ci_label, ci_text, pct, row_label

# Every verdict compare_paired gives; ``slower`` is the usual gate, ``inconclusive`` the strict one.
VERDICTS = ("faster", "slower", "equivalent", "inconclusive")


def parse_fail_on(text: str | None) -> frozenset[str]:
    """``"slower,inconclusive"`` → ``{"slower", "inconclusive"}``; None → no gate."""
    if text is None:
        return frozenset()
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in VERDICTS]
    if bad or not items:
        raise HoneError(f"--fail-on {text}: expected verdicts from {', '.join(VERDICTS)} separated by commas")
    return frozenset(items)


def gate_failures(data: dict[str, Any], verdicts: Collection[str]) -> list[str]:
    """One line per candidate (and sweep value) whose verdict is in ``verdicts``, e.g.
    ``"new is slower than old: +15.10%, 95% CI [+12.00%, +18.30%]"``."""
    if not verdicts:
        return []
    out = []
    for row in data["rows"]:
        label = row_label(data, row)
        for name, c in row["comparisons"].items():
            if c["verdict"] not in verdicts:
                continue
            word = verdict_word(c["verdict"], data.get("unit"))
            relation = f"{word} than" if c["verdict"] in ("faster", "slower") else {
                "equivalent": "equivalent to"}.get(c["verdict"], "inconclusive against")
            out.append(f"{label + ': ' if label else ''}{name} is {relation} {data['reference']}: "
                       f"{pct(c['change_pct'], sign=True)}, {ci_label(data, row)} {ci_text(c)}")
    return out


def check_gate(data: dict[str, Any], verdicts: Collection[str]) -> None:
    """Raise GateFailedError naming every candidate the gate catches; nothing otherwise."""
    failures = gate_failures(data, verdicts)
    if failures:
        flag = ",".join(v for v in VERDICTS if v in verdicts)
        raise GateFailedError(f"--fail-on {flag}: " + "; ".join(failures))
