"""OpenTuner's default search (AUC bandit ensemble) on the same problems.

OpenTuner 0.8.8 installs from PyPI but pulls ``argparse``/``future`` and warns under
SQLAlchemy 2, so it is kept out of hone's venv: run this file with a separate venv,
``python3 -m venv /tmp/otvenv && /tmp/otvenv/bin/pip install opentuner`` then
``/tmp/otvenv/bin/python benchmarks/tuning/opentuner_runner.py`` (writes
results-opentuner.json; merge with ``run.py --merge``). Recommends its best observation.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
import warnings
from multiprocessing import Pool
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from problems import PROBLEMS

HERE = Path(__file__).resolve().parent
CHECKPOINTS = (30, 60, 120)


def one(job: tuple[str, float, int, int]) -> dict:
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    import opentuner
    from opentuner.api import TuningRunManager
    from opentuner.measurement.interface import DefaultMeasurementInterface
    from opentuner.resultsdb.models import Result
    from opentuner.search.manipulator import ConfigurationManipulator, EnumParameter, IntegerParameter

    pname, noise, seed, budget = job
    problem = PROBLEMS[pname]()
    np.random.seed(seed)
    import random

    random.seed(seed)
    args = argparse.ArgumentParser(parents=opentuner.argparsers()).parse_args([])
    args.database = "sqlite://"
    m = ConfigurationManipulator()
    for name, (kind, values) in problem.space.items():
        m.add_parameter(EnumParameter(name, values) if kind == "categorical"
                        else IntegerParameter(name, 0, len(values) - 1))
    api = TuningRunManager(DefaultMeasurementInterface(args=args, manipulator=m, project_name=f"{pname}{seed}",
                                                       program_name="p", program_version="0"), args)
    rng = np.random.default_rng(seed + 10_000)
    t0 = time.perf_counter()
    recs, best, evals, spins = [], (float("inf"), None), 0, 0
    while evals < budget and spins < budget * 50:
        spins += 1
        dr = api.get_next_desired_result()
        if dr is None:
            continue
        data = dr.configuration.data
        cfg = {n: (data[n] if kind == "categorical" else values[data[n]])
               for n, (kind, values) in problem.space.items()}
        y = problem.value(cfg) * (1 + noise * rng.standard_normal()) if noise else problem.value(cfg)
        api.report_result(dr, Result(time=float(y)))
        evals += 1
        if y < best[0]:
            best = (y, cfg)
        recs.append(best[1])
    while len(recs) < budget:  # the search stopped proposing new configurations
        recs.append(best[1])
    regret = [(problem.value(c) - problem.optimum) / abs(problem.optimum) * 100 for c in recs]
    reach = next((i + 1 for i, r in enumerate(regret) if r <= 5.0), None)
    return {"method": "opentuner", "problem": pname, "noise": noise, "seed": seed, "reach": reach, "budget": budget,
            "regret": {str(c): regret[c - 1] for c in CHECKPOINTS if c <= budget},
            "seconds": time.perf_counter() - t0}


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed0", type=int, default=0, help="first seed")
    ap.add_argument("--tag", default="", help="write results-opentuner-TAG.json")
    a = ap.parse_args()
    jobs = [(p, n, s, a.budget) for p in PROBLEMS for n in (0.0, 0.05) for s in range(a.seed0, a.seed0 + a.seeds)]
    with Pool(a.jobs) as pool:
        rows = pool.map(one, jobs, chunksize=1)
    tag = f"-{a.tag}" if a.tag else ""
    (HERE / f"results-opentuner{tag}.json").write_text(json.dumps({"rows": rows}, indent=1))
    print(statistics.fmean(r["seconds"] for r in rows), "s/run")
