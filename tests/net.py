"""Loopback ports for the servers the tests start."""

from __future__ import annotations

import socket


def free_port(addr: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at ``addr`` right now."""
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
