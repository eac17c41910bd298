"""How far knob importances from a few trials are from those of the whole space.

    python benchmarks/tuning/importances.py [--reps 20] [--jobs 2]

For each replayed table of the suite (``data/NAME.csv``: every configuration of a real
program's knobs, measured on this machine), the reference is fANOVA (what ``hone tune``
prints) over all rows. Then, for 2, 5, 10 and 20 trials per knob, ``--reps`` uniform samples of
the rows, noise-free and with 5% noise on the metric, each get fANOVA again. Printed per
table and over all: how often the most important knob is the reference's, and the median of the
largest error in any knob's share. ``hone tune`` labels importances a rough guide below the
count where the top knob was right in ≥ 90% of the samples (docs/decisions/0085).
"""

from __future__ import annotations

import argparse
import csv
import random
import statistics
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import optuna
from optuna.distributions import CategoricalDistribution
from optuna.trial import create_trial

DATA = Path(__file__).resolve().parent / "data"
#: Each table's objective column (the others but the latency are its knobs).
OBJECTIVES = {"nginx": "requests_per_s", "postgresql": "tps", "redis": "rps", "sklearn-mlp": "error",
              "sklearn-rf": "error", "sklearn-svm": "error", "sqlite": "seconds", "zlib": "seconds"}
PER_KNOB = (2, 5, 10, 20)
NOISE = (0.0, 0.05)


def table(name: str) -> tuple[list[dict[str, str]], list[str], str]:
    with (DATA / f"{name}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    obj = OBJECTIVES[name]
    return rows, [k for k in rows[0] if k not in (obj, "latency_p99_ms")], obj


def importances(name: str, rows: list[dict[str, str]], noise: float, rng: random.Random, seed: int) -> dict[str, float]:
    every, knobs, obj = table(name)
    space = {k: CategoricalDistribution(sorted({r[k] for r in every})) for k in knobs}
    study = optuna.create_study()
    for r in rows:
        value = float(r[obj]) * (1 + noise * rng.gauss(0, 1))
        study.add_trial(create_trial(params={k: r[k] for k in knobs}, distributions=space, value=value))
    fanova = optuna.importance.FanovaImportanceEvaluator(seed=seed)
    imp = optuna.importance.get_param_importances(study, evaluator=fanova)
    return {k: float(imp.get(k, 0.0)) for k in knobs}


def one(args: tuple[str, int, float, int, dict[str, float]]) -> tuple[str, int, float, bool, float]:
    name, per, noise, rep, reference = args
    rows, knobs, _ = table(name)
    rng = random.Random(f"{name}:{per}:{noise}:{rep}")
    got = importances(name, rng.sample(rows, min(len(rows), per * len(knobs))), noise, rng, seed=rep)
    right = max(got, key=got.__getitem__) == max(reference, key=reference.__getitem__)
    return name, per, noise, right, max(abs(got[k] - reference[k]) for k in knobs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    reference = {n: importances(n, table(n)[0], 0.0, random.Random(0), seed=0) for n in OBJECTIVES}
    jobs = [(n, p, z, r, reference[n]) for n in OBJECTIVES for p in PER_KNOB for z in NOISE for r in range(args.reps)]
    with ProcessPoolExecutor(args.jobs) as ex:
        res = list(ex.map(one, jobs, chunksize=4))

    def cell(sel: list[tuple[str, int, float, bool, float]]) -> str:
        return f"{sum(r[3] for r in sel) / len(sel):.0%} / {statistics.median(r[4] for r in sel):.2f}"

    print("top knob right / median largest share error, noise-free and 5% pooled")
    print("| table | " + " | ".join(f"{p} per knob" for p in PER_KNOB) + " |")
    print("|---" * (len(PER_KNOB) + 1) + "|")
    for n in OBJECTIVES:
        print(f"| {n} | " + " | ".join(cell([r for r in res if r[0] == n and r[1] == p]) for p in PER_KNOB) + " |")
    print("| all | " + " | ".join(cell([r for r in res if r[1] == p]) for p in PER_KNOB) + " |")


if __name__ == "__main__":
    main()
