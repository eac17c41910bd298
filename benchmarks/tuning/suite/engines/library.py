"""Library anchors, registered into :mod:`.anchors`: A-Tune's engine (``atune``), Optuna's TPE
(``tpe``) and GP (``optuna-gp``), OpenTuner (``opentuner``) and SMAC3 (``smac``).

``atune`` and ``tpe`` run in this process (hone's venv has scikit-optimize and Optuna); the others
need libraries that cannot live in hone's venv (PyTorch; OpenTuner's argparse/future; SMAC's
stack) and run in ``benchmarks/tuning/.venv-anchors`` (``setup-anchors.sh``) as a subprocess
worker (:mod:`.anchor_worker`) that asks for each evaluation; the evaluation itself happens here,
through :func:`.anchors.observer`. How each library is called and how the suite's knob kinds map
to it: the functions' docstrings (here and in :mod:`.anchor_worker`) and the README.
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from problems import Config, Knob, Problem

from . import anchor_worker, anchors

HERE = Path(__file__).resolve().parent
ANCHORS_VENV = HERE.parents[1] / ".venv-anchors"
#: seconds the worker may take to propose one configuration (Optuna's GP fits in ~1 s; a stuck
#: worker is killed) and to start (imports)
ASK_TIMEOUT_S = 900.0


def space_of(problem: Problem) -> list[dict[str, Any]]:
    return [{"name": k.name, "kind": k.kind, "low": k.low, "high": k.high, "log": k.log, "values": list(k.values)}
            for k in problem.knobs]


def coerce(problem: Problem, cfg: Config) -> Config:
    """A library's proposal as the problem's values (JSON and numpy types → the knob's own)."""
    out: Config = {}
    for k in problem.knobs:
        v = cfg[k.name]
        if k.kind == "int":
            out[k.name] = round(float(v))
        elif k.kind == "float":
            out[k.name] = float(v)
        else:
            out[k.name] = _listed(k, v)
    return out


def _listed(k: Knob, v: Any) -> Any:
    for x in k.values:
        if x == v or str(x) == str(v):
            return x
    if k.kind == "ordinal" and isinstance(v, int | float):
        # skopt reads a list of two numbers as a range (A-Tune passes value lists to it as they
        # are): a value between them runs as the nearest listed one
        return min(k.values, key=lambda x: abs(x - v))
    raise ValueError(f"{k.name}: {v!r} is not one of {k.values}")


# ------------------------------------------------------------------------------ A-Tune

#: A-Tune's bayes engine: ``Optimizer(..., n_random_starts=20, ...)`` when the client gives no
#: ``random_starts`` (analysis/optimizer/optimizer.py, the constructor's default and
#: ``20 if n_random_starts is None``), the GP's noise from atuned.cnf (``noise = 0.000000001``).
ATUNE_RANDOM_STARTS = 20
ATUNE_NOISE = 1e-9


def atune_dimensions(problem: Problem) -> list[Any]:
    """The knobs as an A-Tune user writes them in the server YAML and as A-Tune's
    ``Optimizer.build_space``/``handle_discrete_data`` turn them into skopt dimensions:

    * int/float range → ``type: continuous``, ``dtype: int|float``, ``scope: [low, high]`` →
      the tuple ``(low, high)`` (skopt: ``Integer``/``Real``). A-Tune has no log scale: ``log``
      is lost.
    * ordinal (ordered numbers) → ``type: discrete``, ``dtype: int|float``, ``items: [...]`` →
      ``list(set(items))`` (skopt: an unordered ``Categorical``).
    * categorical → ``type: discrete``, ``dtype: string``, ``options: [...]`` → the list as given
      (``Categorical``).
    """
    dims: list[Any] = []
    for k in problem.knobs:
        if k.kind == "int":
            dims.append((int(k.low), int(k.high)))
        elif k.kind == "float":
            dims.append((float(k.low), float(k.high)))
        elif k.kind == "ordinal":
            dims.append(list(set(k.values)))
        else:
            dims.append(list(k.values))
    return dims


_FAST_CHECKED: list[float] = []


def _atune_fast() -> None:
    """skopt's all-categorical GP kernel through exact matrix forms (:mod:`.atune_fast`), checked
    against skopt's own once per process."""
    from . import atune_fast

    if not _FAST_CHECKED:
        worst = atune_fast.check()
        if not worst < 1e-8:
            raise RuntimeError(f"atune_fast differs from skopt by {worst:.2e}")
        _FAST_CHECKED.append(worst)
    atune_fast.patch()


def atune(problem: Problem, seed: int, budget: int, noise: float) -> anchors.Trace:
    """A-Tune's engine (``engine: bayes``) as analysis/optimizer/optimizer.py's ``run`` calls it:
    ``params_space = normalize_dimensions(build_space())``, ``cook_estimator("GP",
    space=params_space, noise=…)``, ``skopt.Optimizer(dimensions=params_space,
    n_random_starts=20, random_state=…, base_estimator=estimator)`` with skopt's defaults
    otherwise (``gp_hedge``; each acquisition over 10,000 random points then L-BFGS from the 5
    best), then ``ask``/``tell`` for ``max_eval`` iterations, minimising the objective (here
    −score); A-Tune reports ``ret.x``, its best observation. A-Tune seeds nothing
    (``random_state=random.randint(0, 1000)``, the GP's restarts from numpy's global generator):
    both are seeded here."""
    from skopt import Optimizer
    from skopt.utils import cook_estimator, normalize_dimensions

    _atune_fast()
    observe = anchors.observer(problem, seed, noise)
    np_random_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        space = normalize_dimensions(atune_dimensions(problem))
        estimator = cook_estimator("GP", space=space, noise=ATUNE_NOISE)
        opt = Optimizer(dimensions=space, n_random_starts=ATUNE_RANDOM_STARTS,
                        random_state=random.Random(f"atune:{seed}").randint(0, 1000), base_estimator=estimator)
        configs: list[Config] = []
        scores: list[float] = []
        for _ in range(budget):
            x = opt.ask()
            cfg = coerce(problem, {k.name: v for k, v in zip(problem.knobs, x, strict=True)})
            y = observe(cfg)
            configs.append(cfg)
            scores.append(y)
            opt.tell(x, -y)
    return configs, scores


def np_random_seed(seed: int) -> None:
    import numpy as np

    np.random.seed(seed)


# ------------------------------------------------------------------------------- Optuna

def tpe(problem: Problem, seed: int, budget: int, noise: float) -> anchors.Trace:
    """Optuna's ``TPESampler(seed=seed)`` with its defaults (:func:`.anchor_worker.optuna_session`)."""
    return _in_process("tpe", problem, seed, budget, noise)


def _in_process(engine: str, problem: Problem, seed: int, budget: int, noise: float) -> anchors.Trace:
    observe = anchors.observer(problem, seed, noise)
    configs: list[Config] = []
    scores: list[float] = []

    def evaluate(cfg: Config) -> float:
        c = coerce(problem, cfg)
        configs.append(c)
        scores.append(observe(c))
        return scores[-1]
    anchor_worker.SESSIONS[engine](space_of(problem), seed, budget, noise, evaluate)
    return configs, scores


# ------------------------------------------------------------------- subprocess workers

class WorkerError(RuntimeError):
    pass


def anchors_python() -> Path:
    py = ANCHORS_VENV / "bin" / "python"
    if not py.exists():
        raise WorkerError(f"{py} is missing: run benchmarks/tuning/setup-anchors.sh (make bench-tuning does)")
    return py


def remote(engine: str, problem: Problem, seed: int, budget: int, noise: float) -> anchors.Trace:
    """``engine``'s session in the anchors' venv (:mod:`.anchor_worker`); each configuration it
    asks for is evaluated here. The worker runs in a session of its own under hone's process
    tagging (:func:`hone.core.process.start_process`): killed with everything it started if it
    takes longer than :data:`ASK_TIMEOUT_S` for one step, and swept when it exits."""
    from hone.core.process import finish_process, start_process

    observe = anchors.observer(problem, seed, noise)
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    configs: list[Config] = []
    scores: list[float] = []
    # a directory of its own: OpenTuner writes opentuner.log where it runs
    with tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory(prefix="anchor-worker-") as work:
        proc = start_process([str(anchors_python()), str(HERE / "anchor_worker.py"), engine], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=work)
        assert proc.stdin is not None and proc.stdout is not None
        buf = b""

        def tail() -> str:
            err.seek(0)
            return err.read().decode(errors="replace")[-2000:]

        def recv() -> dict[str, Any]:
            nonlocal buf
            deadline = time.monotonic() + ASK_TIMEOUT_S
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise WorkerError(f"{engine} worker: no answer within {ASK_TIMEOUT_S:.0f} s")
                ready, _, _ = select.select([proc.stdout], [], [], left)
                if ready:
                    chunk = os.read(proc.stdout.fileno(), 1 << 16)
                    if not chunk:
                        raise WorkerError(f"{engine} worker exited ({proc.wait()}): {tail()}")
                    buf += chunk
            line, _, buf = buf.partition(b"\n")
            return json.loads(line)

        def send(obj: dict[str, Any]) -> None:
            proc.stdin.write((json.dumps(obj) + "\n").encode())
            proc.stdin.flush()

        try:
            send({"space": space_of(problem), "seed": seed, "budget": budget, "noise": noise})
            while True:
                msg = recv()
                if "done" in msg:
                    rec = msg.get("recommended")
                    break
                if len(configs) >= budget:
                    raise WorkerError(f"{engine} worker asked for more than {budget} evaluations")
                cfg = coerce(problem, msg["ask"])
                configs.append(cfg)
                scores.append(observe(cfg))
                send({"score": scores[-1]})
            proc.stdin.close()
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            finish_process(proc)
    if rec is None:
        return configs, scores
    return configs, scores, coerce(problem, rec)


def _remote(engine: str) -> Callable[[Problem, int, int, float], anchors.Trace]:
    def fn(problem: Problem, seed: int, budget: int, noise: float) -> anchors.Trace:
        return remote(engine, problem, seed, budget, noise)
    fn.__name__ = engine
    return fn


anchors.register("atune", atune)
anchors.register("tpe", tpe)
anchors.register("optuna-gp", _remote("optuna-gp"))
anchors.register("opentuner", _remote("opentuner"))
anchors.register("smac", _remote("smac"), per_budget=True)

if __name__ == "__main__":
    sys.exit("library.py registers the anchors: run benchmarks/tuning/run.py")
