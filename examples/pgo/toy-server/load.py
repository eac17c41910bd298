"""The load generator of examples/pgo/toy-server: REQUESTS requests over CONNS connections
(one after the other) to 127.0.0.1:PORT; prints ``tps: N`` and ``p95_ms: X``.

    python3 load.py PORT REQUESTS [CONNS]
    python3 load.py PORT exit      # asks the server to die at once (a test of hone's handling)

Standard library only. Exits 1 when the server does not answer every request.
"""

from __future__ import annotations

import socket
import sys
import time


def main() -> int:
    if sys.argv[2:3] == ["exit"]:  # tests: the server dies under load
        with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30) as sock:
            sock.sendall(b"exit\n")
            sock.recv(1)
        return 0
    port, requests = int(sys.argv[1]), int(sys.argv[2])
    conns = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    latencies: list[float] = []
    started = time.perf_counter()
    for c in range(conns):
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader = sock.makefile("rb")
            for i in range(requests // conns):
                t0 = time.perf_counter()
                sock.sendall(f"{c * 1000003 + i}\n".encode())
                if len(reader.readline()) != 17:
                    print(f"request {i} on connection {c}: no answer", file=sys.stderr)
                    return 1
                latencies.append(time.perf_counter() - t0)
    elapsed = time.perf_counter() - started
    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    print(f"requests: {len(latencies)}")
    print(f"tps: {len(latencies) / elapsed:.1f}")
    print(f"p95_ms: {p95 * 1000:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
