"""`make bench-analyse`: real workloads hone did not write, each classified by `hone analyse`, as a
confusion table (expected class, what hone said, the evidence).

Servers run on loopback in a private directory and are stopped at the end: PostgreSQL under
pgbench (TPC-B-like, TCP), PostgreSQL under an analytic query loop, Redis under
redis-benchmark, nginx under wrk (a 4 KiB page; and a 32 MiB file for bulk transfer); they
are observed with ``--pid`` while their load runs, as A-Tune's ``analysis`` watches a running
server. Commands are observed from start to end: gzip, xz and zstd compressing a file, dd and
cat reading a file whose page cache was dropped first (``dd iflag=nocache count=0``: that file
only), fio (or, without fio, a Python pread loop) reading it at random with O_DIRECT.

    python benchmarks/workload_classes.py [--only NAME …] [--duration S] [--out DIR]

Root is needed (PostgreSQL runs as the postgres user). Prints the table; the JSON of every
analysis goes to --out. Results of a run: benchmarks/workload_classes.md.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The load runs this much longer than the observation (hone's start-up on a loaded machine takes
# seconds) and is stopped when the observation ends.
LOAD_SLACK_S = 120
HONE = [str(Path(sys.executable).parent / "hone")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listens on {port} after {timeout} s")


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 30) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def spawn(argv: list[str], **kw: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            **kw)  # type: ignore[call-overload]


# hone's state for this run only (made in main): `--mount-tracefs` is journaled there, rolled back at the end
STATE = Path()


def analyse(args: list[str], out: Path, timeout: float) -> dict[str, object]:
    res = subprocess.run([*HONE, "analyse", "--mount-tracefs", "--json", str(out), *args], capture_output=True,
                         text=True, timeout=timeout, env={**os.environ, "HONE_STATE_DIR": str(STATE)})
    if res.returncode != 0:
        raise RuntimeError(f"hone analyse {' '.join(args)} exited with {res.returncode}: "
                           f"{' | '.join(res.stderr.strip().splitlines()[-3:])[-400:]}")
    return json.loads(out.read_text())


@dataclass
class Case:
    name: str
    expected: str
    what: str
    run: Callable[[Path, Path, float], dict[str, object]]  # (work dir, json out, duration) → document
    also: tuple[str, ...] = ()  # other classes that are true of it (latency-sensitive for a server)


# ---------------------------------------------------------------- servers


@contextlib.contextmanager
def postgres(work: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, str]]:
    bindir = Path(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))[-1]).parent
    pg = pwd.getpwnam("postgres")
    data = work / "pgdata"
    work.chmod(0o755)
    data.mkdir()
    os.chown(data, pg.pw_uid, pg.pw_gid)

    def as_pg() -> None:
        os.setgid(pg.pw_gid)
        os.setuid(pg.pw_uid)

    subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"], check=True,
                   capture_output=True, preexec_fn=as_pg, timeout=120)
    port = free_port()
    proc = spawn([str(bindir / "postgres"), "-D", str(data), "-p", str(port), "-c", "listen_addresses=127.0.0.1",
                  "-c", "unix_socket_directories="], preexec_fn=as_pg)
    try:
        wait_port(port)
        for _ in range(100):
            if subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", str(port)], capture_output=True,
                              timeout=10).returncode == 0:
                break
            time.sleep(0.2)
        yield proc, port, str(bindir)
    finally:
        stop(proc, signal.SIGINT, 60)


def pg_oltp(work: Path, out: Path, duration: float) -> dict[str, object]:
    with postgres(work) as (proc, port, _):
        base = ["pgbench", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
        subprocess.run([*base, "-i", "-s", "5", "postgres"], check=True, capture_output=True, timeout=300)
        load = spawn([*base, "-c", "8", "-j", "2", "-T", str(int(duration + LOAD_SLACK_S)), "postgres"])
        try:
            time.sleep(3)
            return analyse(["--pid", str(proc.pid), "--duration", str(duration)], out, duration + 120)
        finally:
            stop(load)


def pg_analytics(work: Path, out: Path, duration: float) -> dict[str, object]:
    with postgres(work) as (proc, port, _):
        base = ["pgbench", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
        subprocess.run([*base, "-i", "-s", "20", "postgres"], check=True, capture_output=True, timeout=600)
        query = work / "q.sql"
        query.write_text("SELECT bid, count(*), sum(abalance), avg(length(filler)) FROM pgbench_accounts "
                         "GROUP BY bid;\n")
        load = spawn([*base, "-n", "-c", "1", "-T", str(int(duration + LOAD_SLACK_S)), "-f", str(query), "postgres"])
        try:
            time.sleep(3)
            return analyse(["--pid", str(proc.pid), "--duration", str(duration)], out, duration + 120)
        finally:
            stop(load)


def redis(work: Path, out: Path, duration: float) -> dict[str, object]:
    port = free_port()
    server = spawn(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--dir", str(work)])
    try:
        wait_port(port)
        load = spawn(["timeout", str(int(duration + LOAD_SLACK_S)), "redis-benchmark", "-p", str(port), "-c", "50",
                      "-n", "100000000", "-t", "set,get", "-q"])
        try:
            time.sleep(3)
            return analyse(["--pid", str(server.pid), "--duration", str(duration)], out, duration + 120)
        finally:
            stop(load)
    finally:
        stop(server)


NGINX_CONF = """worker_processes 2;
pid {dir}/nginx.pid;
error_log stderr;
events {{ worker_connections 1024; }}
http {{
    default_type text/html;
    access_log off;
    client_body_temp_path {dir}/tmp; proxy_temp_path {dir}/tmp; fastcgi_temp_path {dir}/tmp;
    uwsgi_temp_path {dir}/tmp; scgi_temp_path {dir}/tmp;
    sendfile on;
    server {{ listen 127.0.0.1:{port}; root {dir}/html; }}
}}
"""


@contextlib.contextmanager
def nginx(work: Path) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    port = free_port()
    (work / "html").mkdir()
    (work / "tmp").mkdir()
    (work / "html" / "index.html").write_text("x" * 4096)
    with open(work / "html" / "big.bin", "wb") as f:
        f.write(os.urandom(32 << 20))
    conf = work / "nginx.conf"
    conf.write_text(NGINX_CONF.format(dir=work, port=port))
    server = spawn(["nginx", "-c", str(conf), "-p", str(work), "-g", "daemon off;"])
    try:
        wait_port(port)
        yield server, port
    finally:
        stop(server, signal.SIGQUIT)


def nginx_small(work: Path, out: Path, duration: float) -> dict[str, object]:
    with nginx(work) as (server, port):
        load = spawn(["wrk", "-t", "2", "-c", "32", "-d", f"{int(duration + LOAD_SLACK_S)}s", f"http://127.0.0.1:{port}/"])
        try:
            time.sleep(3)
            return analyse(["--pid", str(server.pid), "--duration", str(duration)], out, duration + 120)
        finally:
            stop(load)


def nginx_bulk(work: Path, out: Path, duration: float) -> dict[str, object]:
    with nginx(work) as (server, port):
        load = spawn(["wrk", "-t", "1", "-c", "2", "-d", f"{int(duration + LOAD_SLACK_S)}s",
                      f"http://127.0.0.1:{port}/big.bin"])
        try:
            time.sleep(3)
            return analyse(["--pid", str(server.pid), "--duration", str(duration)], out, duration + 120)
        finally:
            stop(load)


# ---------------------------------------------------------------- commands


def text_file(path: Path, mib: int) -> Path:
    """Compressible text (words and numbers in shuffled lines), made once."""
    if not path.exists() or path.stat().st_size < mib << 20:
        import random

        rnd = random.Random(1)
        vocab = [f"w{i}x{i * 7 % 113}" for i in range(5000)]
        lines = [" ".join(rnd.choice(vocab) for _ in range(12)) + f" {rnd.random()}\n" for _ in range(20000)]
        with open(path, "w") as f:
            while f.tell() < mib << 20:
                rnd.shuffle(lines)
                f.write("".join(lines))
    return path


def cold_file(work: Path, mib: int = 1024) -> Path:
    """A file of ``mib`` MiB whose page cache is dropped (that file's only) just before use."""
    path = work / "cold.bin"
    if not path.exists():
        subprocess.run(["dd", "if=/dev/urandom", f"of={path}", "bs=1M", f"count={mib}", "status=none"], check=True,
                       timeout=600)
        subprocess.run(["sync"], timeout=120)
    subprocess.run(["dd", f"if={path}", "iflag=nocache", "count=0", "status=none"], check=True, timeout=60)
    return path


def compressor(argv: list[str], mib: int) -> Callable[[Path, Path, float], dict[str, object]]:
    def run(work: Path, out: Path, duration: float) -> dict[str, object]:
        data = text_file(work.parent / f"text-{mib}.txt", mib)
        return analyse(["--", *argv, str(data)], out, 600)
    return run


def seq_reader(argv: list[str]) -> Callable[[Path, Path, float], dict[str, object]]:
    def run(work: Path, out: Path, duration: float) -> dict[str, object]:
        path = cold_file(work.parent)
        return analyse(["--", *[a.replace("{file}", str(path)) for a in argv]], out, 600)
    return run


RANDOM_READER = """import os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
size = os.fstat(fd).st_size // 4096
buf = bytearray(4096)
import mmap
m = mmap.mmap(-1, 4096)
end = time.monotonic() + float(sys.argv[2])
rnd = random.Random(1)
while time.monotonic() < end:
    os.preadv(fd, [m], rnd.randrange(size) * 4096)
"""


def random_reader(work: Path, out: Path, duration: float) -> dict[str, object]:
    path = cold_file(work.parent)
    if shutil.which("fio"):
        argv = ["fio", "--name=rand", f"--filename={path}", "--rw=randread", "--bs=4k", "--direct=1",
                "--ioengine=psync", f"--runtime={int(duration)}", "--time_based", "--readonly"]
    else:
        script = work / "randread.py"
        script.write_text(RANDOM_READER)
        argv = [sys.executable, str(script), str(path), str(duration)]
    return analyse(["--", *argv], out, 600)


CASES = [
    Case("postgresql-pgbench", "database-oltp", "PostgreSQL 15, pgbench TPC-B-like, 8 clients over TCP", pg_oltp,
         ("latency-sensitive", "io-random")),
    Case("postgresql-analytics", "database-analytics", "PostgreSQL 15, one client looping a GROUP BY over 2M rows",
         pg_analytics, ("cpu-bound-compute",)),
    Case("redis-benchmark", "kv-cache", "Redis 7, redis-benchmark SET/GET, 50 clients", redis, ("latency-sensitive",)),
    Case("nginx-wrk", "web-server", "nginx, 2 workers, wrk 32 connections on a 4 KiB page", nginx_small,
         ("latency-sensitive",)),
    Case("nginx-bulk", "network-throughput", "nginx, wrk 2 connections fetching a 32 MiB file", nginx_bulk,
         ("web-server",)),
    Case("gzip", "cpu-bound-compute", "gzip -6 of 100 MiB of text", compressor(["gzip", "-6", "-c"], 100)),
    Case("xz", "cpu-bound-compute", "xz -T1 -3 of 40 MiB of text", compressor(["xz", "-T1", "-3", "-c"], 40)),
    Case("zstd", "cpu-bound-compute", "zstd -15 of 20 MiB of text", compressor(["zstd", "-15", "-c"], 20)),
    Case("dd-cold", "io-sequential", "dd bs=1M of a 1 GiB file, its cache dropped",
         seq_reader(["dd", "if={file}", "of=/dev/null", "bs=1M"])),
    Case("cat-cold", "io-sequential", "cat of a 1 GiB file, its cache dropped", seq_reader(["cat", "{file}"])),
    Case("fio-randread", "io-random", "fio 4 KiB random reads, O_DIRECT (or a Python pread loop)", random_reader),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=[], help="run only this case (repeatable)")
    ap.add_argument("--duration", type=float, default=10.0, help="seconds each server is observed")
    ap.add_argument("--out", type=Path, default=REPO / "build" / "bench-analyse")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    global STATE
    STATE = Path(tempfile.mkdtemp(prefix="hone-bench-analyse-state-"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="hone-bench-analyse-") as tmp:
        Path(tmp).chmod(0o755)  # servers' workers run as other users (nginx: nobody, postgres)
        for case in CASES:
            if args.only and case.name not in args.only:
                continue
            work = Path(tmp) / case.name
            work.mkdir()
            print(f"== {case.name}: {case.what}", file=sys.stderr, flush=True)
            try:
                doc = case.run(work, args.out / f"{case.name}.json", args.duration)
            except Exception as exc:
                rows.append((case, None, str(exc)))
                print(f"   failed: {exc}", file=sys.stderr)
                continue
            rows.append((case, doc, ""))
            print(f"   → {doc['summary']}", file=sys.stderr, flush=True)
    subprocess.run([*HONE, "rollback"], env={**os.environ, "HONE_STATE_DIR": str(STATE)}, timeout=120,
                   capture_output=True)
    shutil.rmtree(STATE, ignore_errors=True)
    print(table(rows))
    return 0


def table(rows: list[tuple[Case, dict[str, object] | None, str]]) -> str:
    """The confusion table: what each workload is, what hone named (or could not tell apart),
    whether the class expected was named, and any class named that is not true of it."""
    lines = ["| workload | expected | hone analyse says | right | wrong claims | evidence for the expected class |",
             "|---|---|---|---|---|---|"]
    right = wrong = 0
    for case, doc, error in rows:
        if doc is None:
            lines.append(f"| {case.name} | {case.expected} | failed: {error[:80]} | – | | |")
            continue
        decided = list(doc["decided"])  # type: ignore[call-overload]
        ok = case.expected in decided
        claims = [c for c in decided if c != case.expected and c not in case.also]
        right += ok
        wrong += bool(claims)
        by_name = {c["name"]: c for c in doc["classes"]}  # type: ignore[union-attr, index]
        shown = by_name[case.expected]
        evidence = "; ".join(e.split(" (")[0] for e in shown["evidence"]) or "; ".join(
            shown["against"] + shown["unknown"])
        lines.append(f"| {case.name} | {case.expected} | {doc['summary']} | {'yes' if ok else 'no'} | "
                     f"{', '.join(claims)} | {evidence} |")
    lines.append("")
    lines.append(f"{right} of {len(rows)} named as expected; {wrong} with a class named that is not true of it.")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
