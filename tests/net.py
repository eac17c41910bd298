"""Loopback ports for the servers the tests start."""

from __future__ import annotations

import random
import socket
from pathlib import Path


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(addr: str = "127.0.0.1") -> int:
    """A TCP port nothing uses at ``addr`` right now, below the kernel's ephemeral range: a
    port from that range can become some client's source port before the server binds it."""
    high = _ephemeral_low() - 1
    rng = random.SystemRandom()
    for _ in range(200):
        port = rng.randint(min(10000, high), high)
        with socket.socket() as s:
            try:
                s.bind((addr, port))
            except OSError:
                continue
            return port
    with socket.socket() as s:
        s.bind((addr, 0))
        return int(s.getsockname()[1])


def listening(port: int, addr: str = "127.0.0.1") -> bool:
    """Whether something accepts connections on ``addr:port``."""
    try:
        with socket.create_connection((addr, port), timeout=0.3):
            return True
    except OSError:
        return False
