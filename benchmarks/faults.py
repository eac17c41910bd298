"""`make bench-faults`: a longer randomized fault-injection run than the test suite's.

Each sequence builds a pretend machine (a config file with a random start: keys present,
commented out, absent, duplicated, quoted; a script knob; as root a sysctl and a block
device's read-ahead), picks a verb (tune, run, apply) and kills hone with SIGKILL at a
random crash point and pass, or at a random moment; then `hone rollback` must give back
every byte and value, and `hone status` must say nothing is changed. Prints how many kill
points and sequences were tried and what, if anything, was lost.

    .venv/bin/python benchmarks/faults.py [--minutes 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from hone.core.faults import POINTS

HONE = str(Path(sys.executable).with_name("hone"))
SYSCTL = Path("/proc/sys/vm/dirty_writeback_centisecs")
KEYS = ("a", "b", "c", "d")


def _readahead() -> Path | None:
    for dev in sorted(Path("/sys/block").iterdir()):
        path = dev / "queue" / "read_ahead_kb"
        if path.exists() and not dev.name.startswith(("loop", "ram")):
            return path
    return None


def _start(rng: random.Random) -> str:
    lines = ["# generated"]
    for key in KEYS:
        kind = rng.choice(["present", "commented", "absent", "duplicated", "quoted"])
        v = rng.randint(1, 3)
        lines += {"present": [f"{key} = {v}"], "commented": [f"#{key} = {v}"], "absent": [],
                  "duplicated": [f"{key} = {v}", f"{key} = {v + 1}"], "quoted": [f"{key} = '{v}'"]}[kind]
        if rng.random() < 0.3:
            lines.append(rng.choice(["", "# note", "other = 9"]))
    return "\n".join(lines) + ("\n" if rng.random() < 0.8 else "")


class Machine:
    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root = root
        self.conf = root / "app.conf"
        self.conf.write_text(_start(rng))
        self.level = root / "level"
        self.level.write_text("low")
        self.readahead = _readahead() if os.geteuid() == 0 else None
        (root / "bench.py").write_text(
            "import re, sys\nt = open(sys.argv[1]).read()\n"
            "print('score:', 10 + sum(int(x) for x in re.findall(r'^[a-d] = (\\d+)', t, re.M)))\n")
        restart = json.dumps(["sh", "-c", 'echo restart >> "$0"', str(root / "restarts.log")])
        self.knobs = [k for k in KEYS if rng.random() < 0.75] or ["a"]
        lines = [f"{{name: {k}, kind: file, path: {self.conf}, key: {k}, values: [1, 2, 3], restart: {restart}}}"
                 for k in self.knobs]
        lines.append(f"{{name: level, kind: script, get: [cat, {self.level}], set: [sh, -c, 'printf %s \"$1\" >"
                     f" \"$0\"', {self.level}, $value], values: [low, high]}}")
        self.sets = [f"{k}={rng.randint(1, 3)}" for k in self.knobs] + ["level=high"]
        if os.geteuid() == 0:
            lines.append("{name: vm.dirty_writeback_centisecs, kind: sysctl, values: [310, 420, 530]}")
            self.sets.append("vm.dirty_writeback_centisecs=420")
            if self.readahead is not None:
                lines.append(f"{{name: ra, kind: sysfs, path: {self.readahead}, values: [96, 160, 224]}}")
                self.sets.append("ra=224")
        self.spec = root / "hone.yaml"
        self.spec.write_text(textwrap.dedent(f"""\
            name: faults
            benchmark: {{command: [python3, bench.py, {self.conf}], timeout: 60}}
            metrics: [{{name: score, extract: {{regex: 'score: ([0-9]+)'}}, goal: maximize}}]
            knobs:
            """) + "".join(f"  - {x}\n" for x in lines))
        self.env = {**os.environ, "HONE_STATE_DIR": str(root / "state"), "HONE_MACHINE_DIR": str(root / "machine")}

    def state(self) -> dict[str, object]:
        out: dict[str, object] = {"conf": self.conf.read_bytes(), "level": self.level.read_text(),
                                  "strays": sorted(p.name for p in self.root.glob(".hone-tmp-*"))}
        if os.geteuid() == 0:
            out["sysctl"] = SYSCTL.read_text().strip()
            if self.readahead is not None:
                out["readahead"] = self.readahead.read_text().strip()
        return out

    def argv(self, verb: str, rng: random.Random) -> list[str]:
        sets = [x for s in self.sets for x in ("--set", s)]
        if verb == "tune":
            return ["tune", str(self.spec), "--sampler", "random", "--trials", str(rng.randint(2, 4)), "--seed",
                    str(rng.randint(0, 999)), "--repeats", "1", "--confirm", str(rng.choice([0, 6])), "--top-k", "1"]
        return [verb, str(self.spec), *sets]

    def hone(self, argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([HONE, *argv], env=env or self.env, capture_output=True, text=True, timeout=300)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    deadline = time.monotonic() + 60 * args.minutes
    killed: collections.Counter[str] = collections.Counter()
    finished = sequences = 0
    lost: list[str] = []
    while time.monotonic() < deadline:
        sequences += 1
        with tempfile.TemporaryDirectory(prefix="hone-faults-") as tmp:
            m = Machine(Path(tmp), rng)
            before = m.state()
            verb = rng.choice(["tune", "tune", "run", "apply"])
            argv = m.argv(verb, rng)
            if rng.random() < 0.7:
                point, count = rng.choice(POINTS), rng.randint(1, 4)
                res = m.hone(argv, {**m.env, "HONE_CRASH_AT": f"{point}:{count}"})
                what = f"{verb} {point}:{count}"
                code = res.returncode
            else:
                delay = rng.uniform(0.3, 3.0)
                proc = subprocess.Popen([HONE, *argv], env=m.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                time.sleep(delay)
                proc.kill()
                code = proc.wait(timeout=60)
                what = f"{verb} at {delay:.2f} s"
            if code == -9:
                killed[what.split(":")[0] if "at " not in what else f"{verb} at a random moment"] += 1
            else:
                finished += 1
            back = m.hone(["rollback"])
            status = m.hone(["status"])
            after = m.state()
            if back.returncode != 0 or after != before or "nothing changed" not in status.stdout:
                diff = [k for k in before if before[k] != after.get(k)]
                lost.append(f"{what}: rollback exit {back.returncode}, differs: {diff} {back.stderr.strip()[:200]}")
    print(f"sequences: {sequences} (seed {args.seed}, {args.minutes:g} min; root: {os.geteuid() == 0})")
    print(f"killed with SIGKILL: {sum(killed.values())}; ran to the end (point not reached): {finished}")
    for what, n in sorted(killed.items()):
        print(f"  {n:4d}  {what}")
    print(f"lost after rollback: {len(lost)}")
    for line in lost:
        print(f"  {line}")
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
