"""Loopback ports for servers that a test starts in another process (Sightline, PostgreSQL).

Such a server binds its port a second or so after the test chose it, so the port must stay free
meanwhile. A port the kernel hands out (bind to port 0) is no good for that: the kernel hands the
same range to every outgoing connection and to every other process asking for a free port, such as
a parallel test worker. So ports come from below the kernel's ephemeral range, from a slice of it
that belongs to this test worker alone (pytest-xdist names workers gw0, gw1, ...), starting at a
random place so that test runs of other checkouts on the same machine rarely meet. The worker goes
round its slice in order, so a port comes back only after all the others, and each port is checked
free before it is handed out.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

LOWEST = 10000
SLICES = 16  # at most this many workers get slices of their own; more share them
# Ports Chromium refuses to load pages from (net::ERR_UNSAFE_PORT; its list of restricted ports
# above LOWEST): a console test on such a port fails before it starts.
UNSAFE = frozenset({10080})


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _slice() -> range:
    """This worker's ports: a 16th of those between LOWEST and the ephemeral range."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    high = max(_ephemeral_low(), LOWEST + SLICES * 64)
    size = (high - LOWEST) // SLICES
    start = LOWEST + (index % SLICES) * size
    return range(start, start + size)


_ports = _slice()
_next = random.randrange(len(_ports))


def _is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback port that is free now and that no other worker of this run will hand out."""
    global _next
    for _ in range(len(_ports)):
        port = _ports[_next % len(_ports)]
        _next += 1
        if port not in UNSAFE and _is_free(port):
            return port
    raise RuntimeError(f"no free loopback port left in {_ports}")
