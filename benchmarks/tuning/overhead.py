"""Suggestion overhead of hone's GP sampler at 50 knobs and 200 trials (the goal: < 1 s).

    python benchmarks/tuning/overhead.py [--knobs 50] [--trials 200] [--noise 0.05]

A mixed space (20 int ranges, 10 of them log; 15 floats; 10 ordered value lists; 5
categoricals), a smooth function of a few of them; the first ``--trials`` − 20 trials are
told to the study without timing, then the CPU seconds of each of the last 20 suggestions
(the sampler's ``ask``, the model's fit included) are printed: mean, median and max, and the
wall-clock mean and max (BLAS may use both cores: CPU seconds can exceed the wall's). The
import of scikit-learn, once a process, is timed apart. The
study carries the noise hone tune would record (``--noise``), so the noisy path (Thompson
half, line probes) is timed as well.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from hone.tune.gp import ATTR_NOISE_CV, HoneGPSampler

optuna.logging.set_verbosity(optuna.logging.ERROR)


def space(knobs: int) -> dict[str, optuna.distributions.BaseDistribution]:
    out: dict[str, optuna.distributions.BaseDistribution] = {}
    for i in range(knobs):
        kind = i % 10
        if kind < 4:
            out[f"k{i:02d}"] = IntDistribution(1, 4096, log=kind < 2)
        elif kind < 7:
            out[f"k{i:02d}"] = FloatDistribution(0.0, 1.0)
        elif kind < 9:
            out[f"k{i:02d}"] = IntDistribution(0, 7)  # an ordered value list, as hone passes it
        else:
            out[f"k{i:02d}"] = CategoricalDistribution(["a", "b", "c", "d"])
    return out


def value(p: dict[str, object]) -> float:
    total = 1.0
    for name, v in p.items():
        i = int(name[1:])
        if i % 7:  # most knobs barely matter
            continue
        if isinstance(v, str):
            total += 0.1 * (v != "b")
        elif isinstance(v, float):
            total += (v - 0.3) ** 2
        else:
            total += (math.log(1 + int(v)) - 2.0) ** 2 / 10
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--knobs", type=int, default=50)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--noise", type=float, default=0.05)
    ap.add_argument("--timed", type=int, default=20)
    args = ap.parse_args()
    dists = space(args.knobs)
    rng = np.random.default_rng(0)
    study = optuna.create_study(sampler=HoneGPSampler(seed=0))
    study.set_user_attr(ATTR_NOISE_CV, args.noise)
    filler = optuna.samplers.RandomSampler(seed=1)
    for _ in range(args.trials - args.timed):  # untimed history: random configurations
        params = {n: filler.sample_independent(study, None, n, d) for n, d in dists.items()}  # type: ignore[arg-type]
        study.add_trial(optuna.trial.create_trial(params=params, distributions=dists,
                                                  value=value(params) * (1 + args.noise * rng.standard_normal())))
    # the process's first suggestion imports scikit-learn (~1 s, once per `hone tune`): timed apart
    wall = time.perf_counter()
    import sklearn.gaussian_process  # noqa: F401

    first = time.perf_counter() - wall
    times, walls = [], []
    for _ in range(args.timed):
        started, wall = time.process_time(), time.perf_counter()
        t = study.ask(dists)
        times.append(time.process_time() - started)
        walls.append(time.perf_counter() - wall)
        study.tell(t, value(t.params) * (1 + args.noise * rng.standard_normal()))
    print(f"{args.knobs} knobs, suggestions {args.trials - args.timed + 1}..{args.trials}, noise {args.noise:g}: "
          f"CPU s per suggestion mean {statistics.mean(times):.3f}, median {statistics.median(times):.3f}, "
          f"max {max(times):.3f}; wall s mean {statistics.mean(walls):.3f}, max {max(walls):.3f} "
          f"(scikit-learn's import before them, once a process: {first:.3f} s)")


if __name__ == "__main__":
    main()
