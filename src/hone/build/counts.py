"""Deterministic counts from ``valgrind --tool=cachegrind --branch-sim=yes --cache-sim=yes``:
instructions, simulated branch mispredicts and cache misses. Repeatable run to run
(0.03% apart on this VM) where time is noisy and ``perf`` has no hardware counters — unless
the program itself varies: Lua seeds its string hash with the time and addresses, and its
nbody benchmark's count moves by 2% from run to run (binary-trees: exact).

valgrind 3.19 dies with SIGILL on instructions it cannot decode (AVX-512 from
``-march=native``): :class:`CountsUnavailable` says so instead of reporting nothing.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from hone.build.scenario import Scenario, run_scenario
from hone.core.errors import CapabilityError
from hone.run.instructions import SIGILL_HINT, VALGRIND_TIMEOUT_FACTOR, cannot_decode, parse_cachegrind, sigill_message

EVENTS = ("Ir", "I1mr", "ILmr", "Dr", "D1mr", "DLmr", "Dw", "D1mw", "DLmw", "Bc", "Bcm", "Bi", "Bim")


class CountsUnavailable(CapabilityError):
    """valgrind cannot run this binary (or is missing)."""


@dataclass
class Counts:
    """Event totals over every process of the binary a scenario started (unitless counts)."""

    instructions: int
    branch_mispredicts: int
    cache_misses: int
    events: dict[str, int]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def totals(event_maps: list[dict[str, int]]) -> Counts:
    """Sum event maps of several processes. Mispredicts = conditional + indirect (Bcm+Bim);
    cache misses = first-level misses of instruction fetch, data read and write (I1mr+D1mr+D1mw)."""
    ev: dict[str, int] = {}
    for m in event_maps:
        for k, v in m.items():
            ev[k] = ev.get(k, 0) + v
    return Counts(
        instructions=ev.get("Ir", 0),
        branch_mispredicts=ev.get("Bcm", 0) + ev.get("Bim", 0),
        cache_misses=ev.get("I1mr", 0) + ev.get("D1mr", 0) + ev.get("D1mw", 0),
        events=ev,
    )


def _wrapper(directory: Path, binary: Path) -> Path:
    """A script that runs ``binary`` under cachegrind, one output file per process."""
    script = directory / "under-cachegrind"
    script.write_text(
        "#!/bin/sh\n"
        f"exec valgrind --tool=cachegrind --branch-sim=yes --cache-sim=yes --cachegrind-out-file='{directory}/cg.%p'"
        f" -- '{binary}' \"$@\"\n"
    )
    script.chmod(0o755)
    return script


def measure_counts(scenario: Scenario, binary: Path, *, timeout: float, cwd: Path | None = None) -> Counts:
    """Run ``scenario`` once with ``{binary}`` under cachegrind and sum its counts.

    Raises CountsUnavailable when valgrind is missing or dies on the binary (SIGILL:
    instructions valgrind cannot decode, typically ``-march=native`` AVX-512).
    """
    if not shutil.which("valgrind"):
        raise CountsUnavailable("valgrind is not installed: no instruction counts",
                                hint="apt-get install valgrind (scripts/setup.sh does)")
    with tempfile.TemporaryDirectory(prefix="hone-cg-") as tmp:
        d = Path(tmp)
        res = run_scenario(scenario, _wrapper(d, binary.resolve()), timeout=timeout * VALGRIND_TIMEOUT_FACTOR,
                           cwd=cwd)
        err = res.stderr
        if cannot_decode(err) or "SIGILL" in err or res.returncode in (132, -4):
            raise CountsUnavailable(sigill_message(binary.name) + ", time only", hint=SIGILL_HINT)
        maps = [parse_cachegrind(p.read_text(errors="replace")) for p in sorted(d.glob("cg.*"))]
        maps = [m for m in maps if m]
        if not maps:
            raise CountsUnavailable(f"cachegrind wrote no counts for scenario {scenario.name!r}"
                                    f" ({res.describe_failure() if not res.ok else 'program not started?'})")
        return totals(maps)
