"""What each test module costs the run: its wall time and the CPU of its worker and their children.

The suite must stay under 20 minutes on CI's two cores, where it is bound by CPU, so the figure that
says where the time goes is CPU, not wall: a module's wall time grows with whatever else the
machine runs. Each worker adds up, per module, the wall time and the CPU (``os.times``: the worker's
own user and system time and that of the children it has waited for, so a server started and
stopped by the module counts, with its store and writer processes) spent on the module's tests,
setup and teardown included. A process kept across modules (a package's shared server, a worker's
kept Chromium and its Playwright driver) is charged for what it used while each module ran: at the
end of each module the worker adds up the CPU of its descendants still running (``/proc``), and the
module is charged their growth since the end of the module before (``os.times`` alone counts a
process only once it was reaped, so the module after which a kept Chromium stopped got all of its
CPU). The scheduler (``tests/support/scheduling.py``) orders by wall time.
The controller merges the workers' figures into ``test-artifacts/suite-costs.tsv``, most CPU first,
and names the costliest modules at the end of the run's summary; a copy of one run's file in
``tests/support/suite-costs.tsv`` is what the scheduler reads.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SHOWN = 12  # modules named in the run's summary


@dataclass
class Cost:
    tests: int = 0
    wall: float = 0.0
    cpu: float = 0.0


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def live_cpu(pid: int) -> float:
    """The CPU seconds of ``pid``'s running descendants (each one's own and its reaped children's);
    0 where ``/proc`` does not list children."""
    total = 0.0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0.0
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listed:
                children = [int(c) for c in listed.read().split()]
        except OSError:
            continue
        for child in children:
            try:
                with open(f"/proc/{child}/stat", encoding="ascii", errors="replace") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue  # gone (and reaped, so counted by its parent) since it was listed
            total += sum(int(f) for f in fields[11:15]) / _TICK + live_cpu(child)
    return total


class Recorder:
    """A pytest plugin: one per process (the controller and each xdist worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.costs: dict[str, Cost] = {}
        worker = getattr(config, "workerinput", None)
        self.worker: str | None = worker["workerid"] if worker else None
        self.parts = ARTIFACTS / "suite-costs.parts"
        self.live = 0.0  # the running descendants' CPU at the end of the last module

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        wall, cpu = time.perf_counter(), _cpu()
        yield
        cost = self.costs.setdefault(item.nodeid.split("::", 1)[0], Cost())
        cost.tests += 1
        cost.wall += time.perf_counter() - wall
        cost.cpu += _cpu() - cpu
        if nextitem is None or nextitem.nodeid.split("::", 1)[0] != item.nodeid.split("::", 1)[0]:
            live = live_cpu(os.getpid())
            cost.cpu += live - self.live
            self.live = live

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.worker is None and self.parts.exists():
            for old in self.parts.iterdir():
                old.unlink()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.worker is not None:
            self.parts.mkdir(parents=True, exist_ok=True)
            rows = {name: [c.tests, c.wall, c.cpu] for name, c in self.costs.items()}
            (self.parts / f"{self.worker}.json").write_text(json.dumps(rows))
            return
        merged = self.costs
        if self.parts.exists():
            for part in sorted(self.parts.glob("*.json")):
                for name, (tests, wall, cpu) in json.loads(part.read_text()).items():
                    cost = merged.setdefault(name, Cost())
                    cost.tests, cost.wall, cost.cpu = cost.tests + tests, cost.wall + wall, cost.cpu + cpu
        if not merged:
            return
        ARTIFACTS.mkdir(exist_ok=True)
        lines = ["module\ttests\twall_s\tcpu_s"]
        lines += [f"{n}\t{c.tests}\t{c.wall:.1f}\t{c.cpu:.1f}" for n, c in self.ranked()]
        (ARTIFACTS / "suite-costs.tsv").write_text("\n".join(lines) + "\n")

    def ranked(self) -> list[tuple[str, Cost]]:
        return sorted(self.costs.items(), key=lambda pair: -pair[1].cpu)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.worker is not None or not self.costs:
            return
        total = sum(c.cpu for c in self.costs.values())
        terminalreporter.section(f"costliest modules (CPU of workers and children, {total:.0f} s in all)")
        for name, cost in self.ranked()[:SHOWN]:
            terminalreporter.write_line(
                f"{cost.cpu:7.1f} s CPU {cost.wall:7.1f} s wall {cost.tests:5d} tests  {name}"
            )
        terminalreporter.write_line("every module: test-artifacts/suite-costs.tsv")


def register(config: pytest.Config) -> None:
    if config.option.collectonly:
        return
    config.pluginmanager.register(Recorder(config), "sightline-suite-costs")
