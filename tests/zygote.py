"""A process that imports hone's heavy third-party libraries once and forks a fresh process per
``hone`` command the tests run (the ``hone`` fixture in conftest.py).

Why: a `hone tune` spends ~2.5 s of CPU importing scipy.stats, scikit-learn, Optuna and
SQLAlchemy before its first trial, and the suite runs hundreds of hone commands on two cores.
Each command still runs in a process of its own, with its own argv, environment, working
directory and stdio, and through hone's own entry point; hone's modules are imported in that
process, never here, as some read the environment when imported.

Protocol on a Unix socket: the client sends one byte with three file descriptors (stdin,
stdout, stderr), then a 4-byte length and the JSON request {argv, env, cwd}. A waiter forked
for the request forks the command, answers "<pid>\\n", waits for it and answers
"<returncode>\\n" (negative: killed by that signal, as subprocess reports it).

Run as ``python tests/zygote.py NAME HONE_BIN`` (NAME: an abstract socket's name); it exits
when its stdin closes (the test process's end).
"""

from __future__ import annotations

import gc
import json
import os
import select
import signal
import socket
import struct
import sys

# What the hone commands the tests run import (measured with -X importtime); hone's modules excluded.
PRELOAD = (
    "numpy", "scipy.stats", "scipy.optimize", "sklearn.gaussian_process", "sklearn.gaussian_process.kernels",
    "sklearn.ensemble", "optuna", "optuna.importance", "optuna.storages", "optuna.visualization",
    "sqlalchemy.orm", "sqlalchemy.dialects.sqlite", "alembic", "alembic.op", "alembic.context", "plotly.io",
    "plotly.graph_objects", "plotly.offline", "pydantic", "yaml", "click", "rich.console", "rich.table",
    "rich.progress", "elftools.elf.elffile", "psutil",
)


def _recv_exact(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("the client went away")
        data += chunk
    return data


def _run_command(argv: list[str], env: dict[str, str], cwd: str, hone_bin: str) -> None:
    """In the forked command process: become ``hone argv`` and exit as the interpreter would."""
    code: int | str | None = 1
    try:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [hone_bin, *argv]
        sys.path.insert(0, os.path.dirname(hone_bin))  # as for the console script
        from hone.cli import entry

        entry()
        code = 0
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # printed as the interpreter prints an uncaught exception
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit
        import threading

        threading._shutdown()  # type: ignore[attr-defined]  # non-daemon threads, as at exit
        atexit._run_exitfuncs()
        if isinstance(code, str):
            print(code, file=sys.stderr)
            code = 1
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code if isinstance(code, int) else 0)


def _serve(conn: socket.socket, hone_bin: str) -> None:
    """In the waiter: read the request, fork the command, report its pid and its end."""
    _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    (size,) = struct.unpack("!I", _recv_exact(conn, 4))
    req = json.loads(_recv_exact(conn, size))
    pid = os.fork()
    if pid == 0:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _run_command(req["argv"], req["env"], req["cwd"], hone_bin)
    for fd in fds:
        os.close(fd)
    conn.sendall(f"{pid}\n".encode())
    _, status = os.waitpid(pid, 0)
    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())


def main() -> None:
    path, hone_bin = "\0" + sys.argv[1], sys.argv[2]  # Linux's abstract namespace: no file, no length limit of a path
    del sys.path[0]  # tests/ must not shadow a module of the same name
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # an extra not installed: the command imports what it has
    # The preloaded objects go to a generation the collector never scans: a forked command's
    # collections would otherwise touch (and copy) every shared page, ~170 MB of them.
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            return
        if listener in ready:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                try:
                    _serve(conn, hone_bin)
                finally:
                    os._exit(0)
            conn.close()


if __name__ == "__main__":
    main()
