"""``hone flame``: perf record → inferno-collapse-perf → inferno-flamegraph (+ speedscope).

Also the differential graph (``inferno-diff-folded``) and an off-CPU graph from the
``sched:sched_switch`` tracepoint. Every step is a real tool run through
:func:`hone.core.process.run_process` with a timeout; hone re-implements none of them.

Weights are plain sample counts: ``perf script -F comm,tid,time,event,ip,sym,dso``
(no ``period``), because with ``cpu-clock`` the period is nanoseconds and would make
"samples" mean ns.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hone.core.errors import CapabilityError, HoneError
from hone.core.process import ProcessResult, require_command, run_process
from hone.diagnose.capabilities import Capabilities, find_tool
from hone.diagnose.folded import (
    FunctionDelta,
    hottest,
    kernel_share,
    parse_folded,
    self_share_deltas,
    speedscope_json,
    total_weight,
)

SCRIPT_FIELDS = "comm,tid,time,event,ip,sym,dso"
TOOL_TIMEOUT_S = 300.0


@dataclass
class FlameResult:
    """Files written for one profile, and what the samples say. Shares are 0–1."""

    name: str
    folded: Path
    svg: Path
    speedscope: Path
    samples: float
    kernel_share: float | None
    hottest: list[tuple[str, float]] = field(default_factory=list)
    returncode: int = 0
    stdout: str = ""
    kind: str = "on-CPU"

    def paths(self) -> list[Path]:
        return [self.svg, self.folded, self.speedscope]


@dataclass
class DiffResult:
    """A differential flame graph. ``deltas``: functions whose self share changed most."""

    folded: Path
    svg: Path
    svg_reverse: Path
    deltas: list[FunctionDelta]

    def paths(self) -> list[Path]:
        return [self.svg, self.svg_reverse, self.folded]


def _tool(name: str) -> str:
    path = find_tool(name)
    if path is None:
        raise CapabilityError(f"{name} is not installed", hint="make setup (cargo install inferno)")
    return path


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "flame"


def fold_perf_data(data: Path, *, perf: str = "perf", kernel_annotate: bool = True) -> str:
    """``perf script`` of ``data`` folded by inferno-collapse-perf (kernel frames get ``_[k]``)."""
    script = run_process([perf, "script", "-F", SCRIPT_FIELDS, "-i", str(data)], timeout=TOOL_TIMEOUT_S)
    if not script.ok:
        raise HoneError(f"perf script failed: {script.describe_failure()}")
    args = [_tool("inferno-collapse-perf")]
    if kernel_annotate:
        args.append("--kernel")
    collapsed = run_process(args, stdin=script.stdout, timeout=TOOL_TIMEOUT_S)
    if not collapsed.ok:
        raise HoneError(f"inferno-collapse-perf failed: {collapsed.describe_failure()}")
    return collapsed.stdout


def render_svg(folded: Path, svg: Path, *, title: str, subtitle: str = "", countname: str = "samples",
               colors: str = "hot", extra: Sequence[str] = ()) -> Path:
    """An interactive SVG flame graph of ``folded`` (inferno-flamegraph)."""
    args = [_tool("inferno-flamegraph"), "--title", title, "--countname", countname, "--colors", colors,
            "--hash", *extra]
    if subtitle:
        args += ["--subtitle", subtitle]
    res = run_process([*args, str(folded)], timeout=TOOL_TIMEOUT_S)
    if not res.ok:
        raise HoneError(f"inferno-flamegraph failed: {res.describe_failure()}")
    svg.write_text(res.stdout)
    return svg


def _write_outputs(stacks_text: str, out_dir: Path, name: str, title: str, subtitle: str, countname: str,
                   colors: str) -> tuple[Path, Path, Path, dict[str, float]]:
    out_dir.mkdir(parents=True, exist_ok=True)
    base = _safe_name(name)
    folded = out_dir / f"{base}.folded"
    folded.write_text(stacks_text)
    stacks = parse_folded(stacks_text)
    if not stacks:
        raise HoneError(f"no samples were recorded for {name}",
                        hint="the command may be too short for 999 Hz sampling; run it longer")
    svg = render_svg(folded, out_dir / f"{base}.svg", title=title, subtitle=subtitle, countname=countname,
                     colors=colors)
    speedscope = out_dir / f"{base}.speedscope.json"
    speedscope.write_text(speedscope_json(stacks, name, unit="none"))
    return folded, svg, speedscope, stacks


def record_flame(
    argv: Sequence[str] | None,
    out_dir: Path,
    caps: Capabilities,
    *,
    name: str = "flame",
    pid: int | None = None,
    duration: float = 10.0,
    frequency: int = 999,
    call_graph: str = "fp",
    timeout: float = 300.0,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    title: str | None = None,
    runs: int = 1,
) -> FlameResult:
    """Sample ``argv`` (or ``pid`` for ``duration`` s) at ``frequency`` Hz on cpu-clock,
    write ``NAME.folded``, ``NAME.svg`` and ``NAME.speedscope.json`` into ``out_dir``.
    ``runs`` > 1 records a short command several times and adds the samples up.

    ``call_graph`` is "fp" (frame pointers) or "dwarf" (unwinds code built without them,
    larger and slower to process).
    """
    if caps.perf is None:
        raise CapabilityError("perf is not installed", hint="make setup (Debian package linux-perf)")
    if not caps.cpu_clock_sampling:
        raise CapabilityError("perf record -e cpu-clock does not work here",
                              hint=f"check kernel.perf_event_paranoid (now {caps.perf_event_paranoid})")
    if call_graph == "dwarf" and not caps.call_graph_dwarf:
        raise CapabilityError("perf record --call-graph dwarf does not work here", hint="use --call-graph fp")
    cg = ["--call-graph", "dwarf"] if call_graph == "dwarf" else ["-g"]
    texts: list[str] = []
    for _ in range(max(1, runs if pid is None else 1)):
        text, what, res = _record_once(argv, caps, cg, frequency, pid, duration, timeout, env, cwd)
        texts.append(text)
    # Folded lines from several runs simply add up (parse_folded sums duplicates).
    text = "".join(t if t.endswith("\n") or not t else t + "\n" for t in texts)
    folded, svg, speedscope, stacks = _write_outputs(
        text, out_dir, name, title or f"{name}: {what}"[:120],
        f"perf record -F {frequency} {' '.join(cg)} -e cpu-clock"
        + (f", {runs} runs" if runs > 1 and pid is None else "") + "; kernel frames end in _[k]", "samples", "hot")
    return FlameResult(name, folded, svg, speedscope, total_weight(stacks), kernel_share(stacks),
                       hottest(stacks, 10), res.returncode, res.stdout)


def _record_once(argv: Sequence[str] | None, caps: Capabilities, cg: list[str], frequency: int, pid: int | None,
                 duration: float, timeout: float, env: Mapping[str, str] | None, cwd: str | None
                 ) -> tuple[str, str, ProcessResult]:
    """One ``perf record`` of ``argv`` (or ``pid``), folded: (folded text, what, perf's result)."""
    with tempfile.TemporaryDirectory(prefix="hone-flame-") as tmp:
        data = Path(tmp) / "perf.data"
        base = [caps.perf or "perf", "record", "-q", "-F", str(frequency), *cg, "-e", "cpu-clock", "-o", str(data)]
        if pid is not None:
            res = run_process([*base, "-p", str(pid), "--", "sleep", f"{duration:g}"], timeout=duration + 60)
            what = f"pid {pid}"
        elif argv:
            require_command(argv[0], cwd)
            res = run_process([*base, "--", *argv], timeout=timeout, env=env, cwd=cwd)
            what = " ".join(argv)
        else:
            raise HoneError("nothing to profile", hint="hone flame -- CMD ARGS…  or  hone flame --pid PID")
        if res.timed_out:
            raise HoneError(f"perf record of {what} timed out after {timeout:.0f} s")
        if not data.exists() or (not res.ok and data.stat().st_size < 4096):
            # No data and a failure: the command itself most likely did not run.
            raise HoneError(f"perf record of {what} recorded nothing: {res.describe_failure()}")
        return fold_perf_data(data, perf=caps.perf or "perf"), what, res


def record_offcpu(
    argv: Sequence[str],
    out_dir: Path,
    caps: Capabilities,
    *,
    name: str = "offcpu",
    timeout: float = 300.0,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> FlameResult:
    """Off-CPU graph: stacks at each ``sched:sched_switch`` of ``argv`` (where it left the
    CPU), weighted by the number of switches — not by time off CPU, which needs the
    switch-in side (system-wide recording) and is not attempted here."""
    if caps.events.get("syscalls:sys_enter_read") != "ok" and not caps.tracefs_mounted:
        raise CapabilityError("off-CPU recording needs the sched:sched_switch tracepoint (tracefs not mounted)",
                              hint="hone doctor --mount-tracefs, as root")
    with tempfile.TemporaryDirectory(prefix="hone-offcpu-") as tmp:
        data = Path(tmp) / "perf.data"
        res = run_process([caps.perf or "perf", "record", "-q", "-g", "-e", "sched:sched_switch", "-o", str(data),
                           "--", *argv], timeout=timeout, env=env, cwd=cwd)
        if not data.exists():
            raise HoneError(f"perf record -e sched:sched_switch wrote no data: {res.describe_failure()}")
        text = fold_perf_data(data, perf=caps.perf or "perf")
    folded, svg, speedscope, stacks = _write_outputs(
        text, out_dir, name, f"off-CPU (context switches): {' '.join(argv)}"[:120],
        "perf record -e sched:sched_switch -g; width = number of switches, not time", "switches", "io")
    return FlameResult(name, folded, svg, speedscope, total_weight(stacks), kernel_share(stacks),
                       hottest(stacks, 10), res.returncode, res.stdout, kind="off-CPU")


def diff_flame(before: Path, after: Path, out_dir: Path, *, name: str = "diff", title: str | None = None
               ) -> DiffResult:
    """Differential flame graph of two folded files (``before`` → ``after``).

    ``NAME.svg`` has the widths of ``after``: red frames grew, blue shrank (samples
    normalised so run length does not matter). ``NAME-reverse.svg`` has the widths of
    ``before`` with hues swapped, so frames that vanished in ``after`` are visible too.
    """
    for path in (before, after):
        if not path.is_file():
            raise HoneError(f"{path}: no such folded file")
    out_dir.mkdir(parents=True, exist_ok=True)
    base = _safe_name(name)
    diff_tool = _tool("inferno-diff-folded")
    # Two builds usually have two process names (prog-a, prog-b): give both one root frame
    # so the stacks below it line up.
    a_text, b_text = _common_root(before.read_text(), after.read_text())
    with tempfile.TemporaryDirectory(prefix="hone-diff-") as tmp:
        a_path, b_path = Path(tmp) / "before.folded", Path(tmp) / "after.folded"
        a_path.write_text(a_text)
        b_path.write_text(b_text)
        fwd = run_process([diff_tool, "--normalize", str(a_path), str(b_path)], timeout=TOOL_TIMEOUT_S)
        rev = run_process([diff_tool, "--normalize", str(b_path), str(a_path)], timeout=TOOL_TIMEOUT_S)
    for res in (fwd, rev):
        if not res.ok:
            raise HoneError(f"inferno-diff-folded failed: {res.describe_failure()}")
    folded = out_dir / f"{base}.folded"
    folded.write_text(fwd.stdout)
    reverse_folded = out_dir / f"{base}-reverse.folded"
    reverse_folded.write_text(rev.stdout)
    deltas = self_share_deltas(parse_folded(a_text), parse_folded(b_text))
    changed = [d for d in deltas[:2] if abs(d.delta) >= 0.01]
    subtitle = "red = more samples after, blue = fewer"
    if changed:
        subtitle += "; biggest change: " + ", ".join(f"{d.function} {d.delta * 100:+.1f} pt" for d in changed)
    svg = render_svg(folded, out_dir / f"{base}.svg", title=title or f"differential: {before.name} → {after.name}",
                     subtitle=subtitle)
    svg_rev = render_svg(reverse_folded, out_dir / f"{base}-reverse.svg",
                         title=(title or f"differential: {before.name} → {after.name}") + " (widths of before)",
                         subtitle=subtitle, extra=["--negate"])
    reverse_folded.unlink()
    return DiffResult(folded, svg, svg_rev, deltas)


def _roots(text: str) -> set[str]:
    return {line.split(";", 1)[0] for line in text.splitlines() if ";" in line}


def _common_root(a: str, b: str) -> tuple[str, str]:
    """Rename the process-name frame when each profile has exactly one and they differ."""
    ra, rb = _roots(a), _roots(b)
    if len(ra) == 1 and len(rb) == 1 and ra != rb:
        root = f"{next(iter(ra))}|{next(iter(rb))}"
        fix = lambda text: "\n".join(  # noqa: E731
            root + line[line.index(";"):] if ";" in line else line for line in text.splitlines()) + "\n"
        return fix(a), fix(b)
    return a, b


def folded_from(path: Path) -> Path:
    """A folded file given a file or a `hone flame` output directory (its only .folded)."""
    if path.is_dir():
        found = sorted(p for p in path.glob("*.folded") if not p.name.startswith("diff"))
        if len(found) != 1:
            raise HoneError(f"{path}: expected one .folded file, found {len(found)}",
                            hint="pass the .folded files themselves")
        return found[0]
    return path
