"""Pretend hosts for the tests: one real sshd per loopback address (127.0.0.1, .2, .3 …),
root login with a key of the test's own, each setting ``HONE_TEST_HOST`` for its sessions."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hone.knobs.remote import ssh_argv
from tests.net import free_port

SSHD = "/usr/sbin/sshd"


@dataclass
class SshHosts:
    dir: Path
    hosts: list[str]  # root@127.0.0.1:PORT, root@127.0.0.2:PORT …
    names: list[str]  # what HONE_TEST_HOST is on each: a, b, c …
    options: list[str]

    def state(self, name: str) -> Path:
        return self.dir / f"state-{name}"

    def address(self, i: int) -> str:
        return f"127.0.0.{i + 1}"


def available() -> str | None:
    """Why sshd hosts cannot run here, or None."""
    if not os.path.exists(SSHD) or shutil.which("ssh") is None:
        return "openssh-server not installed (Debian openssh-server; `make setup` installs it)"
    if os.geteuid() != 0:
        return "sshd with a root login needs root"
    return None


@contextmanager
def sshd_hosts(top: Path, count: int = 2) -> Iterator[SshHosts]:
    """``count`` sshd on 127.0.0.1 … 127.0.0.N, stopped (with their sessions) afterwards."""
    for key in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(top / key)], check=True, timeout=30)
    shutil.copy(top / "client.pub", top / "authorized_keys")
    Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege-separation directory
    procs, hosts, known, names = [], [], [], []
    host_pub = " ".join((top / "host.pub").read_text().split()[:2])
    for i in range(count):
        name, addr = chr(ord("a") + i), f"127.0.0.{i + 1}"
        port = free_port(addr)
        cfg = top / f"sshd-{name}.conf"
        cfg.write_text("\n".join([
            f"Port {port}", f"ListenAddress {addr}", f"HostKey {top / 'host'}",
            f"AuthorizedKeysFile {top / 'authorized_keys'}", "PermitRootLogin prohibit-password",
            "PasswordAuthentication no", "KbdInteractiveAuthentication no", "UsePAM no", "StrictModes no",
            f"PidFile {top / f'sshd-{name}.pid'}", f"SetEnv HONE_TEST_HOST={name}", ""]))
        with (top / f"sshd-{name}.log").open("wb") as log:
            procs.append(subprocess.Popen([SSHD, "-D", "-e", "-f", str(cfg)], stderr=log, start_new_session=True))
        hosts.append(f"root@{addr}:{port}")
        names.append(name)
        known.append(f"[{addr}]:{port} {host_pub}")
    (top / "known_hosts").write_text("\n".join(known) + "\n")
    options = [f"IdentityFile={top / 'client'}", f"UserKnownHostsFile={top / 'known_hosts'}",
               "StrictHostKeyChecking=yes"]
    try:
        for host in hosts:
            deadline = time.monotonic() + 20
            while subprocess.run(ssh_argv(host, options, ["true"]), capture_output=True, timeout=20).returncode:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"sshd for {host} did not come up")
                time.sleep(0.2)
        yield SshHosts(top, hosts, names, options)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)  # sshd and its session children
            p.wait(timeout=10)
