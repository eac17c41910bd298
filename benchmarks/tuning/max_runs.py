"""``hone tune --max-runs``: intensification against fixed repeats at the same run budget.

The real ``hone tune`` (GP sampler, confirmation, ablation when it fits) on a table problem of
problems.py: each benchmark run prints the configuration's true value × (1 + noise·N(0, 1)),
a draw seeded by the seed and the run's number. Both modes get ``--max-runs`` runs in all and
``repeats: 3``: ``intensify`` (the default with --max-runs: one run per trial, a contender
re-measured up to 3) and ``fixed`` (``--no-intensify``: 3 runs per trial). Judged on the true
value of what hone recommends (the baseline when it keeps the current configuration):
regret = (true − optimum)/optimum in %.

    python benchmarks/tuning/max_runs.py --problems sqlite zlib --seeds 10   # ~25 min on 2 cores
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
from problems import Problem, table_problem  # noqa: E402

HONE = str(Path(sys.executable).with_name("hone"))
MODES = {"intensify": [], "fixed": ["--no-intensify"]}

BENCH = """
import os, random, sys
sys.path.insert(0, {here!r})
from problems import _num, table_problem
p = table_problem({name!r})
cfg = {{k: _num(v) for k, v in zip({names!r}, sys.argv[1:])}}
with open(os.environ["RUNS_FILE"], "a+") as f:  # the run's number seeds its noise
    f.seek(0)
    n = len(f.read().splitlines())
    f.write("run\\n")
rng = random.Random(f"{{os.environ['NOISE_SEED']}}:{{n}}")
print(f"time: {{p.value(cfg) * (1 + {noise} * rng.gauss(0, 1))}}")
"""


def baseline_config(p: Problem) -> dict[str, Any]:
    """The starting configuration: the middle of each ordered knob, the first label of the others."""
    return {n: vals[len(vals) // 2] if kind != "categorical" else vals[0] for n, (kind, vals) in p.space.items()}


def write_spec(d: Path, p: Problem, noise: float) -> Path:
    names = list(p.space)
    (d / "bench.py").write_text(BENCH.format(here=str(HERE), name=p.name, names=names, noise=noise))
    base = baseline_config(p)
    knobs = "\n".join(f"  - {{name: {n}, kind: param, values: {json.dumps(vals)}, default: {json.dumps(base[n])}}}"
                      for n, (_, vals) in p.space.items())
    args = ", ".join(f'"{{{n}}}"' for n in names)
    spec = d / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: {p.name}
        benchmark:
          command: [{sys.executable}, bench.py, {args}]
          timeout: 30
          repeats: 3
        metrics:
          - {{name: time, extract: {{regex: 'time: ([-0-9.e]+)'}}, goal: minimize}}
        knobs:
        """) + knobs + "\n")
    return spec


def one(p: Problem, mode: str, seed: int, budget: int, noise: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"maxruns-{p.name}-") as tmp:
        d = Path(tmp)
        spec = write_spec(d, p, noise)
        env = {**os.environ, "RUNS_FILE": str(d / "runs.txt"), "NOISE_SEED": str(seed),
               "HONE_STATE_DIR": str(d / "state"), "HONE_MACHINE_DIR": str(d / "machine")}
        res = subprocess.run([HONE, "tune", str(spec), "--max-runs", str(budget), "--seed", str(seed),
                              "--json", str(d / "r.json"), *MODES[mode]],
                             cwd=d, env=env, capture_output=True, text=True, timeout=1800)
        if res.returncode != 0:
            return {"problem": p.name, "mode": mode, "seed": seed, "error": res.stderr[-400:]}
        doc = json.loads((d / "r.json").read_text())
        runs = len((d / "runs.txt").read_text().splitlines())
    true = p.value(baseline_config(p) | (doc["recommended"] or {}))
    return {"problem": p.name, "mode": mode, "seed": seed, "regret_pct": 100 * (true - p.optimum) / p.optimum,
            "trials": doc["trials"], "runs": runs, "runs_spent": doc["budget"]["runs_spent"],
            "verdict": doc["verdict"]}


def summary(rows: list[dict[str, Any]], budget: int, noise: float) -> str:
    out = ["| problem | mode | seeds | mean regret % | median regret % | kept the baseline | trials (mean) |",
           "|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["problem"] for r in rows):
        for mode in MODES:
            rs = [r for r in rows if r["problem"] == name and r["mode"] == mode and "regret_pct" in r]
            if not rs:
                continue
            regret = [r["regret_pct"] for r in rs]
            kept = sum(r["verdict"] != "faster" for r in rs)
            out.append(f"| {name} | {mode} | {len(rs)} | {statistics.mean(regret):.2f} | "
                       f"{statistics.median(regret):.2f} | {kept} | {statistics.mean(r['trials'] for r in rs):.1f} |")
    return f"--max-runs {budget}, {100 * noise:g}% noise per run, repeats 3\n\n" + "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="+", default=["sqlite"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--noise", type=float, default=0.05)
    ap.add_argument("--out", default=str(HERE / "max-runs"))
    args = ap.parse_args()
    rows = []
    for name in args.problems:
        p = table_problem(name)
        for seed in range(args.seed0, args.seed0 + args.seeds):
            for mode in MODES:
                rows.append(one(p, mode, seed, args.budget, args.noise))
                print(json.dumps(rows[-1]), flush=True)
    Path(args.out + ".json").write_text(json.dumps(rows, indent=1) + "\n")
    table = summary(rows, args.budget, args.noise)
    Path(args.out + ".md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
