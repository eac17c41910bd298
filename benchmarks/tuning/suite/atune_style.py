"""A-Tune-style tuning problems written for this suite (the ``atune-style`` family).

What users bring to A-Tune (``atune-adm tuning``): 6–12 knobs of a server and the kernel, ints
over wide log-scale ranges, a few categoricals, a weighted objective over a throughput and a
latency (A-Tune's client YAML ``evaluations`` with ``weight``), and configurations that fall off
a cliff — a memory budget overrun that swaps, thread oversubscription — where latency grows by
two orders of magnitude. Each model below is a smooth made-up response with exactly those
features; none is fitted to a real server. The optimum is found by :func:`search_optimum`
(optima.py stores it in data/optima.json).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from typing import Any

from problems import DATA, Config, Knob, Metric, Problem


def _bump(x: float, centre: float, width: float) -> float:
    """A log-parabola hill: 1 at ``centre``, falling with (log x − log centre)²/width²."""
    return math.exp(-((math.log(x) - math.log(centre)) ** 2) / (2 * width**2))


def _sat(x: float, half: float) -> float:
    """Saturating gain in [0, 1): x / (x + half)."""
    return x / (x + half)


# ------------------------------------------------------------------ a Kafka broker, 12 knobs

KAFKA = [
    Knob("num_network_threads", "int", low=1, high=128, log=True),
    Knob("num_io_threads", "int", low=1, high=128, log=True),
    Knob("socket_send_buffer_kb", "int", low=16, high=16384, log=True),
    Knob("socket_receive_buffer_kb", "int", low=16, high=16384, log=True),
    Knob("batch_size_kb", "int", low=1, high=2048, log=True),
    Knob("linger_ms", "int", low=0, high=200),
    Knob("compression", "categorical", values=("none", "gzip", "snappy", "lz4", "zstd")),
    Knob("acks", "categorical", values=("0", "1", "all")),
    Knob("log_retention_hours", "int", low=1, high=720),
    Knob("num_recovery_threads", "int", low=1, high=16),
    Knob("log_cleaner_threads", "int", low=1, high=8),
    Knob("queued_max_requests", "int", low=100, high=5000, log=True),
]
KAFKA_DEFAULT: Config = {
    "num_network_threads": 3, "num_io_threads": 8, "socket_send_buffer_kb": 100, "socket_receive_buffer_kb": 100,
    "batch_size_kb": 16, "linger_ms": 0, "compression": "none", "acks": "1", "log_retention_hours": 168,
    "num_recovery_threads": 1, "log_cleaner_threads": 1, "queued_max_requests": 500,
}


def kafka(c: Config) -> dict[str, float]:
    """Throughput (MB/s) and p99 latency (ms) of a broker; the last four knobs do nothing.

    Threads: a hill in each, network threads best near 8 and I/O threads near 16, and more than
    512 thread pairs oversubscribe the CPUs (latency × 100, throughput × 0.3). Send buffers help
    up to the top of their range (the optimum sits at the edge); receive buffers near 2 MiB.
    Batching pays only with some linger (an interaction); linger costs latency. Buffers per
    network thread beyond 256 MiB swap (latency × 50, throughput × 0.5)."""
    net, io = c["num_network_threads"], c["num_io_threads"]
    thr = 0.35 + 0.65 * _bump(net, 8, 1.0) * (0.4 + 0.6 * _bump(io, 16, 1.2))
    buf = (0.7 + 0.3 * math.log(c["socket_send_buffer_kb"] / 16) / math.log(1024)) \
        * (0.85 + 0.15 * _bump(c["socket_receive_buffer_kb"], 2048, 1.5))
    linger = c["linger_ms"]
    batch = 1.0 + 0.8 * math.log2(c["batch_size_kb"]) / 11 * min(1.0, linger / 25)
    comp = {"none": 1.0, "gzip": 0.78, "snappy": 1.12, "lz4": 1.22, "zstd": 1.08}[c["compression"]]
    acks = {"0": 1.12, "1": 1.0, "all": 0.82}[c["acks"]]
    tput = 150.0 * thr * buf * batch * comp * acks
    lat = 8.0 * (1 + linger / 40) * {"none": 1.0, "gzip": 1.35, "snappy": 1.05, "lz4": 1.02, "zstd": 1.15}[
        c["compression"]] * {"0": 0.8, "1": 1.0, "all": 1.6}[c["acks"]] / (0.5 + 0.5 * thr)
    if net * io > 512:
        tput, lat = tput * 0.3, lat * 100
    if (c["socket_send_buffer_kb"] + c["socket_receive_buffer_kb"]) * net > 256 * 1024:
        tput, lat = tput * 0.5, lat * 50
    return {"throughput": tput, "p99_ms": lat}


# ------------------------------------------------------------ dirty page writeback, 6 sysctls

DIRTY = [
    Knob("vm.dirty_ratio", "int", low=1, high=90),
    Knob("vm.dirty_background_ratio", "int", low=1, high=90),
    Knob("vm.dirty_expire_centisecs", "int", low=100, high=10000, log=True),
    Knob("vm.dirty_writeback_centisecs", "int", low=10, high=6000, log=True),
    Knob("vm.swappiness", "int", low=0, high=100),
    Knob("vm.vfs_cache_pressure", "int", low=1, high=1000, log=True),
]
DIRTY_DEFAULT: Config = {"vm.dirty_ratio": 20, "vm.dirty_background_ratio": 10, "vm.dirty_expire_centisecs": 3000,
                         "vm.dirty_writeback_centisecs": 500, "vm.swappiness": 60, "vm.vfs_cache_pressure": 100}


def dirty(c: Config) -> dict[str, float]:
    """Write throughput (MB/s) and p99 write latency (ms) of a write-heavy service.

    More dirty memory absorbs bursts (throughput saturates with dirty_ratio), but above ~45%
    a flush stalls writers for seconds (p99 × 60). A background ratio at or above the ratio is
    clamped by the kernel to half of it; the background threshold is best near a third of the
    ratio (an interaction). Expiry and writeback interval trade throughput for latency; swappiness
    barely matters, vfs_cache_pressure only slightly."""
    ratio = c["vm.dirty_ratio"]
    bg = c["vm.dirty_background_ratio"]
    if bg >= ratio:
        bg = max(1, ratio // 2)
    tput = 120.0 * (0.3 + 0.7 * _sat(ratio, 12)) * (0.75 + 0.25 * _bump(bg / ratio, 0.33, 0.5))
    tput *= 0.9 + 0.1 * _bump(c["vm.dirty_expire_centisecs"], 1500, 1.2)
    tput *= 0.92 + 0.08 * _bump(c["vm.dirty_writeback_centisecs"], 150, 1.5)
    tput *= 1.0 - 0.0003 * abs(c["vm.swappiness"] - 30)
    tput *= 0.97 + 0.03 * _bump(c["vm.vfs_cache_pressure"], 50, 1.5)
    lat = 12.0 * (1 + ratio / 60) * (1 + 0.3 * math.log10(c["vm.dirty_expire_centisecs"] / 100) / 2)
    lat *= 1.2 - 0.2 * _bump(c["vm.dirty_writeback_centisecs"], 100, 1.0)
    if ratio > 45:
        lat *= 60
    return {"write_mbps": tput, "p99_ms": lat}


# ------------------------------------------------------------------- a database, 11 knobs

DB = [
    Knob("shared_buffers_mb", "int", low=16, high=16384, log=True),
    Knob("work_mem_mb", "int", low=1, high=1024, log=True),
    Knob("max_connections", "int", low=10, high=1000, log=True),
    Knob("effective_io_concurrency", "int", low=1, high=512, log=True),
    Knob("wal_buffers_kb", "ordinal", values=(64, 256, 1024, 4096, 16384, 65536)),
    Knob("checkpoint_timeout_s", "int", low=30, high=3600, log=True),
    Knob("random_page_cost", "float", low=1.0, high=8.0),
    Knob("huge_pages", "categorical", values=("off", "try", "on")),
    Knob("wal_compression", "categorical", values=("off", "on")),
    Knob("autovacuum_naptime_s", "int", low=1, high=600, log=True),
    Knob("log_min_duration_ms", "int", low=0, high=10000),
]
DB_DEFAULT: Config = {"shared_buffers_mb": 128, "work_mem_mb": 4, "max_connections": 100,
                      "effective_io_concurrency": 1, "wal_buffers_kb": 1024, "checkpoint_timeout_s": 300,
                      "random_page_cost": 4.0, "huge_pages": "try", "wal_compression": "off",
                      "autovacuum_naptime_s": 60, "log_min_duration_ms": 0}


def db(c: Config) -> dict[str, float]:
    """TPS and p95 latency (ms) of an OLTP database on a 16 GiB machine.

    shared_buffers helps up to the memory budget, whose edge is a cliff: shared_buffers plus
    work_mem × 20% of max_connections beyond 12 GiB swaps (TPS × 0.05, latency × 100) — the best
    configuration sits just below it. Connections: a hill near 200; SSD-like storage likes a low
    random_page_cost and some I/O concurrency; huge pages help only with large buffers (an
    interaction); checkpoints want minutes; logging every statement (0 ms) costs 8%; the vacuum
    nap does nothing here."""
    sb, wm, conns = c["shared_buffers_mb"], c["work_mem_mb"], c["max_connections"]
    cache = 0.35 + 0.65 * _sat(sb, 1500)
    tps = 2000.0 * cache * (0.6 + 0.4 * _bump(wm, 24, 1.6)) * (0.55 + 0.45 * _bump(conns, 200, 1.0))
    tps *= 0.8 + 0.2 * _sat(c["effective_io_concurrency"], 8)
    tps *= 0.9 + 0.1 * _bump(c["wal_buffers_kb"], 16384, 1.5)
    tps *= 0.85 + 0.15 * _bump(c["checkpoint_timeout_s"], 900, 0.9)
    tps *= 1.0 - 0.03 * abs(c["random_page_cost"] - 1.3)
    tps *= {"off": 1.0, "try": 1.0, "on": 1.0 + 0.08 * _sat(sb, 4096)}[c["huge_pages"]]
    tps *= 0.97 if c["wal_compression"] == "on" else 1.0
    if c["log_min_duration_ms"] == 0:
        tps *= 0.92
    lat = 40.0 * (conns / 100) ** 0.35 / (cache * (0.6 + 0.4 * _bump(wm, 24, 1.6)))
    lat *= 1.1 - 0.1 * _bump(c["checkpoint_timeout_s"], 600, 1.0)
    if sb + wm * conns * 0.2 > 12 * 1024:
        tps, lat = tps * 0.05, lat * 100
    return {"tps": tps, "p95_ms": lat}


# --------------------------------------------------------------- a web server, 10 knobs

NGINX = [
    Knob("worker_processes", "int", low=1, high=64, log=True),
    Knob("worker_connections", "int", low=64, high=65536, log=True),
    Knob("keepalive_timeout_s", "int", low=0, high=300),
    Knob("keepalive_requests", "int", low=1, high=100000, log=True),
    Knob("sendfile", "categorical", values=("off", "on")),
    Knob("tcp_nopush", "categorical", values=("off", "on")),
    Knob("gzip_comp_level", "ordinal", values=(0, 1, 2, 3, 4, 5, 6, 7, 8, 9)),
    Knob("net.core.somaxconn", "int", low=128, high=65535, log=True),
    Knob("net.ipv4.tcp_fin_timeout", "int", low=5, high=120),
    Knob("open_file_cache_max", "int", low=0, high=100000),
]
NGINX_DEFAULT: Config = {"worker_processes": 1, "worker_connections": 512, "keepalive_timeout_s": 75,
                         "keepalive_requests": 100, "sendfile": "off", "tcp_nopush": "off", "gzip_comp_level": 6,
                         "net.core.somaxconn": 128, "net.ipv4.tcp_fin_timeout": 60, "open_file_cache_max": 0}


def nginx(c: Config) -> dict[str, float]:
    """Requests/s and p99 latency (ms) of a static-file server on 2 cores under 1000 clients.

    Workers: best at 2 (the cores), oversubscription costs a little and more than 16 much.
    Fewer than 1000 connections in all (workers × connections) or a listen backlog below the
    1000 clients refuse and retry (latency × 30). Keep-alive off (0) pays a handshake per request;
    many requests per connection help. tcp_nopush helps only with sendfile on (an interaction).
    gzip level: the responses are small, compression costs CPU and saves little (0 best). The fin
    timeout matters little; an open-file cache of a few thousand entries helps."""
    wp, wc = c["worker_processes"], c["worker_connections"]
    rps = 30000.0 * (0.45 + 0.55 * _bump(wp, 2, 0.6)) * (0.8 + 0.2 * _sat(wc, 2048))
    if wp > 16:
        rps *= 0.7
    ka = c["keepalive_timeout_s"]
    rps *= 0.55 if ka == 0 else 0.9 + 0.1 * _sat(ka, 10)
    rps *= 0.85 + 0.15 * _sat(c["keepalive_requests"], 1000)
    send = c["sendfile"] == "on"
    rps *= (1.12 if send else 1.0) * (1.06 if send and c["tcp_nopush"] == "on" else 1.0)
    rps *= 1.0 - 0.035 * c["gzip_comp_level"]
    rps *= 0.98 + 0.02 * _bump(c["net.ipv4.tcp_fin_timeout"], 20, 1.0)
    rps *= 0.93 + 0.07 * _sat(c["open_file_cache_max"], 2000)
    lat = 1000.0 / rps * 1000 * 1.5 * (2.5 if ka == 0 else 1.0)
    if wp * wc < 1000 or c["net.core.somaxconn"] < 1000:
        lat *= 30
        rps *= 0.6
    return {"rps": rps, "p99_ms": lat}


SPECS: dict[str, tuple[list[Knob], Config, Callable[[Config], dict[str, float]], list[Metric], str]] = {
    "atune-kafka": (KAFKA, KAFKA_DEFAULT, kafka,
                    [Metric("throughput", "maximize", 60, "MB/s"), Metric("p99_ms", "minimize", 40, "ms")],
                    "a Kafka broker: 12 knobs, 4 inert; an edge optimum; batch × linger; thread and memory cliffs"),
    "atune-dirty": (DIRTY, DIRTY_DEFAULT, dirty,
                    [Metric("write_mbps", "maximize", 70, "MB/s"), Metric("p99_ms", "minimize", 30, "ms")],
                    "dirty-page writeback sysctls: a flush-stall cliff, background × ratio"),
    "atune-db": (DB, DB_DEFAULT, db,
                 [Metric("tps", "maximize", 50), Metric("p95_ms", "minimize", 50, "ms")],
                 "an OLTP database: 11 knobs, 2 inert; the best just below a memory cliff"),
    "atune-nginx": (NGINX, NGINX_DEFAULT, nginx,
                    [Metric("rps", "maximize", 60, "req/s"), Metric("p99_ms", "minimize", 40, "ms")],
                    "a web server and its sysctls: backlog and connection cliffs, sendfile × tcp_nopush"),
}


def _levels(k: Knob) -> list[Any]:
    """The values :func:`search_optimum` tries for a knob (every integer of a short range)."""
    if k.kind in ("ordinal", "categorical"):
        return list(k.values)
    if k.kind == "float":
        return [k.low + (k.high - k.low) * i / 140 for i in range(141)]
    if k.high - k.low <= 400:
        return list(range(int(k.low), int(k.high) + 1))
    if k.log:
        pts = {round(math.exp(math.log(max(k.low, 1)) + (math.log(k.high) - math.log(max(k.low, 1))) * i / 400))
               for i in range(401)}
        return sorted({int(min(k.high, max(k.low, p))) for p in pts} | {int(k.low)})
    return sorted({round(k.low + (k.high - k.low) * i / 400) for i in range(401)})


def search_optimum(problem: Problem, starts: int = 30) -> Config:
    """The best configuration found by coordinate search over :func:`_levels` from every
    combination of the categoricals × ``starts`` seeded random starts, then every integer within
    ±64 of the best on each int knob."""
    import random

    rng = random.Random(0)
    cats = [k for k in problem.knobs if k.kind == "categorical"]
    best_cfg, best = dict(problem.default), problem.score(problem.measure(problem.default))

    def score(cfg: Config) -> float:
        return problem.score(problem.measure(cfg))

    def descend(cfg: Config, fixed: set[str]) -> tuple[Config, float]:
        cur = score(cfg)
        improved = True
        while improved:
            improved = False
            for k in problem.knobs:
                if k.name in fixed:
                    continue
                for v in _levels(k):
                    cand = cfg | {k.name: v}
                    s = score(cand)
                    if s > cur + 1e-12:
                        cfg, cur, improved = cand, s, True
        return cfg, cur

    for combo in itertools.product(*[k.values for k in cats]):
        for _ in range(starts):
            cfg = {k.name: k.uniform(rng) for k in problem.knobs} | dict(zip([k.name for k in cats], combo,
                                                                              strict=True))
            cfg, s = descend(cfg, {k.name for k in cats})
            if s > best:
                best_cfg, best = cfg, s
    for k in problem.knobs:  # integer polish around the best
        if k.kind == "int":
            lo, hi = max(int(k.low), best_cfg[k.name] - 64), min(int(k.high), best_cfg[k.name] + 64)
            for v in range(lo, hi + 1):
                s = score(best_cfg | {k.name: v})
                if s > best:
                    best_cfg, best = best_cfg | {k.name: v}, s
    return best_cfg


def make(name: str) -> Problem:
    knobs, default, fn, metrics, description = SPECS[name]
    known = json.loads((DATA / "optima.json").read_text()).get(name) if (DATA / "optima.json").exists() else None
    p = Problem(name=name, family="atune-style", source="written for this suite (A-Tune-style)", knobs=knobs,
                metrics=metrics, default=dict(default), measure=fn, optimum=dict(default), description=description)
    if known is not None:
        p.optimum = dict(known["config"])
    return p


PROBLEMS: dict[str, Callable[[], Problem]] = {name: (lambda name=name: make(name)) for name in SPECS}
