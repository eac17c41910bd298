"""Folded stacks (``a;b;c 42``): parsing, per-function totals, differences, speedscope JSON.

Pure functions, no processes: the flame-graph driver (:mod:`hone.diagnose.flame`) and
the doctor read what inferno folded through these.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"
KERNEL_SUFFIX = "_[k]"  # inferno-collapse-perf --kernel marks kernel frames so


def parse_folded(text: str) -> dict[str, float]:
    """``stack → weight`` from folded text; later duplicates add up, junk lines are skipped."""
    stacks: Counter[str] = Counter()
    for line in text.splitlines():
        stack, sep, count = line.rstrip().rpartition(" ")
        if not sep or not stack:
            continue
        try:
            stacks[stack] += float(count)
        except ValueError:
            continue
    return dict(stacks)


def total_weight(stacks: Mapping[str, float]) -> float:
    return float(sum(stacks.values()))


def inclusive_totals(stacks: Mapping[str, float]) -> dict[str, float]:
    """Function → weight of every stack it is on (counted once a stack, so recursion does
    not double it). This is the width of the function's frames in the flame graph."""
    out: Counter[str] = Counter()
    for stack, weight in stacks.items():
        for frame in set(stack.split(";")[1:]):  # frame 0 is the process name
            out[frame] += weight
    return dict(out)


def self_totals(stacks: Mapping[str, float]) -> dict[str, float]:
    """Function → weight of the stacks it tops (its self time)."""
    out: Counter[str] = Counter()
    for stack, weight in stacks.items():
        out[stack.rsplit(";", 1)[-1]] += weight
    return dict(out)


def is_kernel_frame(frame: str) -> bool:
    return frame.endswith(KERNEL_SUFFIX)


def kernel_share(stacks: Mapping[str, float]) -> float | None:
    """Share (0–1) of samples whose top frame is in the kernel; None with no samples."""
    total = total_weight(stacks)
    if total == 0:
        return None
    kernel = sum(w for s, w in stacks.items() if is_kernel_frame(s.rsplit(";", 1)[-1]))
    return kernel / total


def hottest(stacks: Mapping[str, float], n: int = 10, *, inclusive: bool = False) -> list[tuple[str, float]]:
    """The ``n`` heaviest functions by self (default) or inclusive weight, heaviest first;
    ties broken by name so output is stable."""
    totals = inclusive_totals(stacks) if inclusive else self_totals(stacks)
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:n]


def widest_child(stacks: Mapping[str, float], parent: str) -> str | None:
    """Among the frames directly called by ``parent``, the widest (largest inclusive weight)."""
    children: Counter[str] = Counter()
    for stack, weight in stacks.items():
        frames = stack.split(";")
        for i, frame in enumerate(frames[:-1]):
            if frame == parent:
                children[frames[i + 1]] += weight
                break
    return max(children.items(), key=lambda kv: (kv[1], kv[0]))[0] if children else None


@dataclass
class FunctionDelta:
    """One function's self share before and after (fractions of each profile's total)."""

    function: str
    before: float
    after: float

    @property
    def delta(self) -> float:
        return self.after - self.before


def self_share_deltas(before: Mapping[str, float], after: Mapping[str, float]) -> list[FunctionDelta]:
    """Per-function change in self share between two profiles, largest |change| first.

    Shares are normalised by each profile's total, so a longer run does not look "slower".
    """
    tb, ta = total_weight(before) or 1.0, total_weight(after) or 1.0
    sb, sa = self_totals(before), self_totals(after)
    deltas = [FunctionDelta(f, sb.get(f, 0.0) / tb, sa.get(f, 0.0) / ta) for f in set(sb) | set(sa)]
    return sorted(deltas, key=lambda d: (-abs(d.delta), d.function))


def to_speedscope(stacks: Mapping[str, float], name: str, unit: str = "none") -> dict[str, Any]:
    """A speedscope "sampled" profile (one sample a distinct stack, weighted)."""
    index: dict[str, int] = {}
    samples: list[list[int]] = []
    weights: list[float] = []
    for stack, weight in sorted(stacks.items()):
        ids = []
        for frame in stack.split(";"):
            if frame not in index:
                index[frame] = len(index)
            ids.append(index[frame])
        samples.append(ids)
        weights.append(weight)
    total = float(sum(weights))
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "shared": {"frames": [{"name": f} for f in index]},
        "profiles": [{
            "type": "sampled", "name": name, "unit": unit, "startValue": 0, "endValue": total,
            "samples": samples, "weights": weights,
        }],
        "name": name,
        "activeProfileIndex": 0,
        "exporter": "hone",
    }


def speedscope_json(stacks: Mapping[str, float], name: str, unit: str = "none") -> str:
    return json.dumps(to_speedscope(stacks, name, unit))
