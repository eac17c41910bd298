"""Fleet figures: wall-clock speed-up of 1, 2, 4 workers, and the price of parallel search.

1. **Speed-up.** A real PostgreSQL (throwaway cluster, as in tests/fleet) and real
   ``hone worker`` processes on a benchmark that sleeps a fixed time per trial (default
   2 s). For 1, 2 and 4 workers, the same budget; reported: end-to-end wall time (first
   worker started → last worker exited: process start-up, the one baseline, claims,
   heartbeats) and the trial phase (first trial started → last trial finished, from the
   study's own timestamps). Goal: speed-up ≥ 0.7·N.
2. **Evaluations.** The problems of benchmarks/tuning (tables measured on this machine:
   zlib, sqlite; synthetic mixed-integer functions with known optima). The worker's
   sampler (hone's ``make_sampler``), one sampler per worker on one shared study (and,
   for comparison, with TPE's constant liar), K trials pending at a time and completions
   in random order — what K asynchronous workers do. Reported: evaluations until the best
   configuration's true value is within 5% of the optimum, median over seeds, K = 1 vs 4.
   Goal: ≤ 20% more with 4.

Run (root, minutes): ``.venv/bin/python benchmarks/fleet.py [--budget 24] [--sleep 2] [--seeds 20]``
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path[:0] = [str(REPO / "src"), str(REPO)]

import optuna  # noqa: E402
from optuna.trial import TrialState  # noqa: E402
from tests.pg import start_cluster  # noqa: E402

from hone.spec.models import ParamKnobSpec  # noqa: E402
from hone.tune.samplers import make_sampler  # noqa: E402
from hone.tune.space import SearchSpace  # noqa: E402
from hone.tune.storage import driver_url  # noqa: E402

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.filterwarnings("ignore")
HONE = str(Path(sys.executable).with_name("hone"))

SLEEP_SPEC = """\
name: fleet-sleep
benchmark:
  command: ["python3", "-c",
            "import sys, time; time.sleep(float(sys.argv[2])); print('score:', abs(int(sys.argv[1]) - 7))",
            "{x}", "%(sleep)s"]
  repeats: 1
  timeout: 120
metrics:
  - {name: score, extract: {regex: 'score: ([0-9.]+)'}, goal: minimize}
knobs:
  - {name: x, kind: param, type: int, range: [0, 50], default: 30}
"""


# ---------------------------------------------------------------- 1. speed-up


def run_fleet(url: str, spec: Path, study: str, workers: int, budget: int, work: Path) -> dict[str, float]:
    """Start ``workers`` hone workers on a new study; wall times in seconds."""
    procs = []
    started = time.perf_counter()
    for i in range(workers):
        home = work / f"{study}-{i}"
        home.mkdir()
        env = {**os.environ, "HONE_STATE_DIR": str(home), "HONE_STORAGE": url}
        procs.append(subprocess.Popen([HONE, "worker", str(spec), "--study", study, "--trials", str(budget)],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for p in procs:
        _, err = p.communicate(timeout=1800)
        if p.returncode != 0:
            raise SystemExit(f"worker failed: {err[-1000:]}")
    total = time.perf_counter() - started
    everything = optuna.load_study(study_name=study, storage=driver_url(url)).get_trials()
    trials = [t for t in everything if t.state == TrialState.COMPLETE]
    stale = [t.number for t in everything if t.state == TrialState.FAIL]
    if stale:
        print(f"  ({workers} workers: trials {stale} failed as stale and were retried)")
    assert len(trials) == budget, f"{len(trials)} complete trials, expected {budget}"
    first = min(t.datetime_start for t in trials if t.datetime_start)
    last = max(t.datetime_complete for t in trials if t.datetime_complete)
    return {"total_s": total, "trials_s": (last - first).total_seconds(),
            "pids": len({t.user_attrs.get("pid") for t in trials})}


def speedup(budget: int, sleep: float, worker_counts: list[int]) -> list[dict[str, float]]:
    rows = []
    with start_cluster() as pg, tempfile.TemporaryDirectory(prefix="hone-fleet-bench-") as tmp:
        work = Path(tmp)
        spec = work / "hone.yaml"
        spec.write_text(SLEEP_SPEC % {"sleep": sleep})
        for k in worker_counts:
            url = pg.createdb(f"bench_{k}")
            r = run_fleet(url, spec, f"speed-{k}", k, budget, work)
            rows.append({"workers": k, **r})
            print(f"  {k} worker(s): total {r['total_s']:.1f} s, trial phase {r['trials_s']:.1f} s "
                  f"({r['pids']} workers ran trials)", flush=True)
    base = rows[0]
    for r in rows:
        r["speedup_total"] = base["total_s"] / r["total_s"]
        r["speedup_trials"] = base["trials_s"] / r["trials_s"]
    return rows


# ---------------------------------------------------------------- 2. evaluations


def load_problems(only: list[str] | None) -> list[tuple[str, dict[str, list[object]], Callable[[dict], float], float]]:
    """(name, space, true value of a config, optimum) for the benchmarks/tuning problems
    (``problems.py``); the zlib table alone when that module is not there."""
    sys.path.insert(0, str(HERE / "tuning"))
    try:
        import problems  # type: ignore[import-not-found]
    except ImportError:
        problems = None
    out = []
    if problems is not None:
        for name, make in problems.PROBLEMS.items():
            if only and name not in only:
                continue
            try:
                prob = make()
            except (OSError, KeyError, ValueError):  # a table not measured yet
                continue
            space = {k: list(vals) for k, (_kind, vals) in prob.space.items()}
            out.append((prob.name, space, prob.value, prob.optimum))
        return out
    path = HERE / "tuning" / "data" / "zlib.csv"
    space = {"level": list(range(1, 10)), "chunk_kb": [4, 16, 64, 256, 1024],
             "strategy": ["default", "filtered", "huffman", "rle"], "mem_level": [1, 5, 9]}
    table: dict[tuple[object, ...], float] = {}
    with path.open() as fh:
        for row in csv.DictReader(fh):
            key = (int(row["level"]), int(row["chunk_kb"]), row["strategy"], int(row["mem_level"]))
            table[key] = float(row["value"])
    return [("zlib", space, lambda c: table[tuple(c[n] for n in space)], min(table.values()))]


def evals_to_target(space: dict[str, list[object]], value: Callable[[dict], float], optimum: float, workers: int,
                    seed: int, budget: int, liar: bool = False) -> tuple[int, float]:
    """(evaluations until the best seen true value is within 5% of the optimum — budget+1
    if never, the best's regret in % after :data:`REGRET_AT` evaluations)."""
    knobs = [ParamKnobSpec(name=n, kind="param", values=v) for n, v in space.items()]  # type: ignore[arg-type]
    sspace = SearchSpace(knobs)
    storage = optuna.storages.InMemoryStorage()
    optuna.create_study(storage=storage, study_name="p", direction="minimize")
    studies = []
    for w in range(workers):
        sampler = make_sampler("auto", seed=seed * 100 + w, n_trials=budget, distributions=sspace.distributions)
        if isinstance(sampler, optuna.samplers.TPESampler):
            sampler._constant_liar = liar  # hone.fleet.worker: off (see the comparison printed)
        studies.append(optuna.load_study(study_name="p", storage=storage, sampler=sampler))
    target = optimum * 1.05
    rng = random.Random(seed)
    pending: list[tuple[int, optuna.Trial]] = []
    best = math.inf
    reached = budget + 1
    regret = math.nan
    asked = told = 0
    free = list(range(workers))
    while told < budget:
        while free and asked < budget:
            w = free.pop(0)
            pending.append((w, studies[w].ask(sspace.distributions)))
            asked += 1
        w, trial = pending.pop(rng.randrange(len(pending)))  # whichever worker finishes first
        v = value(sspace.decode(trial.params))
        studies[w].tell(trial, v)
        told += 1
        free.append(w)
        best = min(best, v)
        if best <= target and reached > budget:
            reached = told
        if told == REGRET_AT:
            regret = (best / optimum - 1) * 100
        if reached <= budget and told >= REGRET_AT:
            break
    return reached, regret


REGRET_AT = 60
VARIANTS = ((1, False, "1 worker"), (4, False, "4 workers (hone worker)"), (4, True, "4 workers + constant liar"))


def evaluations(seeds: int, budget: int, only: list[str] | None) -> list[dict[str, object]]:
    rows = []
    for name, space, value, optimum in load_problems(only):
        row: dict[str, object] = {"problem": name}
        for k, liar, label in VARIANTS:
            runs = [evals_to_target(space, value, optimum, k, s, budget, liar) for s in range(seeds)]
            row[label] = [c for c, _ in runs]
            row[label + " regret"] = [r for _, r in runs]
        print(f"  {name}: " + ", ".join(
            f"{label} {statistics.median(row[label]):.1f} evals, regret@{REGRET_AT} "  # type: ignore[arg-type]
            f"{statistics.median(row[label + ' regret']):.1f}%" for _, _, label in VARIANTS), flush=True)  # type: ignore[arg-type]
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=24, help="trials per fleet run")
    ap.add_argument("--sleep", type=float, default=2.0, help="seconds per trial")
    ap.add_argument("--workers", default="1,2,4")
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--eval-budget", type=int, default=150)
    ap.add_argument("--skip-speedup", action="store_true")
    ap.add_argument("--problems", default="", help="comma-separated benchmarks/tuning problem names (default: all)")
    args = ap.parse_args()
    print(f"# hone fleet benchmark — {dt.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}")
    if not args.skip_speedup:
        print(f"\n## wall-clock speed-up: {args.budget} trials × {args.sleep:g} s, real PostgreSQL, hone worker")
        rows = speedup(args.budget, args.sleep, [int(k) for k in args.workers.split(",")])
        print("\n| workers | total s | speed-up | goal ≥0.7·N | trial phase s | speed-up (trials) |")
        print("|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            k = r["workers"]
            print(f"| {k} | {r['total_s']:.1f} | {r['speedup_total']:.2f}× | {0.7 * k:.1f}× "
                  f"{'✓' if r['speedup_total'] >= 0.7 * k else '✗'} | {r['trials_s']:.1f} | "
                  f"{r['speedup_trials']:.2f}× |")
    print(f"\n## evaluations to reach 5% of the optimum (median of {args.seeds} seeds; "
          f"{args.eval_budget + 1} = not reached in {args.eval_budget})")
    rows = evaluations(args.seeds, args.eval_budget, args.problems.split(",") if args.problems else None)
    print("\n| problem | " + " | ".join(label for _, _, label in VARIANTS) + " | 4 vs 1 |"
          + " | ".join(f" regret@{REGRET_AT} {label}" for _, _, label in VARIANTS) + " |")
    print("|---|" + "---:|" * (2 * len(VARIANTS) + 1))
    for row in rows:
        meds = [statistics.median(row[label]) for _, _, label in VARIANTS]  # type: ignore[arg-type]
        regrets = [statistics.median(row[label + " regret"]) for _, _, label in VARIANTS]  # type: ignore[arg-type]
        cells = " | ".join(f"{m:.1f}" for m in meds)
        rcells = " | ".join(f"{r:.1f}%" for r in regrets)
        print(f"| {row['problem']} | {cells} | {(meds[1] / meds[0] - 1) * 100:+.0f}% | {rcells} |")
    print("goal: 4 workers ≤ +20% evaluations")

if __name__ == "__main__":
    main()
