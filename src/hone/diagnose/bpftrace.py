"""bpftrace probes (``probes/*.bt``): syscall counts, block I/O latency, read sequentiality
per file, run-queue latency.

Each script takes ``$1`` = seconds and ends itself with ``interval:s:$1 { exit(); }``;
hone also runs it under a timeout a few seconds longer, with the process group killed on
expiry, so a probe never outlives its window. bpftrace detaches every probe when it
exits, and the scripts clear their helper maps in ``END`` so only results are printed.
Only tracepoints are used: this kernel has no kprobes (docs/machine-facts.md).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from hone.core.errors import CapabilityError, HoneError
from hone.core.process import ProcessResult, run_process
from hone.diagnose.capabilities import Capabilities
from hone.diagnose.readseq import format_report
from hone.diagnose.rules.base import Target

PROBES = {
    "syscount": "system calls by process and syscall id",
    "biolatency": "block I/O latency histogram (µs)",
    "readseq": "sequential vs random page-cache reads per file and process (read-ahead policy input)",
    "runqlat": "run-queue latency histogram (µs)",
}
# readseq: every device ($3 = 0), one report at the end (its interval, $4 ms, outlasts the run)
_EXTRA_ARGS: dict[str, Callable[[int], list[str]]] = {"readseq": lambda secs: ["0", str((secs + 60) * 1000)]}
_FORMAT: dict[str, Callable[[str], str]] = {"readseq": format_report}
ATTACH_S = 2.0  # bpftrace needs about a second to compile and attach here
GRACE_S = 15.0


@dataclass
class ProbeResult:
    name: str
    seconds: float
    output: str
    ok: bool
    error: str = ""


def probe_script(name: str) -> Path:
    if name not in PROBES:
        raise HoneError(f"unknown probe {name!r}", hint="one of: " + ", ".join(PROBES))
    return Path(str(resources.files("hone.diagnose") / "probes" / f"{name}.bt"))


def run_probe(name: str, seconds: float, caps: Capabilities, comm: str = "") -> ProbeResult:
    """Run one probe for ``seconds`` (filtered to process name ``comm`` where it applies)."""
    if caps.bpftrace is None:
        raise CapabilityError(f"bpftrace is unusable: {caps.bpftrace_why}",
                              hint="make setup installs bpftrace; hone doctor --mount-tracefs mounts tracefs")
    secs = max(1, math.ceil(seconds))
    extra = _EXTRA_ARGS.get(name, lambda _s: [])(secs)
    res: ProcessResult = run_process([caps.bpftrace, str(probe_script(name)), str(secs), comm[:15], *extra],
                                     timeout=secs + GRACE_S)
    out = "\n".join(line for line in res.stdout.splitlines() if not line.startswith("Attaching"))
    if res.ok and name in _FORMAT:
        out = _FORMAT[name](out)
    return ProbeResult(name, secs, out.strip(), res.ok, "" if res.ok else res.describe_failure())


def run_probes(names: list[str], target: Target, caps: Capabilities, out_dir: Path,
               log: Callable[[str], None] | None = None, seconds: float | None = None) -> list[ProbeResult]:
    """Run each probe while the target runs once; write ``probe-NAME.txt`` into ``out_dir``."""
    say = log or (lambda _m: None)
    results = []
    comm = Path(target.argv[0]).name
    window = seconds if seconds is not None else 10.0
    for name in names:
        probe_script(name)
        box: dict[str, ProbeResult] = {}

        def probe(n: str = name, sink: dict[str, ProbeResult] = box) -> None:
            sink["r"] = run_probe(n, window, caps, comm)

        thread = threading.Thread(target=probe)
        say(f"bpftrace probe {name} for {window:.0f} s while the command runs")
        thread.start()
        time.sleep(ATTACH_S)
        import os

        run_process(target.argv, timeout=target.timeout, env={**os.environ, **target.env}, cwd=target.cwd)
        thread.join(window + GRACE_S + 5)
        result = box.get("r") or ProbeResult(name, window, "", False, "probe did not finish")
        (out_dir / f"probe-{name}.txt").write_text(result.output + ("\n" + result.error if result.error else "") + "\n")
        results.append(result)
    return results
