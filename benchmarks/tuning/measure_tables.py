"""Measure the tabular tuning problems once, on this machine; store them as CSV data.

Each table is ``data/NAME.csv`` (one column per knob, then one per metric, every combination
of the knobs' levels) with ``data/NAME.json`` (source, description, metrics, the default).

* ``sqlite`` — the SQLite demo workload (examples/sqlite/bench.py), every combination of
  journal_mode × synchronous × page_size × batch; wall seconds of one run (minimize), median
  of 2. A few minutes.
* ``zlib`` — compressing a fixed 2 MiB semi-compressible buffer with zlib: level × chunk size
  × strategy × memLevel; compression CPU seconds + the time to send the output over a 20 MB/s
  link (minimize), median of 3. A few minutes.
* ``sklearn-svm``, ``sklearn-rf``, ``sklearn-mlp`` — hyper-parameter tuning after bayesmark's
  published model spaces (uber/bayesmark ``sklearn_funcs.py``) and its protocol: an 80/20
  split of a data set bundled with scikit-learn (random_state 0), the error (1 − accuracy) of
  5-fold cross-validation on the 80 % part (minimize); every knob discretized to a few
  log-spaced levels that include scikit-learn's default. Deterministic (random_state 0, one
  thread): CPU counts, run them under ``nice -n 19``. 1.5, 3 and 13 minutes of one core (hours
  of wall time under nice on a busy machine).
* ``postgresql``, ``redis``, ``nginx`` — real servers on loopback, measured through
  ``hone run servers/NAME.yaml --set …`` (hone starts the server with the configuration's
  file, waits until it is ready, warms it up, runs the benchmark once untimed and 3 times
  timed, stops it and restores the file); value = the median of the 3 runs per metric
  (a throughput, maximize; a 99th-percentile latency, minimize). Configurations run in a
  random order (seed 24); the default configuration is measured first, after every 20 others
  and last, and its row is the median of those measurements; their spread is the drift
  written into the JSON's source. Timing-sensitive: never under nice. Measured here in 0.8 h
  (postgresql, ~17 s a configuration), 0.7 h (redis: 5–45 s, the appendfsync=always ones the
  slowest) and 0.6 h (nginx, ~14 s).
  Each measurement is appended to ``build/tables/NAME.jsonl`` as it is made: an interrupted
  run resumes where it stopped (``--fresh`` starts over); the finished log is kept as
  ``data/measured/NAME.jsonl`` (every measurement with its time and order).

Run: ``python benchmarks/tuning/measure_tables.py NAME... [--fresh]`` from the repository
root with hone's .venv python (scikit-learn for the sklearn tables; root, PostgreSQL, Redis,
nginx and wrk for the servers: ``scripts/setup.sh examples-postgresql examples-redis examples-nginx``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = HERE / "data"
sys.path.insert(0, str(REPO / "src"))

from hone.core.process import run_process  # noqa: E402

Config = dict[str, Any]

SQLITE_SPACE = {
    "journal_mode": ["DELETE", "TRUNCATE", "WAL", "MEMORY"],
    "synchronous": ["OFF", "NORMAL", "FULL"],
    "page_size": [1024, 4096, 65536],
    "batch": [20, 50, 200, 1000],
}
ZLIB_SPACE = {
    "level": list(range(1, 10)),
    "chunk_kb": [4, 16, 64, 256, 1024],
    "strategy": ["default", "filtered", "huffman", "rle"],
    "mem_level": [1, 5, 9],
}


def grid(space: dict[str, list[Any]]) -> list[Config]:
    """Every combination of the knobs' levels, in the order of the CSV rows."""
    return [dict(zip(space, combo, strict=True)) for combo in itertools.product(*space.values())]


def write_table(out: Path, space: dict[str, list[Any]], metrics: list[str],
                measure: Callable[[Config], dict[str, float]], fmt: str = ".5f") -> None:
    """One CSV row per combination of ``space``: the knob values, then ``measure(cfg)``'s
    metrics (flushed row by row, so an interrupted run keeps what it measured)."""
    with out.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*space, *metrics])
        for cfg in grid(space):
            values = measure(cfg)
            w.writerow([*cfg.values(), *(format(values[m], fmt) for m in metrics)])
            fh.flush()


def write_meta(name: str, meta: dict[str, Any]) -> None:
    (DATA / f"{name}.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- sqlite, zlib

def measure_sqlite(out: Path) -> None:
    def wall(cfg: Config) -> dict[str, float]:
        argv = [sys.executable, str(REPO / "examples/sqlite/bench.py"), "--rows", "2000", "--queries", "400",
                "--journal-mode", cfg["journal_mode"], "--synchronous", cfg["synchronous"],
                "--page-size", str(cfg["page_size"]), "--batch", str(cfg["batch"])]
        return {"seconds": statistics.median(run_process(argv, timeout=120, check=True).wall_s for _ in range(2))}

    write_table(out, SQLITE_SPACE, ["seconds"], wall)


def _payload() -> bytes:
    rng = random.Random(7)
    words = [bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(800)]
    text = b" ".join(rng.choice(words) for _ in range(200_000))
    noise = bytes(rng.getrandbits(8) for _ in range(300_000))
    return (text + noise)[: 2 * 1024 * 1024]


def measure_zlib(out: Path) -> None:
    data = _payload()
    strategies = {"default": zlib.Z_DEFAULT_STRATEGY, "filtered": zlib.Z_FILTERED, "huffman": zlib.Z_HUFFMAN_ONLY,
                  "rle": zlib.Z_RLE}

    def cost(cfg: Config) -> dict[str, float]:
        chunk = cfg["chunk_kb"] * 1024
        times = []
        for _ in range(3):
            t0 = time.process_time()
            size = 0
            for i in range(0, len(data), chunk):
                c = zlib.compressobj(cfg["level"], zlib.DEFLATED, 15, cfg["mem_level"], strategies[cfg["strategy"]])
                size += len(c.compress(data[i:i + chunk])) + len(c.flush())
            times.append(time.process_time() - t0)
        return {"seconds": statistics.median(times) + size / 20e6}

    write_table(out, ZLIB_SPACE, ["seconds"], cost)


# --------------------------------------------------------------------------- scikit-learn

#: A data set's 'sqrt' max_features as a fraction that gives the same count
#: (max(1, int(f · n_features)) == int(sqrt(n_features))).
SQRT_OF_30 = 0.167

#: max_depth level that stands for scikit-learn's None (no limit): measured with None, and the
#: measurement checks that no unlimited tree of the table grew this deep (so that this depth
#: would grow the very same trees).
NO_DEPTH_LIMIT = 16


@dataclass(frozen=True)
class SklearnTable:
    """A classifier's hyper-parameters, bayesmark-style, on a data set bundled with scikit-learn."""

    model: str                    # class name in sklearn
    dataset: str                  # sklearn.datasets.load_<dataset>
    fixed: dict[str, Any]         # constructor arguments that are not knobs
    space: dict[str, list[Any]]   # knob -> levels (the default's value among them)
    default: Config               # scikit-learn's defaults, as grid levels
    bayesmark: str                # the published search space, for the source text
    notes: str                    # how the levels map to scikit-learn's defaults

    def params(self, cfg: Config) -> dict[str, Any]:
        """The constructor arguments for one configuration."""
        out = dict(cfg)
        if "hidden_layer_sizes" in out:
            out["hidden_layer_sizes"] = (int(out["hidden_layer_sizes"]),)
        if out.get("max_depth") == NO_DEPTH_LIMIT:
            out["max_depth"] = None
        return self.fixed | out


def _levels(low_exp: int, high_exp: int) -> list[float]:
    """Decades 10**low_exp … 10**high_exp."""
    return [float(f"1e{e}") for e in range(low_exp, high_exp + 1)]


SKLEARN: dict[str, SklearnTable] = {
    "sklearn-svm": SklearnTable(
        model="SVC", dataset="digits", fixed={"kernel": "rbf"},
        space={
            # 13 levels, a third of a decade apart: bayesmark's [1, 1e3] and one decade below
            "C": [float(f"{10 ** (k / 3):.3g}") for k in range(-3, 10)],
            # 8 levels a factor 2 apart around scikit-learn's gamma='scale' = 1/(n_features·Var X)
            # = 0.000431 here (within 0.1 % on every fold), covering bayesmark's [1e-4, 1e-3]
            "gamma": [float(f"{0.00043104 * 2 ** k:.3g}") for k in range(-4, 4)],
            "tol": _levels(-5, -1),
        },
        default={"C": 1.0, "gamma": 0.000431, "tol": 0.001},
        bayesmark="SVM: C log [1, 1e3], gamma log [1e-4, 1e-3], tol log [1e-5, 1e-1]",
        notes="gamma 0.000431 is scikit-learn's default gamma='scale' (1/(n_features·Var X) on the 80 % split; "
              "within 0.1 % on each fold); bayesmark's probability=True is left out (it does not change predict, "
              "only the cost)",
    ),
    "sklearn-rf": SklearnTable(
        model="RandomForestClassifier", dataset="breast_cancer", fixed={"n_estimators": 10, "random_state": 0,
                                                                          "n_jobs": 1},
        space={
            "max_depth": [1, 2, 4, 8, NO_DEPTH_LIMIT],
            # a fraction of the 30 features: 1, 5 (= 'sqrt'), 12 and 30 features
            "max_features": [0.034, SQRT_OF_30, 0.4, 1.0],
            "min_samples_split": [2, 8, 32, 128],
            "min_samples_leaf": [1, 4, 16, 64],
            "min_weight_fraction_leaf": [0.0, 0.02, 0.1, 0.3],
            "criterion": ["gini", "entropy"],
        },
        default={"max_depth": NO_DEPTH_LIMIT, "max_features": SQRT_OF_30, "min_samples_split": 2,
                 "min_samples_leaf": 1, "min_weight_fraction_leaf": 0.0, "criterion": "gini"},
        bayesmark="RF (n_estimators 10): max_depth int [1, 15], max_features, min_samples_split (fractions, logit "
                  "[0.01, 0.99]), min_samples_leaf, min_weight_fraction_leaf (logit [0.01, 0.49]), "
                  "min_impurity_decrease [0, 0.5]",
        notes=f"max_depth {NO_DEPTH_LIMIT} is scikit-learn's default None (measured as None; no tree of the table "
              "grew that deep, so the two grow the same trees); max_features 0.167 of the 30 features is 5, the "
              "default 'sqrt'; min_samples_split and min_samples_leaf are counts (scikit-learn's defaults 2 "
              "and 1 are counts); n_estimators is bayesmark's 10, not a knob; min_impurity_decrease is left at 0",
    ),
    "sklearn-mlp": SklearnTable(
        model="MLPClassifier", dataset="digits",
        fixed={"solver": "adam", "early_stopping": True, "random_state": 0},
        space={
            "hidden_layer_sizes": [50, 100, 150, 200],
            "alpha": _levels(-5, 1),
            # 200 is scikit-learn's batch_size='auto' (= min(200, n_samples)) here
            "batch_size": [32, 64, 128, 200],
            "learning_rate_init": _levels(-5, -1),
        },
        default={"hidden_layer_sizes": 100, "alpha": 0.0001, "batch_size": 200, "learning_rate_init": 0.001},
        bayesmark="MLP-adam (early_stopping): hidden_layer_sizes int [50, 200], alpha log [1e-5, 1e1], batch_size "
                  "int [10, 250], learning_rate_init log [1e-5, 1e-1], tol, validation_fraction, beta_1, beta_2, "
                  "epsilon",
        notes="one hidden layer of hidden_layer_sizes units; batch_size 200 is scikit-learn's 'auto'; bayesmark's "
              "tol, validation_fraction, beta_1, beta_2 and epsilon stay at scikit-learn's defaults; "
              "early_stopping=True and solver adam are bayesmark's fixed settings",
    ),
}


def measure_sklearn(name: str) -> None:
    import sklearn
    from sklearn import datasets, ensemble, neural_network, svm
    from sklearn.model_selection import cross_validate, train_test_split
    from threadpoolctl import threadpool_limits

    table = SKLEARN[name]
    models = {"SVC": svm.SVC, "RandomForestClassifier": ensemble.RandomForestClassifier,
              "MLPClassifier": neural_network.MLPClassifier}
    model = models[table.model]
    X, y = getattr(datasets, f"load_{table.dataset}")(return_X_y=True)
    # bayesmark's protocol: a fixed 80/20 split, 5-fold CV on the 80 %
    X_train, _, y_train, _ = train_test_split(X, y, test_size=0.2, random_state=0, shuffle=True)
    deepest = 0

    def error(params: dict[str, Any]) -> float:
        nonlocal deepest
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings are part of the landscape
            cv = cross_validate(model(**params), X_train, y_train, cv=5, return_estimator=True)
        if params.get("max_depth", 0) is None:
            deepest = max(deepest, *(t.get_depth() for forest in cv["estimator"] for t in forest.estimators_))
        return 1.0 - float(cv["test_score"].mean())

    start = time.process_time()
    with threadpool_limits(1):
        write_table(DATA / f"{name}.csv", table.space, ["error"], lambda cfg: {"error": error(table.params(cfg))},
                    fmt=".6f")
        # the grid's default row must be scikit-learn's own defaults
        literal = error(table.fixed)
    cpu_min = (time.process_time() - start) / 60
    if deepest >= NO_DEPTH_LIMIT:
        raise SystemExit(f"{name}: an unlimited tree grew {deepest} deep: raise NO_DEPTH_LIMIT")
    with (DATA / f"{name}.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    default_row = next(r for r in rows if all(float(r[k]) == float(v) if not isinstance(v, str) else r[k] == v
                                              for k, v in table.default.items()))
    check = (f"scikit-learn's defaults, passed as such, give {literal:.6f}, the grid's default row "
             f"{float(default_row['error']):.6f}")
    if table.model == "RandomForestClassifier":
        check += f"; the deepest tree grown without a depth limit: {deepest}"
    levels = "; ".join(f"{k}: {', '.join(f'{v:g}' if isinstance(v, float) else str(v) for v in vals)}"
                       for k, vals in table.space.items())
    write_meta(name, {
        "source": f"scikit-learn {sklearn.__version__} {table.model} on the {table.dataset} data set bundled with "
                  f"scikit-learn, after bayesmark's published search space ({table.bayesmark}; uber/bayesmark "
                  f"sklearn_funcs.py) and protocol (80/20 split with random_state 0, 5-fold cross-validation on the "
                  f"80 %); error = 1 - mean CV accuracy; fixed {table.fixed}; deterministic (one thread); "
                  f"{len(rows)} rows measured in {cpu_min:.0f} min of CPU (measure_tables.py {name}); {check}",
        "description": f"{table.model} hyper-parameters on {table.dataset} (levels: {levels}); {table.notes}",
        "metrics": [{"name": "error", "goal": "minimize", "weight": 1, "unit": "fraction"}],
        "default": table.default,
    })
    print(f"{name}: {len(rows)} rows, {cpu_min:.1f} min CPU; {check}")


# --------------------------------------------------------------------------- servers

@dataclass(frozen=True)
class ServerTable:
    """A server measured through ``hone run servers/NAME.yaml --set …``."""

    setup: Callable[[], None]     # prepares its private files (once per table)
    space: dict[str, list[str]]   # knob -> levels (as --set values)
    default: dict[str, str]       # the start configuration
    metrics: list[dict[str, Any]]  # name, goal, weight, unit (as in the spec)
    workload: str                 # the benchmark, for the source text
    description: str
    prepare: list[list[str]] = field(default_factory=list)  # argvs run before each configuration


def _setup_postgresql() -> None:
    # the private cluster of examples/postgresql (scale 10), reused when it is there
    run_process(["bash", str(REPO / "examples/postgresql/setup.sh")], timeout=900, cwd=REPO, check=True)


def _private_copy(name: str, files: dict[str, Path], dirs: tuple[str, ...] = ()) -> None:
    """build/tables/NAME with fresh copies of ``files`` (destination → source) and empty ``dirs``."""
    import shutil

    root = REPO / "build" / "tables" / name
    for d in dirs:
        shutil.rmtree(root / d, ignore_errors=True)
        (root / d).mkdir(parents=True)
    for dest, src in files.items():
        (root / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, root / dest)


SERVERS: dict[str, ServerTable] = {
    "postgresql": ServerTable(
        setup=_setup_postgresql,
        space={
            "shared_buffers": ["16MB", "128MB", "1GB"],
            "max_wal_size": ["32MB", "128MB", "1GB"],
            "wal_sync_method": ["fdatasync", "open_datasync", "fsync"],
            "commit_delay": ["0", "200", "2000"],
            "synchronous_commit": ["on", "off"],
        },
        default={"shared_buffers": "128MB", "max_wal_size": "1GB", "wal_sync_method": "fdatasync",
                 "commit_delay": "0", "synchronous_commit": "on"},
        metrics=[{"name": "tps", "goal": "maximize", "weight": 60, "unit": "tx/s"},
                 {"name": "latency_p99_ms", "goal": "minimize", "weight": 40, "unit": "ms"}],
        workload="PostgreSQL 15 (a private cluster, pgbench scale 10, ~160 MB, loopback TCP) under pgbench's "
                 "TPC-B-like transactions: `pgbench -c 8 -j 2 -T 3` (servers/pgbench_p99.py: tps without the "
                 "connection time, and the 99th percentile of the per-transaction latencies of its -l log), after "
                 "a warm-up of 1000 read-only transactions (-S) per start",
        description="postgresql.conf keys, every one restarting the server: shared_buffers x max_wal_size x "
                    "wal_sync_method x commit_delay (group commit: waits when >= commit_siblings = 5 others are "
                    "active) x synchronous_commit; the default is PostgreSQL's stock configuration. DURABILITY: "
                    "synchronous_commit=off returns before the commit's WAL is on disk (a crash loses the last "
                    "~0.6 s of acknowledged transactions, the database stays consistent)",
    ),
    "redis": ServerTable(
        setup=lambda: _private_copy("redis", {"redis.conf": HERE / "servers/redis.conf"}, ("appendonlydir",)),
        space={
            "appendfsync": ["always", "everysec", "no"],
            "hz": ["10", "100", "500"],
            "auto_aof_rewrite_min_size": ["16mb", "64mb", "256mb"],
            "no_appendfsync_on_rewrite": ["no", "yes"],
            "latency_tracking": ["yes", "no"],
        },
        default={"appendfsync": "always", "hz": "10", "auto_aof_rewrite_min_size": "64mb",
                 "no_appendfsync_on_rewrite": "no", "latency_tracking": "yes"},
        metrics=[{"name": "rps", "goal": "maximize", "weight": 60, "unit": "req/s"},
                 {"name": "latency_p99_ms", "goal": "minimize", "weight": 40, "unit": "ms"}],
        workload="Redis 7.0 (a private redis-server on loopback, AOF on, emptied before each configuration) under "
                 "`redis-benchmark -t set,get -n 50000 -c 20 -r 100000 -d 64` (servers/redis_bench.py: requests "
                 "per second over the SET+GET mix, and the worse of the two commands' 99th-percentile latencies), "
                 "after 20 000 SETs per start",
        description="redis.conf keys, every one restarting the server: appendfsync x hz x "
                    "auto-aof-rewrite-min-size x no-appendfsync-on-rewrite x latency-tracking, with AOF persistence "
                    "on; the default is Redis's stock configuration with appendonly yes and appendfsync always "
                    "(the start configuration of examples/redis: with stock Redis, AOF off, no configuration "
                    "measured better than the default beyond the noise). DURABILITY: appendfsync everysec can lose "
                    "the last ~1 s of acknowledged writes on a crash of the machine, no up to ~30 s. io-threads is "
                    "left out: 2 or 4 I/O threads cut the rates 30-100x on this 2-core machine (measured), and a run "
                    "then takes 15-40 s",
        prepare=[["rm", "-rf", "build/tables/redis/appendonlydir"]],
    ),
    "nginx": ServerTable(
        setup=lambda: _private_copy("nginx", {"nginx.conf": HERE / "servers/nginx.conf",
                                              "html/index.html": Path("/usr/share/nginx/html/index.html")},
                                    ("logs", "tmp")),
        space={
            "worker_processes": ["1", "2"],
            "keepalive_requests": ["10", "100", "1000"],
            "gzip": ["on", "off"],
            "gzip_comp_level": ["1", "5", "9"],
            "access_log": ["logs/access.log", "off"],
            "sendfile": ["on", "off"],
        },
        default={"worker_processes": "2", "keepalive_requests": "1000", "gzip": "on", "gzip_comp_level": "1",
                 "access_log": "logs/access.log", "sendfile": "on"},
        metrics=[{"name": "requests_per_s", "goal": "maximize", "weight": 60, "unit": "req/s"},
                 {"name": "latency_p99_ms", "goal": "minimize", "weight": 40, "unit": "ms"}],
        workload="nginx 1.22 (a private prefix on loopback) serving Debian's stock index page (615 bytes) to "
                 "`wrk -t 2 -c 50 -d 3s -H 'Accept-Encoding: gzip'` (examples/nginx/report.lua: requests per "
                 "second and wrk's 99th-percentile latency), after a 1 s wrk warm-up per start",
        description="nginx.conf directives, every one restarting nginx: worker_processes x keepalive_requests x "
                    "gzip x gzip_comp_level (inert with gzip off) x access_log x sendfile; the default is Debian's "
                    "stock nginx.conf (worker_processes auto = 2 on this 2-core machine, access log and gzip on, "
                    "sendfile on) with nginx's compiled-in defaults (gzip_comp_level 1, keepalive_requests 1000)",
        prepare=[["truncate", "-s", "0", "build/tables/nginx/logs/access.log"]],
    ),
}

EVERY = 20  # re-measure the default after this many configurations
ORDER_SEED = 24


def _plan(table: ServerTable) -> list[tuple[str, Config]]:
    """The measurement order: the grid shuffled, the default first, after every EVERY
    configurations and last."""
    configs = grid(table.space)
    random.Random(ORDER_SEED).shuffle(configs)
    plan: list[tuple[str, Config]] = [("default", dict(table.default))]
    for i, cfg in enumerate(configs, 1):
        plan.append(("grid", cfg))
        if i % EVERY == 0 or i == len(configs):
            plan.append(("default", dict(table.default)))
    return plan


def _hone_run(name: str, cfg: Config, table: ServerTable, state: Path) -> dict[str, float]:
    """One ``hone run`` of the server's spec under ``cfg``: the median of its timed runs per metric."""
    spec = HERE / "servers" / f"{name}.yaml"
    hone = Path(sys.executable).parent / "hone"
    # hone's own state directory: the knobs are private files under build/, so the machine-wide
    # lock of other hone processes on this machine must not block (or be blocked by) the table
    env = {**os.environ, "HONE_STATE_DIR": str(state), "HONE_MACHINE_DIR": str(state)}
    sets = [a for k, v in cfg.items() for a in ("--set", f"{k}={v}")]
    with tempfile.TemporaryDirectory(prefix="hone-table-") as tmp:
        out = Path(tmp) / "run.json"
        for attempt in range(3):
            for argv in table.prepare:
                run_process(argv, timeout=120, cwd=REPO, check=True)
            res = run_process([str(hone), "run", str(spec), *sets, "--json", str(out)], timeout=600, env=env,
                              cwd=REPO)
            if res.ok and out.exists():
                runs = [r for r in json.loads(out.read_text())["runs"] if r.get("returncode", 0) == 0]
                if len(runs) >= 3:
                    return {m["name"]: statistics.median(r["metrics"][m["name"]] for r in runs) for m in table.metrics}
            print(f"  attempt {attempt + 1} failed: {res.describe_failure()}", file=sys.stderr)
            time.sleep(10)
    raise SystemExit(f"{name}: hone run failed 3 times for {cfg}")


def measure_server(name: str, fresh: bool = False) -> None:
    table = SERVERS[name]
    build = REPO / "build" / "tables"
    state = build / "state"
    state.mkdir(parents=True, exist_ok=True)
    log = build / f"{name}.jsonl"
    key = hashlib.sha256(json.dumps([table.space, table.default, table.metrics, EVERY, ORDER_SEED],
                                    sort_keys=True).encode()).hexdigest()[:12]
    done: list[dict[str, Any]] = []
    if log.exists() and not fresh:
        lines = [json.loads(line) for line in log.read_text().splitlines() if line]
        if lines and lines[0].get("key") == key:
            done = lines[1:]
        else:
            log.rename(log.with_suffix(f".{int(time.time())}.jsonl"))
    if not done:
        log.write_text(json.dumps({"key": key, "started": time.time()}) + "\n")
    table.setup()
    plan = _plan(table)
    with log.open("a") as fh:
        for i, (kind, cfg) in enumerate(plan[len(done):], len(done)):
            t0 = time.time()
            load = os.getloadavg()[0]  # other work on the machine: what the drift follows
            metrics = _hone_run(name, cfg, table, state)
            rec = {"i": i, "kind": kind, "config": cfg, "metrics": metrics, "t": t0, "s": time.time() - t0,
                   "load": load}
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            done.append(rec)
            print(f"{name} {i + 1}/{len(plan)} {kind} {cfg} {metrics} ({rec['s']:.0f} s)", flush=True)
    _write_server_table(name, table, done, json.loads(log.read_text().splitlines()[0])["started"])
    # every measurement with its time, kept beside the table (the default's drift, the order)
    (DATA / "measured").mkdir(exist_ok=True)
    (DATA / "measured" / f"{name}.jsonl").write_text(log.read_text())


def _write_server_table(name: str, table: ServerTable, done: list[dict[str, Any]], started: float) -> None:
    names = [m["name"] for m in table.metrics]
    defaults = [r["metrics"] for r in done if r["kind"] == "default"]
    values = {json.dumps(r["config"], sort_keys=True): r["metrics"] for r in done if r["kind"] == "grid"}
    base = {m: statistics.median(d[m] for d in defaults) for m in names}
    values[json.dumps(table.default, sort_keys=True)] = base
    with (DATA / f"{name}.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow([*table.space, *names])
        for cfg in grid(table.space):
            v = values[json.dumps(cfg, sort_keys=True)]
            w.writerow([*cfg.values(), *(f"{v[m]:.4g}" for m in names)])
    hours = (done[-1]["t"] + done[-1]["s"] - started) / 3600
    drift = "; ".join(
        f"{m} median {base[m]:.4g}, from {min(d[m] for d in defaults):.4g} to {max(d[m] for d in defaults):.4g} "
        f"({(min(d[m] for d in defaults) / base[m] - 1) * 100:+.0f} % … "
        f"{(max(d[m] for d in defaults) / base[m] - 1) * 100:+.0f} %; first {defaults[0][m]:.4g}, "
        f"last {defaults[-1][m]:.4g})" for m in names)
    grid_rows = len(grid(table.space))
    loads = [r["load"] for r in done if "load" in r]
    if loads:
        drift += f"; the machine's 1-minute load average went from {min(loads):.1f} to {max(loads):.1f}"
    write_meta(name, {
        "source": f"{table.workload}, measured on this VM (2 cores, shared with other work) through `hone run "
                  f"benchmarks/tuning/servers/{name}.yaml --set …` (measure_tables.py {name}): the server restarted "
                  f"for every configuration, warmed up, one untimed run, then 3 timed runs, median per metric; "
                  f"{grid_rows} configurations in a random order (seed {ORDER_SEED}) in {hours:.1f} h. The default "
                  f"was measured {len(defaults)} times (first, after every {EVERY} configurations, last), its row "
                  f"is their median; drift of the default over the session: {drift}",
        "description": table.description,
        "metrics": table.metrics,
        "default": table.default,
    })
    print(f"{name}: {grid_rows} rows in {hours:.2f} h; default drift: {drift}")


# --------------------------------------------------------------------------- main

TABLES: dict[str, Callable[[bool], None]] = {
    "sqlite": lambda fresh: measure_sqlite(DATA / "sqlite.csv"),
    "zlib": lambda fresh: measure_zlib(DATA / "zlib.csv"),
    **{n: (lambda fresh, n=n: measure_sklearn(n)) for n in SKLEARN},
    **{n: (lambda fresh, n=n: measure_server(n, fresh)) for n in SERVERS},
}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", choices=list(TABLES), metavar="NAME",
                        help=f"one or more of: {', '.join(TABLES)}")
    parser.add_argument("--fresh", action="store_true",
                        help="server tables: start over, ignoring build/tables/NAME.jsonl")
    args = parser.parse_args()
    for table_name in args.tables:
        TABLES[table_name](args.fresh)
