"""Anchors: other tuners on the same problems, seeds, noise and budgets (see the package doc).

Each anchor maximises the problem's score of one noisy run (A-Tune's weighted % change vs the
default). ``trace(problem, seed, budget, noise)`` returns every configuration it evaluated and
the score it observed; :func:`best_prefix` turns a trace into the recommendation at a budget.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from problems import Config, Problem

from . import Outcome

Trace = tuple[list[Config], list[float]]


def observer(problem: Problem, seed: int, noise: float) -> Callable[[Config], float]:
    """The value an anchor sees for a configuration: the score of one noisy run (seeded)."""
    rng = random.Random(f"anchor:{problem.name}:{seed}:{noise}")

    def observe(cfg: Config) -> float:
        return problem.score(problem.observe(problem.default | cfg, rng, noise))
    return observe


def best_prefix(trace: Trace, budget: int) -> Config | None:
    configs, scores = trace
    if not configs:
        return None
    n = min(budget, len(configs))
    i = max(range(n), key=lambda j: scores[j])
    return configs[i]


def random_search(problem: Problem, seed: int, budget: int, noise: float) -> Trace:
    rng = random.Random(f"random:{problem.name}:{seed}")
    observe = observer(problem, seed, noise)
    configs = [{k.name: k.uniform(rng) for k in problem.knobs} for _ in range(budget)]
    return configs, [observe(c) for c in configs]


def _hone_search(problem: Problem, seed: int, budget: int, noise: float) -> Trace:
    from .hone_engine import search_only

    return search_only(problem, seed, budget, noise)


def _hone_search_ts(problem: Problem, seed: int, budget: int, noise: float) -> Trace:
    from .hone_engine import search_only

    return search_only(problem, seed, budget, noise, {"gp.thompson_share": 0.5})


ANCHORS: dict[str, Callable[[Problem, int, int, float], Trace]] = {"random": random_search,
                                                                    "hone-search": _hone_search,
                                                                    "hone-search-ts": _hone_search_ts}


def run(name: str, problem: Problem, seed: int, budgets: list[int], noise: float) -> dict[int, Outcome]:
    """One session of ``name`` to the largest budget; the outcome at every budget."""
    started = time.process_time()
    trace = ANCHORS[name](problem, seed, max(budgets), noise)
    seconds = time.process_time() - started
    return {b: Outcome(recommended=best_prefix(trace, b), runs=min(b, len(trace[0])), trials=min(b, len(trace[0])),
                       seconds=seconds, evaluated=trace[0][:b], observed=trace[1][:b]) for b in budgets}


def register(name: str, fn: Callable[[Problem, int, int, float], Trace]) -> None:
    ANCHORS[name] = fn


