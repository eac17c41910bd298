"""A real, throwaway PostgreSQL cluster (the ``pg`` fixture of tests/conftest.py) for the tests of
study storage, fleet workers and the dashboard.

``initdb`` as the ``postgres`` user in a temp dir, password (scram) auth on a free loopback
port, stopped and removed at the end of the session. Debian's ``postgresql`` package is in
deps/apt-packages.txt, so `make test` has it.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.net import free_port

PG_USER = "hone"
PG_PASSWORD = "s3cret-Pw"


@dataclass
class PgCluster:
    """One running cluster: ``url(db)`` gives a SQLAlchemy URL with the password in it."""

    bindir: Path
    datadir: Path
    port: int
    proc: subprocess.Popen[bytes]

    def url(self, db: str = "postgres", password: str | None = PG_PASSWORD) -> str:
        cred = f"{PG_USER}:{password}" if password is not None else PG_USER
        return f"postgresql://{cred}@127.0.0.1:{self.port}/{db}"

    def psql(self, sql: str, db: str = "postgres") -> str:
        res = subprocess.run(
            [str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", PG_USER,
             "-d", db, "-v", "ON_ERROR_STOP=1", "-At", "-c", sql],
            capture_output=True, text=True, timeout=30, env={**os.environ, "PGPASSWORD": PG_PASSWORD},
        )
        assert res.returncode == 0, res.stderr
        return res.stdout

    def createdb(self, name: str) -> str:
        """A fresh database (dropped first if it exists); returns its URL."""
        self.psql(f'DROP DATABASE IF EXISTS "{name}"')
        self.psql(f'CREATE DATABASE "{name}"')
        return self.url(name)


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


@contextlib.contextmanager
def start_cluster() -> Iterator[PgCluster]:
    """Start a throwaway cluster (needs root: initdb runs as ``postgres``); stop and delete
    it on exit. Raises RuntimeError when PostgreSQL is missing or does not start."""
    bindir = _bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL server not installed (Debian package postgresql; `make setup` installs it)")
    pw = pwd.getpwnam("postgres")
    top = Path(tempfile.mkdtemp(prefix="hone-pg-"))
    os.chown(top, pw.pw_uid, pw.pw_gid)
    datadir = top / "data"
    pwfile = top / "pw"
    pwfile.write_text(PG_PASSWORD + "\n")
    os.chown(pwfile, pw.pw_uid, pw.pw_gid)
    run_as = ["runuser", "-u", "postgres", "--"]
    subprocess.run([*run_as, str(bindir / "initdb"), "-D", str(datadir), "-U", PG_USER, "-A", "scram-sha-256",
                    f"--pwfile={pwfile}", "--no-sync", "-E", "UTF8"],
                   check=True, capture_output=True, timeout=120)
    port = free_port()
    log = open(top / "log", "wb")  # noqa: SIM115 — held open for the server's lifetime
    proc = subprocess.Popen(
        [*run_as, str(bindir / "postgres"), "-D", str(datadir), "-p", str(port), "-k", str(top),
         "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200",
         "-c", "shared_buffers=32MB"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    cluster = PgCluster(bindir, datadir, port, proc)
    try:
        deadline = time.monotonic() + 60
        while True:
            ready = subprocess.run([str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                                   capture_output=True, timeout=10)
            if ready.returncode == 0:
                break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not start: {(top / 'log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield cluster
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGINT)  # fast shutdown
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()
        shutil.rmtree(top, ignore_errors=True)
