"""The CPU of a server and of every process it started, read from /proc (Linux).

A process's children are listed per thread (``/proc/PID/task/TID/children``): a child started
from a worker thread (Sightline's store process) is missing from the main thread's list, so the
tree is walked through every task of every process, down to grandchildren. Each process is named
by its role: ``server`` (the root), ``writer`` (ingest's writer process), ``store`` (the process
holding the analytics store's file open), ``tracker`` (multiprocessing's resource tracker) and
``other`` (anything else: the recordings decoder, a child of a child).
"""

from __future__ import annotations

import os
from pathlib import Path

ROLES = ("server", "writer", "store", "tracker", "other")


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``, found through the children of each of their threads."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:  # ended meanwhile
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            for child in children:
                if child not in found:
                    found.append(child)
                    pending.append(child)
    return found


def role_of(pid: int) -> str:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
        if b"sightline.ingest.writer_process" in command:
            return "writer"
        if b"resource_tracker" in command:
            return "tracker"
        files = [os.readlink(f) for f in Path(f"/proc/{pid}/fd").iterdir()]
    except OSError:
        return "other"
    return "store" if any(f.endswith("store.duckdb") for f in files) else "other"


def ticks(pid: int) -> int | None:
    """User and system CPU of every thread of the process, in clock ticks (None once it ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12])  # utime, stime


class Tree:
    """The processes of one server, by role; ``cpu()`` reads each role's CPU seconds now.

    Roles are named once a process is seen (``refresh()``), since the store process names itself
    only by the file it opens. A process that ended counts with its last reading: what it spent
    after that is lost (the servers measured here keep their processes for their whole life).
    """

    def __init__(self, root: int) -> None:
        self.root = root
        self.roles: dict[int, str] = {root: "server"}
        self.last: dict[int, int] = {}

    def refresh(self) -> None:
        for pid in descendants(self.root):
            if self.roles.get(pid, "other") == "other":
                self.roles[pid] = role_of(pid)

    def cpu(self) -> dict[str, float]:
        self.refresh()
        per_tick = 1 / os.sysconf("SC_CLK_TCK")
        out = dict.fromkeys(ROLES, 0.0)
        for pid, role in self.roles.items():
            now = ticks(pid)
            if now is not None:
                self.last[pid] = now
            out[role] += self.last.get(pid, 0) * per_tick
        return out


def resident(tree: Tree) -> dict[str, int]:
    """Resident memory of each role's processes now, in MiB (VmRSS)."""
    tree.refresh()
    out = dict.fromkeys(ROLES, 0)
    for pid, role in tree.roles.items():
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        kib = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        out[role] += kib // 1024
    return out


def spent(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """CPU seconds per role between two readings, and ``total``."""
    out = {role: after[role] - before.get(role, 0.0) for role in after}
    out["total"] = sum(out.values())
    return out
